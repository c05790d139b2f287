//! `bisect PID --metric-cmd CMD (--section NAME | --range A-B)`'s
//! pipeline: which page's placement changes the workload's rate, found by
//! moving halves of the candidate pages to the other node and back.
//!
//! The pages come from [`page_targets::set_up`] (as for `move`), the
//! search is `analyze::bisect`, the moves go through a journalled
//! `change::PageSession` and the readings through `measure::metric_series`
//! ([`live`]); the symbols on the culprit page come from the process's ELF
//! objects. [`run`] returns the document `report` renders with how the
//! search ended ([`Bisected::ended`]), which the front-end raises as an
//! error once the document is shown.

mod error;
mod live;
mod record;

use std::path::PathBuf;
use std::time::Duration;

use numasleuth_analyze::bisect::document::BisectDocument;
use numasleuth_analyze::bisect::{self, Candidates, Readings};
use numasleuth_analyze::runs::metric::first_number;
use numasleuth_change::{Journal, JournalKey, MachineIdentity, PageSession};
use numasleuth_kernel::Root;
use numasleuth_measure::metric_series::read_metric;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;

use crate::limits;
use crate::page_targets::{self, Asked, PageSet};
pub use error::BisectStartError;
pub use live::SearchStop;
use live::{culprits, Live};
pub use record::BisectError;

/// What `bisect` asks: the pages (`asked`; its `symbol` is not used), the
/// metric and how to read it, and whether to move anything.
#[derive(Debug, Clone)]
pub struct BisectRequest {
    pub asked: Asked,
    /// A shell command whose output's first number is the workload's rate.
    pub metric_cmd: String,
    pub lower_is_better: bool,
    /// Where the pages go; `None`: the other node, when there are two.
    pub to_node: Option<u32>,
    /// Wait after each move before reading.
    pub settle: Duration,
    /// Readings per step.
    pub rounds: u32,
    /// The smallest relative change of the median that counts.
    pub min_change: f64,
    pub metric_timeout: Duration,
    /// Move pages (through a journal); otherwise only check the metric.
    pub apply: bool,
    /// The journal's path (default: `numasleuth-bisect-PID-SECS.journal.json`).
    pub journal: Option<PathBuf>,
}

/// The search's document, and how it ended: `Ok` only when it finished
/// and every page is home.
pub struct Bisected {
    pub doc: BisectDocument,
    pub ended: Result<(), BisectError>,
}

/// Refuses a snapshot: a snapshot is not a system whose pages can move.
pub fn require_live(root: &Root) -> Result<(), crate::SnapshotRefused> {
    crate::refuse_under_snapshot(root, "bisect")
}

/// The request's values within their limits, before anything is read.
fn check(request: &BisectRequest) -> Result<(), limits::OutOfRange> {
    let chars = request.metric_cmd.chars().count();
    limits::count(
        "the metric command's characters",
        chars,
        (1, limits::METRIC_CMD_MAX_CHARS),
    )?;
    limits::count(
        "the readings per step",
        request.rounds,
        (limits::ROUNDS_MIN, limits::ROUNDS_MAX),
    )?;
    limits::duration(
        "the settle time",
        request.settle,
        (limits::SETTLE_MIN, limits::SETTLE_MAX),
    )?;
    let timeout = (limits::METRIC_TIMEOUT_MIN, limits::METRIC_TIMEOUT_MAX);
    limits::duration("the metric's timeout", request.metric_timeout, timeout)
}

