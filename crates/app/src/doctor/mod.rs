//! `doctor -p PID`: the investigation of one process. Each collector
//! returns its observation (the placement model, a short `hotlines`
//! sample, a short `migrations` watch, the node of each hot line's page),
//! and [`judge`] joins them (`analyze::join`), so the report names the
//! cause ("this global, on node 0, written from node 1") before the
//! symptoms it explains. The live probes run side by side within
//! [`BUDGET`], stop early on the stop token (what they saw is judged), and
//! are skipped with the reason under `--quick`, on a snapshot, or for a
//! kernel thread.

pub mod machine;
pub mod measure;

use std::time::Duration;

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::{Diagnosis, Finding};
use numasleuth_analyze::join::{self, Clues, LinePage};
use numasleuth_kernel::procfs::process::{read_process_stat, ProcessError};
use numasleuth_kernel::{pages, Root};
use numasleuth_model::process::ProcessModel;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;

use crate::hotlines::{sample_process, Method, Sampled, Sampling};
use crate::Observer;

/// About how long `doctor -p` watches the process: every probe runs for
/// this, all at once.
pub const BUDGET: Duration = Duration::from_secs(1);

/// The placement findings of `inspect` for the process.
pub const PROCESS_CHECK: CheckId = CheckId::ProcessPlacement;
/// `contended-line` and `false-sharing` from a short `hotlines` sample.
pub const HOTLINES_CHECK: CheckId = CheckId::ProcessCacheLines;
/// `thread-hopping-nodes` and `numa-balancing-migrating` from a short
/// `migrations` observation.
pub const MIGRATIONS_CHECK: CheckId = CheckId::ProcessMigrations;
/// `hot-remote-global` and `hot-remote-line`: the hot lines joined with
/// the nodes of their pages.
pub const JOIN_CHECK: CheckId = CheckId::ProcessHotRemoteLines;

/// What `doctor -p` asks of one process.
#[derive(Debug, Clone, Copy)]
pub struct ProcessRequest {
    pub pid: u32,
    /// Skip the live probes (static checks only).
    pub quick: bool,
}

/// One observation, or why it was not made. `unreadable`: the input is
/// there but could not be read, so no finding is not a clean bill.
pub enum Clue<T> {
    Seen(T),
    Skipped { why: String, unreadable: bool },
}

/// Everything `doctor -p` observed of one process, as each collector
/// returned it: nothing is judged until [`judge`].
pub struct ProcessObservations {
    pub pid: u32,
    pub model: Clue<ProcessModel>,
    pub lines: Clue<Sampled>,
    /// The node of each hot line's page, asked once the sample is in.
    pub pages: Clue<Vec<LinePage>>,
    pub migrations: Clue<Vec<Finding>>,
}

/// Observes the process: its placement model, then the live probes side
/// by side (unless `quick`, a snapshot or a kernel thread says why not),
/// then where the hot lines' pages are.
pub fn observe(
    root: &Root,
    topology: &Topology,
    request: ProcessRequest,
    stop: &Stop,
    observer: &dyn Observer,
) -> ProcessObservations {
    let pid = request.pid;
    let model = match crate::process::model(root, pid, false, topology) {
        Ok(model) => Clue::Seen(model),
        Err(e) => Clue::Skipped {
            why: format!("process {pid}: {e:#}"),
            unreadable: unreadable(&e),
        },
    };
    let (lines, migrations) = match why_no_probes(root, pid, request.quick) {
        Some(why) => (skipped(&why), skipped(&why)),
        None => probes(root, topology, pid, stop, observer),
    };
    let pages = match &lines {
        Clue::Seen(sampled) => line_pages(pid, sampled),
        Clue::Skipped { why, .. } => skipped(why),
    };
    ProcessObservations {
        pid,
        model,
        lines,
        pages,
        migrations,
    }
}

fn skipped<T>(why: &str) -> Clue<T> {
    Clue::Skipped {
        why: why.to_string(),
        unreadable: false,
    }
}

/// Why the live probes cannot run, if they cannot.
fn why_no_probes(root: &Root, pid: u32, quick: bool) -> Option<String> {
    if quick {
        return Some("--quick skips the live probes of the process".into());
    }
    if !root.is_live() {
        return Some("live probes watch the running process; --root names a snapshot".into());
    }
    match read_process_stat(root, pid) {
        Ok(stat) if stat.is_kernel_thread() => Some(format!("process {pid} is a kernel thread")),
        Ok(_) => None,
        Err(e) => Some(format!("process {pid}: {e:#}")),
    }
}

/// The hot lines and the thread moves, watched at once for [`BUDGET`].
fn probes(
    root: &Root,
    topology: &Topology,
    pid: u32,
    stop: &Stop,
    observer: &dyn Observer,
) -> (Clue<Sampled>, Clue<Vec<Finding>>) {
    observer.progress(&format!(
        "numasleuth: watching process {pid} for {:.0} s (cache lines, thread moves)…",
        BUDGET.as_secs_f64()
    ));
    let how = Sampling {
        duration: BUDGET,
        top: 8,
        frequency: 4000,
        method: Method::Auto,
    };
    let quiet = crate::Quiet;
    // A thread the system refuses to start, or one that panics, skips its
    // probe with the reason; the other probe and the report go on.
    let (lines, moves) = std::thread::scope(|scope| {
        let thread = || std::thread::Builder::new().name("doctor-probe".into());
        let lines = thread().spawn_scoped(scope, || sample_process(root, (pid, topology), &how, stop, &quiet));
        let moves = thread().spawn_scoped(scope, || {
            crate::migrations::doctor_findings(root, topology, pid, BUDGET, stop, observer)
        });
        (joined(pid, lines), joined(pid, moves))
    });
    (lines, moves)
}

