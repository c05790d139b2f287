//! `numasleuth bisect PID --metric-cmd CMD (--section NAME | --range A-B)`:
//! which page's placement changes the workload's rate, found by moving
//! halves of the candidate pages to the other node and back.
//!
//! Wiring only: the pages come from `page_targets` (as for `move`), the
//! search is `analyze::bisect`, the moves go through a journalled
//! `change::PageSession`, readings through `measure::shell_metric`, and
//! the symbols on the culprit page from the process's ELF objects.

use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::bisect::{self, Candidates, Readings, Search, Verdict};
use numasleuth_analyze::page_move;
use numasleuth_change::{ChangeError, Journal, JournalKey, MachineIdentity, PageMove, PageSession, Restored};
use numasleuth_kernel::pages;
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
use numasleuth_report::bisect_json::{BisectDocument, ReadingsJson, RestoreJson, StepJson, SCHEMA};
use numasleuth_report::bisect_text;

use super::bisect_args::BisectArgs;
use super::bisect_live::{culprits, Live, Stop};
use super::output::Plan;
use super::page_targets::{mapped, residencies, targets, Asked};
use numasleuth_analyze::bisect::MetricPeriod;
use numasleuth_analyze::runs::metric::first_number;
use numasleuth_measure::metric_series::read_metric;
use numasleuth_report::export::TextJson;

/// Nodes a page can live on: those with memory.
fn memory_nodes(root: &Root) -> anyhow::Result<Vec<u32>> {
    let topology = super::topology(root)?;
    Ok(topology
        .nodes
        .iter()
        .filter(|n| n.may_hold_memory())
        .map(|n| n.id)
        .collect())
}

/// The journal's runs: consecutive candidate pages with the same two nodes.
fn page_moves(found: &Candidates, pid: u32, start_time: u64, page_bytes: u64) -> Vec<PageMove> {
    let mut moves: Vec<PageMove> = Vec::new();
    for (i, &address) in found.addresses.iter().enumerate() {
        let (from_node, to_node) = (found.home[i], found.away[i]);
        if let Some(last) = moves.last_mut() {
            let next = last.address + last.pages * page_bytes;
            if last.from_node == from_node && last.to_node == to_node && next == address {
                last.pages += 1;
                continue;
            }
        }
        moves.push(PageMove {
            pid,
            pid_start_time: start_time,
            address,
            pages: 1,
            page_bytes,
            from_node,
            to_node,
        });
    }
    moves
}

fn unix_now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn record_search(doc: &mut BisectDocument, search: &Search, found: &Candidates) {
    doc.baseline = search.baseline.as_ref().map(ReadingsJson::from);
    doc.steps = search
        .steps
        .iter()
        .map(|s| StepJson::new(s, &found.addresses))
        .collect();
    doc.verdict = search.verdict.as_ref().map(Verdict::kind);
    doc.notes.extend(search.notes.iter().cloned());
}

/// How far apart the readings were, and whether they look quantised.
fn record_noise(doc: &mut BisectDocument, search: &Search, probe: Option<MetricPeriod>, args: &BisectArgs) {
    let Some(probe) = probe else { return };
    doc.metric_period_ms = probe.period.map(|p| p.as_millis() as u64);
    doc.reading_spacing_ms = Some(probe.spacing().as_millis() as u64);
    doc.notes.push(match probe.period {
        Some(period) => format!(
            "readings were taken {} ms apart: the metric's value changed every {} ms (median) over {} readings while \
             the baseline settled",
            probe.spacing().as_millis(),
            period.as_millis(),
            probe.readings
        ),
        None => format!(
            "the metric's period could not be timed: its value changed fewer than twice in {} readings over {} ms \
             of the baseline's --settle, so readings were taken back to back (a longer --settle times it)",
            probe.readings,
            probe.over.as_millis()
        ),
    });
    let sets = search.baseline.iter().chain(search.steps.iter().map(|s| &s.readings));
    doc.notes.extend(bisect::quantised(sets, args.min_change));
}

fn record_restore(doc: &mut BisectDocument, restored: &Restored) {
    doc.restored = restored.still_away == 0 && restored.elsewhere == 0;
    doc.journal = restored.journal_kept.clone();
    doc.restore = Some(RestoreJson {
        pages: restored.pages,
        home: restored.home,
        sent_home_at_end: restored.sent_home,
        still_away: restored.still_away,
        elsewhere: restored.elsewhere,
    });
}

fn print(root: &Root, doc: &BisectDocument, outputs: &Plan) -> anyhow::Result<()> {
    super::output::emit(
        root,
        outputs,
        &TextJson::new(doc, |layout| bisect_text::render(doc, layout)),
    )
}

