//! `watch`: the writes (or accesses) to one address, counted with a
//! hardware watchpoint on every thread of a process, and the code that
//! makes them. The symbol is resolved to a run-time address (`symbols`),
//! an aligned length chosen (`analyze`), the watch run (`probe`), the
//! sampled instruction addresses named (`symbols`) and ranked (`analyze`).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use numasleuth_analyze::watch::{choose_len, len_beyond_object, summarize, LenError, Target, WatchSummary};
use numasleuth_kernel::procfs::process::{mapping_at, read_process_stat, ProcessError};
use numasleuth_kernel::Root;
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_probe::{Access, ProbeError, WatchSpec};
use numasleuth_symbols::{locate_all, ProcessObjects, SymbolError};

use crate::limits::{self, OutOfRange};
use crate::Observer;

/// How often threads started during the watch are looked for.
const RESCAN_MS: u64 = 100;
/// Sample ring buffer per thread: 64 KiB, drained every 10 ms.
const RING_PAGES: usize = 16;

/// x86 reports a data watchpoint after the accessing instruction, so the
/// address looked up is one byte back, inside that instruction; Arm
/// reports the accessing instruction itself.
const IP_BACK_BYTES: u64 = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    1
} else {
    0
};

/// What to watch, as `numasleuth watch` asks for it.
pub struct WatchRequest {
    pub pid: u32,
    /// A symbol (`object` chooses among objects defining it), or `addr`.
    pub symbol: Option<String>,
    pub object: Option<String>,
    pub addr: Option<u64>,
    /// Bytes watched; `None`: chosen from the symbol's size.
    pub len: Option<u64>,
    /// Reads too, not only writes.
    pub rw: bool,
    /// `None`: until the stop.
    pub duration: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("watch needs the live system: a hardware watchpoint cannot be set on a snapshot (--root)")]
    NotLive,
    #[error("process {pid} is a kernel thread: it has no user memory to watch")]
    KernelThread { pid: u32 },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("give --symbol NAME or --addr ADDR")]
    NoTarget,
    #[error(transparent)]
    Symbol(#[from] SymbolError),
    #[error("symbol `{name}` is thread-local: each thread has its own copy; watch one copy with --addr")]
    ThreadLocal { name: String },
    #[error(
        "address {address:#x} is not mapped in process {pid} (no mapping in /proc/{pid}/maps holds it), so \
         nothing can write it; take an address from `numasleuth inspect -p {pid}` or name a --symbol"
    )]
    NotMapped { address: u64, pid: u32 },
    #[error(transparent)]
    Len(#[from] LenError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
}

/// The request's values within their limits, before anything is opened.
fn check(request: &WatchRequest) -> Result<(), OutOfRange> {
    limits::count("the process id", request.pid, (1, limits::PID_MAX))?;
    if let Some(duration) = request.duration {
        limits::duration("the watch duration", duration, (limits::WATCH_MIN, limits::WATCH_MAX))?;
    }
    Ok(())
}

/// What the watch saw, ranked, and how long it ran.
pub struct Watched {
    pub summary: WatchSummary,
    pub span: RunSpan,
}

struct Resolved {
    address: u64,
    size_bytes: Option<u64>,
    symbol: Option<String>,
    object: Option<String>,
    notes: Vec<String>,
}