/// Checks the metric (dry run) or runs the search on live pages; `stop`
/// (Ctrl-C) ends the search at its next wait or reading, and every page
/// is brought back before this returns.
pub fn run(
    root: &Root,
    topology: &Topology,
    request: &BisectRequest,
    stop: &Stop,
) -> Result<Bisected, BisectStartError> {
    check(request)?;
    require_live(root)?;
    let mut notes = Vec::new();
    let set = page_targets::set_up(root, &request.asked, "bisect", &mut notes)?;
    let found = bisect::candidates(
        &set.addresses,
        &set.states,
        topology.memory_nodes().ids(),
        request.to_node,
    )?;
    let mut doc = document(request, &set, &found, notes);
    if found.addresses.is_empty() {
        return Err(BisectStartError::NothingToMove {
            pages: set.addresses.len(),
            left_out: record::describe_left_out(&found),
        });
    }
    if !request.apply {
        // The dry run proves the metric command works before anything moves.
        let never = Stop::new();
        let value = read_metric(&request.metric_cmd, request.metric_timeout, first_number, &never)
            .map_err(|e| BisectStartError::Metric(SearchStop::from(e)))?;
        doc.baseline = Readings::new(vec![value]);
        return Ok(Bisected { doc, ended: Ok(()) });
    }
    search(root, request, &set, &found, doc, stop)
}

/// The document before any reading: what was asked and which pages take
/// part.
fn document(request: &BisectRequest, set: &PageSet, found: &Candidates, notes: Vec<String>) -> BisectDocument {
    BisectDocument {
        pid: request.asked.pid,
        comm: set.comm.clone(),
        targets: set.targets.clone(),
        metric_cmd: request.metric_cmd.clone(),
        lower_is_better: request.lower_is_better,
        settle_ms: request.settle.as_millis() as u64,
        rounds: request.rounds,
        min_change: request.min_change,
        batches_max: bisect::BATCHES_MAX,
        page_bytes: set.page_bytes,
        candidate_pages: found.addresses.len() as u64,
        left_out: found.left_out.clone(),
        applied: request.apply,
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
    }
}

/// The search on live pages, through a journal begun before the first
/// move, and the restore after it however it ended.
fn search(
    root: &Root,
    request: &BisectRequest,
    set: &PageSet,
    found: &Candidates,
    mut doc: BisectDocument,
    stop: &Stop,
) -> Result<Bisected, BisectStartError> {
    let pid = request.asked.pid;
    // Symbols are read before the first move: the culprit is named even
    // if the process exits during the search.
    let objects = numasleuth_symbols::ProcessObjects::load(root, pid).ok();
    let path = request
        .journal
        .clone()
        .unwrap_or_else(|| format!("numasleuth-bisect-{pid}-{}.journal.json", record::unix_now_s()).into());
    let journal = Journal::pages(
        MachineIdentity::read(root),
        record::unix_now_s(),
        record::page_moves(found, pid, set.start_time, doc.page_bytes),
    );
    let key = JournalKey::for_this_user().map_err(|e| BisectStartError::NoKey { error: Box::new(e) })?;
    let session = PageSession::begin(root, journal, &path, &key).map_err(|e| BisectStartError::Begin {
        pid,
        error: Box::new(e),
    })?;
    let mut live = Live {
        root,
        session,
        addresses: &found.addresses,
        metric_cmd: &request.metric_cmd,
        metric_timeout: request.metric_timeout,
        settle: request.settle,
        rounds: request.rounds,
        sets_moved: 0,
        interrupt: stop.clone(),
        probe: None,
    };
    let outcome = bisect::bisect(&mut live, found.addresses.len(), request.min_change);
    let journal_shown = live.session.journal_path().display().to_string();
    doc.sets_moved = live.sets_moved;
    let (search, halted) = match outcome {
        Ok(search) => (search, None),
        Err(stopped) => (stopped.search, Some(stopped.error)),
    };
    record::search(&mut doc, &search, found);
    record::noise(&mut doc, &search, live.probe, request.min_change);
    if let (Some(verdict), Some(objects)) = (&search.verdict, &objects) {
        doc.culprit_pages = culprits(verdict, found, objects, doc.page_bytes);
    }
    let finished = live.session.finish(root);
    match &finished {
        Ok(restored) => record::restore(&mut doc, restored),
        Err(_) => {
            doc.restored = false;
            doc.journal = Some(journal_shown.clone());
        }
    }
    if let Some(halted) = &halted {
        doc.stopped = Some(halted.to_string());
    }
    let ended = record::ended(halted, finished, &journal_shown, pid);
    Ok(Bisected { doc, ended })
}