pub fn run(root: &Root, args: &BisectArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    super::refuse_under_snapshot(root, "bisect")?;
    let pid = args.pid();
    let stat = read_process_stat(root, pid)?;
    if stat.is_kernel_thread() {
        bail!("process {pid} is a kernel thread: it has no user memory to bisect");
    }
    let Some(start_time) = stat.start_time_ticks else {
        bail!("/proc/{pid}/stat has no start time: cannot tie a journal to this process");
    };
    let asked = Asked {
        pid,
        range: args.range,
        symbol: None,
        section: args.section.as_deref(),
        object: args.object.as_deref(),
    };
    let targets = targets(root, &asked)?;
    let ranges: Vec<_> = targets.iter().map(|(_, r)| r.clone()).collect();
    let page_bytes = pages::page_size_bytes();
    let mapped = mapped(root, pid, &ranges, page_bytes)?;
    if mapped.parts.is_empty() {
        bail!("process {pid} maps nothing in the pages asked for (see /proc/{pid}/maps)");
    }
    let addresses = page_move::pages_of(&mapped.parts, page_bytes);
    let mut notes = Vec::new();
    let states = residencies(root, pid, &addresses, &mapped.vmas, &mut notes)?;
    let found = bisect::candidates(&addresses, &states, &memory_nodes(root)?, args.to_node)?;
    let mut doc = BisectDocument {
        schema: SCHEMA,
        pid,
        comm: stat.comm.clone(),
        targets: targets.into_iter().map(|(t, _)| t).collect(),
        metric_cmd: args.metric_cmd.clone(),
        lower_is_better: args.lower_is_better,
        settle_ms: args.settle.as_millis() as u64,
        rounds: args.rounds,
        min_change: args.min_change,
        batches_max: bisect::BATCHES_MAX,
        page_bytes,
        candidate_pages: found.addresses.len() as u64,
        left_out: found.left_out.clone(),
        applied: args.apply,
        baseline: None,
        steps: Vec::new(),
        verdict: None,
        culprit_pages: Vec::new(),
        restored: true,
        restore: None,
        journal: None,
        stopped: None,
        sets_moved: 0,
        metric_period_ms: None,
        reading_spacing_ms: None,
        notes,
    };
    if found.addresses.is_empty() {
        bail!(
            "none of the {} page(s) asked for can be moved ({}): nothing to bisect",
            addresses.len(),
            describe_left_out(&found)
        );
    }
    if !args.apply {
        // The dry run proves the metric command works before anything moves.
        let never = numasleuth_model::stop::Stop::new();
        let value = read_metric(&args.metric_cmd, args.metric_timeout, first_number, &never)
            .map_err(|e| Stop::from(e).into_error())?;
        doc.baseline = Readings::new(vec![value]).as_ref().map(ReadingsJson::from);
        print(root, &doc, &outputs)?;
        return Ok(ExitCode::SUCCESS);
    }
    apply(root, args, &outputs, &found, start_time, doc)
}

fn describe_left_out(found: &Candidates) -> String {
    let parts: Vec<String> = found.left_out.iter().map(|(why, n)| format!("{n} {why}")).collect();
    parts.join(", ")
}

fn apply(
    root: &Root,
    args: &BisectArgs,
    outputs: &Plan,
    found: &Candidates,
    start_time: u64,
    mut doc: BisectDocument,
) -> anyhow::Result<ExitCode> {
    let pid = args.pid();
    // Symbols are read before the first move: the culprit is named even
    // if the process exits during the search.
    let objects = numasleuth_symbols::ProcessObjects::load(root, pid).ok();
    let path = args
        .journal
        .clone()
        .unwrap_or_else(|| format!("numasleuth-bisect-{pid}-{}.journal.json", unix_now_s()).into());
    let journal = Journal::pages(
        MachineIdentity::read(root),
        unix_now_s(),
        page_moves(found, pid, start_time, doc.page_bytes),
    );
    let key = JournalKey::for_this_user().context("cannot seal a journal, so nothing was moved")?;
    let session = PageSession::begin(root, journal, &path, &key)
        .with_context(|| format!("cannot start moving the pages of process {pid}"))?;
    let interrupt = super::stop_signal::stop_on_signals_until_undone();
    let mut live = Live {
        root,
        session,
        addresses: &found.addresses,
        metric_cmd: &args.metric_cmd,
        metric_timeout: args.metric_timeout,
        settle: args.settle,
        rounds: args.rounds,
        sets_moved: 0,
        interrupt,
        probe: None,
    };
    let outcome = bisect::bisect(&mut live, found.addresses.len(), args.min_change);
    let journal_shown = live.session.journal_path().display().to_string();
    doc.sets_moved = live.sets_moved;
    let (search, stop) = match outcome {
        Ok(search) => (search, None),
        Err(stopped) => (stopped.search, Some(stopped.error)),
    };
    record_search(&mut doc, &search, found);
    record_noise(&mut doc, &search, live.probe, args);
    if let (Some(verdict), Some(objects)) = (&search.verdict, &objects) {
        doc.culprit_pages = culprits(verdict, found, objects, doc.page_bytes);
    }
    let finished = live.session.finish(root);
    match &finished {
        Ok(restored) => record_restore(&mut doc, restored),
        Err(_) => {
            doc.restored = false;
            doc.journal = Some(journal_shown.clone());
        }
    }
    if let Some(stop) = &stop {
        doc.stopped = Some(stop.to_string());
    }
    print(root, &doc, outputs)?;
    finish_status(stop, finished, &journal_shown, pid)
}

/// The exit: success only when the search ended and every page is home.
fn finish_status(
    stop: Option<Stop>,
    finished: Result<Restored, ChangeError>,
    journal: &str,
    pid: u32,
) -> anyhow::Result<ExitCode> {
    let undo = format!("the journal {journal} is kept: `numasleuth undo {journal}` moves back every page still away");
    match (stop, finished) {
        (None, Ok(r)) if r.still_away == 0 => Ok(ExitCode::SUCCESS),
        (None, Ok(r)) => bail!("{} page(s) could not be moved back; {undo}", r.still_away),
        (Some(stop), Ok(r)) if r.still_away == 0 => bail!("{stop}; every page moved is back where it was"),
        (Some(stop), Ok(r)) => bail!("{stop}; {} page(s) could not be moved back; {undo}", r.still_away),
        (stop, Err(e)) => {
            if matches!(e, ChangeError::ProcessGone { .. } | ChangeError::PidReused { .. }) {
                bail!(
                    "process {pid} exited during the bisection: its pages went with it, so none is left away; the \
                     journal {journal} is kept for the record (`numasleuth undo {journal}` checks, and moves back \
                     any page still away)"
                )
            }
            let why = stop.map_or(String::new(), |s| format!("{s}; "));
            bail!("{why}moving the pages back failed: {e}; {undo}")
        }
    }
}