/// Watches as `request` says, until its duration or `stop`; `observer`
/// hears what is watched and a length that covers more than the symbol.
pub fn watch(root: &Root, request: &WatchRequest, stop: &Stop, observer: &dyn Observer) -> Result<Watched, WatchError> {
    check(request)?;
    if !root.is_live() {
        return Err(WatchError::NotLive);
    }
    let pid = request.pid;
    if read_process_stat(root, pid)?.is_kernel_thread() {
        return Err(WatchError::KernelThread { pid });
    }
    let objects = ProcessObjects::load(root, pid);
    let target = resolve(&objects, request)?;
    let (len_bytes, beyond) = watched_len(root, pid, &target, request.len, observer)?;
    let spec = WatchSpec {
        pid,
        address: target.address,
        len_bytes,
        access: if request.rw { Access::ReadWrite } else { Access::Write },
        duration: request.duration,
        rescan_interval: Duration::from_millis(RESCAN_MS),
        ring_pages: RING_PAGES,
        paranoid: numasleuth_kernel::procfs::settings::perf_event_paranoid(root),
    };
    let shown = target
        .symbol
        .clone()
        .unwrap_or_else(|| format!("{:#x}", target.address));
    observer.progress(&format!(
        "numasleuth: watching {shown} ({len_bytes} byte(s) at {:#x}) in every thread of process {pid} {}…",
        target.address,
        crate::how_long(request.duration)
    ));
    let start = Instant::now();
    let raw = numasleuth_probe::watch(&spec, stop)?;
    let span = RunSpan::timed(start, request.duration, stop);
    let ips: Vec<u64> = raw
        .threads
        .iter()
        .flat_map(|t| &t.ip_hits)
        .map(|h| h.ip)
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    let mut notes = target.notes;
    notes.extend(beyond);
    if let Some(size) = target.size_bytes.filter(|s| *s > len_bytes) {
        notes.push(format!(
            "watching the first {len_bytes} of the {size} bytes of {shown} (a debug register covers at most 8)"
        ));
    }
    let locations = match &objects {
        Ok(objects) if !ips.is_empty() => {
            let (locations, problems) = locate_all(objects, &ips, IP_BACK_BYTES);
            notes.extend(problems);
            locations
        }
        Ok(_) => Vec::new(),
        Err(e) => {
            notes.push(format!("writers not named: {e}"));
            Vec::new()
        }
    };
    let target = Target {
        symbol: target.symbol,
        object: target.object,
    };
    let mut summary = summarize(&raw, &locations, target);
    summary.notes.splice(0..0, notes);
    Ok(Watched { summary, span })
}

fn resolve(objects: &Result<ProcessObjects, ProcessError>, request: &WatchRequest) -> Result<Resolved, WatchError> {
    let Some(name) = &request.symbol else {
        let address = request.addr.ok_or(WatchError::NoTarget)?;
        let object = objects
            .as_ref()
            .ok()
            .and_then(|o| o.object_at(address, address.saturating_add(1)))
            .map(|o| o.path.clone());
        return Ok(Resolved {
            address,
            size_bytes: None,
            symbol: None,
            object,
            notes: Vec::new(),
        });
    };
    let objects = objects.as_ref().map_err(|e| WatchError::Process(e.clone()))?;
    let found = objects.find_symbol(name, request.object.as_deref())?;
    let Some(location) = found.iter().find(|l| l.runtime.is_some()) else {
        return Err(WatchError::ThreadLocal { name: name.clone() });
    };
    let range = location.runtime.clone().unwrap_or_default();
    let mut notes = Vec::new();
    let others: BTreeSet<&str> = found
        .iter()
        .map(|l| l.object.as_str())
        .filter(|o| *o != location.object)
        .collect();
    if !others.is_empty() {
        notes.push(format!(
            "`{name}` is also defined in {}; watching the one in {} (choose with --object)",
            others.into_iter().collect::<Vec<_>>().join(", "),
            location.object
        ));
    }
    Ok(Resolved {
        address: range.start,
        size_bytes: Some(location.symbol.size_bytes),
        symbol: Some(location.symbol.name.clone()),
        object: Some(location.object.clone()),
        notes,
    })
}

/// The watched length for `target` (refused when nothing maps its
/// address), and the warning when `len` covers more than the symbol.
/// A watchpoint on an address no mapping holds would run and count 0
/// writes, which reads as "nobody writes it"; maps that cannot be read
/// leave the answer to perf.
fn watched_len(
    root: &Root,
    pid: u32,
    target: &Resolved,
    asked: Option<u64>,
    observer: &dyn Observer,
) -> Result<(u64, Option<String>), WatchError> {
    if let Ok(None) = mapping_at(root, pid, target.address) {
        return Err(WatchError::NotMapped {
            address: target.address,
            pid,
        });
    }
    let len_bytes = choose_len(target.address, target.size_bytes, asked)?;
    let beyond = len_beyond_object(len_bytes, target.size_bytes);
    if let Some(warning) = &beyond {
        observer.progress(&format!("numasleuth: warning: {warning}"));
    }
    Ok((len_bytes, beyond))
}