/// A probe's clue from its thread: what it returned, or why it has none.
fn joined<T, E: std::fmt::Display>(
    pid: u32,
    thread: std::io::Result<std::thread::ScopedJoinHandle<'_, Result<T, E>>>,
) -> Clue<T> {
    match thread.map(|handle| handle.join()) {
        Ok(Ok(result)) => clue(pid, result),
        Ok(Err(_)) => skipped(&format!("process {pid}: the probe failed")),
        Err(e) => skipped(&format!("process {pid}: cannot start the probe's thread: {e}")),
    }
}

/// The errors' texts hold their causes (none is a `source`), so the text
/// is the whole reason.
fn clue<T, E: std::fmt::Display>(pid: u32, result: Result<T, E>) -> Clue<T> {
    match result {
        Ok(seen) => Clue::Seen(seen),
        Err(why) => Clue::Skipped {
            why: format!("process {pid}: {why}"),
            unreadable: false,
        },
    }
}

/// Asks move_pages where the page of each ranked line is (a query: no
/// node is given, nothing moves).
fn line_pages(pid: u32, sampled: &Sampled) -> Clue<Vec<LinePage>> {
    let addresses: Vec<u64> = sampled.lines.iter().map(|l| l.line.address).collect();
    if addresses.is_empty() {
        return Clue::Seen(Vec::new());
    }
    match pages::query(pid, &addresses) {
        Ok(statuses) => Clue::Seen(
            addresses
                .iter()
                .zip(statuses)
                .map(|(&line_address, status)| LinePage {
                    line_address,
                    residency: pages::residency(status, None, true),
                })
                .collect(),
        ),
        Err(e) => Clue::Skipped {
            why: format!("process {pid}: where the hot lines' pages are (move_pages): {e}"),
            unreadable: true,
        },
    }
}

/// Joins the observations and records every check: the cause found by
/// the join ranks before the symptoms it explains, which cite it, and a
/// hot line that follows its hopping threads is handed to the hop.
pub fn judge(observed: &ProcessObservations, topology: &Topology, diagnosis: &mut Diagnosis) {
    let pid = observed.pid;
    let model = match &observed.model {
        Clue::Seen(model) => Some(model),
        Clue::Skipped { .. } => None,
    };
    let mut process = model.map_or_else(Vec::new, |m| numasleuth_analyze::process::findings(m, topology));
    let mut lines = match &observed.lines {
        Clue::Seen(s) => numasleuth_analyze::hotlines::findings(pid, &s.lines, s.tally.accesses(), s.raw.duration_s),
        Clue::Skipped { .. } => Vec::new(),
    };
    let mut moves = match &observed.migrations {
        Clue::Seen(found) => found.clone(),
        Clue::Skipped { .. } => Vec::new(),
    };
    let causes = match (&observed.lines, &observed.pages) {
        (Clue::Seen(s), pages) => {
            let pages = match pages {
                Clue::Seen(p) => p.as_slice(),
                Clue::Skipped { .. } => &[],
            };
            let clues = Clues {
                pid,
                model,
                lines: &s.lines,
                pages,
                accesses: s.tally.accesses(),
                duration_s: s.raw.duration_s,
            };
            join::name_hot_symbols(&mut process, &join::hot_static_symbols(&clues));
            let mut causes = join::hot_remote(&clues);
            join::defer_to_moves(&mut causes, &mut moves, &clues);
            causes
        }
        (Clue::Skipped { .. }, _) => Vec::new(),
    };
    join::cite(&mut process, &causes);
    join::cite(&mut lines, &causes);
    record(diagnosis, PROCESS_CHECK, &observed.model, process);
    record(diagnosis, HOTLINES_CHECK, &observed.lines, lines);
    record(diagnosis, MIGRATIONS_CHECK, &observed.migrations, moves);
    record(diagnosis, JOIN_CHECK, &observed.pages, causes);
}

fn record<T>(diagnosis: &mut Diagnosis, check: CheckId, clue: &Clue<T>, found: Vec<Finding>) {
    match clue {
        Clue::Seen(_) => diagnosis.ran(check, found),
        Clue::Skipped { why, unreadable: true } => diagnosis.skipped_unreadable(check, why.clone()),
        Clue::Skipped { why, .. } => diagnosis.skipped(check, why.clone()),
    }
}

/// A process that is there but cannot be read leaves the check's answer
/// open; one that is gone has nothing to judge.
fn unreadable(error: &ProcessError) -> bool {
    match error {
        ProcessError::PermissionDenied { .. } => true,
        ProcessError::Read(read) => !read.is_not_found(),
        ProcessError::NoSuchProcess { .. } | ProcessError::Exited { .. } => false,
    }
}
