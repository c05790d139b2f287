//! `hotpages -p PID`'s pipeline: which memory of a process is hot, from
//! DAMON (no PMU), where it lives, and whether that is away from the
//! threads that use it. `hotpages` prints what [`observe`] returns;
//! `doctor --pid --measure` runs a short one for `hot-remote-memory`.
//!
//! Leftovers of an earlier run are reaped and DAMON is checked
//! (`probe::damon`), a reaper process is started (`probe::damon_reaper`;
//! the front-end says which program that is, [`ReaperSpec`]), a kdamond of
//! numasleuth's own watches the process (`probe::damon_collect`) from
//! regions cut at its mappings and its program's writable sections
//! (`analyze::hotpages_regions`, `symbols`) and is removed, then the
//! regions are heated and ranked (`analyze::hotpages`), a sample of each
//! hot region's pages is placed with move_pages and pagemap
//! (`probe::damon_collect`), and the regions are named ([`names`]). See
//! docs/hotpages.md.

pub mod names;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::hotpages::{self as judge, Window, HOT_PERCENT};
use numasleuth_analyze::hotpages_regions;
use numasleuth_kernel::pages::{self, PagesError};
use numasleuth_kernel::procfs::process::{read_process_stat, read_threads, ProcessError};
use numasleuth_kernel::{IdList, Root};
use numasleuth_model::hotpages::{HotRegion, HotRemoteRegion, HotpagesRaw, PagePlacement};
use numasleuth_model::process::{thread_nodes, ThreadPlacement};
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;
use numasleuth_probe::damon::{self, DamonError, Session, DEFAULT_ATTRS};
use numasleuth_probe::damon_reaper::{Reaper, ReaperError};
use numasleuth_probe::{damon_claim, damon_collect};
use numasleuth_symbols::{MappedObjects, ProcessObjects};

use crate::limits;
use crate::Observer;
use names::Namer;

/// Hot regions whose pages are placed and named: the hottest, several
/// times what is shown, so ranking by remoteness has a choice.
const MAX_CANDIDATES: usize = 256;
/// Pages asked about per region (all of a smaller one).
const SAMPLE_PAGES: u64 = 256;

/// What `hotpages` asks of one process.
#[derive(Debug, Clone, Copy)]
pub struct HotpagesRequest {
    pub pid: u32,
    /// How long DAMON watches (the stop token may end it sooner).
    pub duration: Duration,
    /// Regions ranked.
    pub top: usize,
}

/// The reaper process [`observe`] starts beside itself, which removes the
/// kdamond if the front-end is killed: `program`, run with `args` and then
/// the claims directory (cli: its own binary, `damon-reaper --claims`).
pub struct ReaperSpec {
    /// The program, or why it could not be found: that error is reported
    /// when the reaper is needed, after DAMON was checked, so a machine
    /// without DAMON says so first.
    pub program: std::io::Result<PathBuf>,
    pub args: Vec<OsString>,
}

/// One observation, judged.
pub struct Observed {
    pub raw: HotpagesRaw,
    pub comm: Option<String>,
    pub thread_nodes: IdList,
    pub ranked: Vec<HotRegion>,
    pub regions_total: usize,
    pub regions_hot: usize,
    /// `hot-remote-memory`, or `hot-memory-unseen` when the window had
    /// nothing to rank.
    pub findings: Vec<Finding>,
    /// The hot regions mostly remote from the threads, in rank order, with
    /// their ranges, nodes and names: what a join step matches a hot cache
    /// line (or any address) against (`HotRemoteRegion::contains`).
    pub hot_remote: Vec<HotRemoteRegion>,
    pub notes: Vec<String>,
}

/// Where claims live: `$NUMASLEUTH_DAMON_CLAIMS` (tests) or /run/numasleuth.
fn claims_dir() -> PathBuf {
    std::env::var_os("NUMASLEUTH_DAMON_CLAIMS").map_or_else(|| PathBuf::from(damon_claim::DEFAULT_DIR), PathBuf::from)
}

/// Watches the process with a kdamond of numasleuth's own for the
/// request's duration (or until `stop`) and judges what it saw;
/// `observer` hears the warnings about an earlier run's kdamond.
pub fn observe(
    root: &Root,
    topology: &Topology,
    request: HotpagesRequest,
    reaper: ReaperSpec,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Observed, HotpagesError> {
    let HotpagesRequest { pid, duration, top } = request;
    limits::duration("DAMON's watch", duration, (limits::DAMON_MIN, limits::SAMPLE_MAX))?;
    limits::count("the regions ranked", top as u64, (1, limits::TOP_MAX))?;
    if !root.is_live() {
        return Err(HotpagesError::NotLive);
    }
    let stat = read_process_stat(root, pid)?;
    if stat.is_kernel_thread() {
        return Err(HotpagesError::KernelThread { pid });
    }
    let claims = claims_dir();
    let mut notes = Vec::new();
    // A kdamond left by a numasleuth that was killed, and not yet reaped.
    match damon_claim::reap(root, &claims) {
        Ok(Some(done)) => observer.progress(&format!("numasleuth: warning: {done}")),
        Ok(None) => {}
        Err(e) => observer.progress(&format!(
            "numasleuth: warning: could not check for a kdamond left by an earlier run: {e}"
        )),
    }
    let admin = damon::admin(root)?;
    damon::check_available(&admin)?;
    let reaper = spawn_reaper(reaper, &claims)?;
    let regions = start_regions(root, pid, &mut notes)?;
    let mut session = Session::start(root, pid, DEFAULT_ATTRS, &regions, claims)?;
    let raw = damon_collect::collect(root, &mut session, duration, stop)?;
    session.stop().map_err(HotpagesError::NotRemoved)?;
    drop(reaper);
    if let Some(why) = &raw.ended_early {
        notes.push(why.clone());
    }
    Ok(judge_run(root, topology, raw, top, stat.comm, notes))
}

/// Why `hotpages` could not watch a process. The texts hold their causes
/// (none is a `source`).
#[derive(Debug, thiserror::Error)]
pub enum HotpagesError {
    #[error("hotpages watches a live process with DAMON; --root names a snapshot")]
    NotLive,
    #[error("process {pid} is a kernel thread: it has no user memory to watch")]
    KernelThread { pid: u32 },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error(transparent)]
    Damon(#[from] DamonError),
    #[error(transparent)]
    OutOfRange(#[from] crate::limits::OutOfRange),
    #[error("the kdamond could not be removed (the reaper, or the next hotpages, will retry): {0}")]
    NotRemoved(DamonError),
    #[error("cannot find numasleuth's own binary: {0}")]
    OwnBinary(std::io::Error),
    #[error(transparent)]
    Reaper(#[from] ReaperError),
}

/// DAMON's initial regions (`analyze::hotpages_regions`): the process's
/// mappings, cut at its program's writable sections (`.data`, `.bss`,
/// `.got`), whose pages start as regions of their own. Half of DAMON's
/// `max_nr_regions`, so it can still split regions at random.
fn start_regions(root: &Root, pid: u32, notes: &mut Vec<String>) -> Result<Vec<(u64, u64)>, ProcessError> {
    let MappedObjects {
        mappings,
        cap_hit,
        objects,
    } = MappedObjects::read(root, pid);
    // Only the maps' own read fails here: the process is gone or not ours.
    let objects = objects?;
    if let Some(hit) = cap_hit {
        notes.push(format!(
            "{hit}: DAMON starts from the first ones and finds the rest itself"
        ));
    }
    let static_data = program_static_data(&objects).unwrap_or_else(|| {
        notes.push(
            "the program's ELF sections were not read: DAMON's regions start from its mappings alone, \
             and a hot global among its static data may take longer to stand out"
                .into(),
        );
        Vec::new()
    });
    let ranges: Vec<(u64, u64)> = mappings.iter().map(|m| (m.start, m.end)).collect();
    Ok(hotpages_regions::initial_regions(
        &ranges,
        &static_data,
        (DEFAULT_ATTRS.max_regions / 2) as usize,
        pages::page_size_bytes(),
    ))
}

/// The run-time ranges of the program's writable sections (`.data`,
/// `.bss`, `.got`, `.data.rel.ro`); `None` when its ELF was not read.
fn program_static_data(objects: &ProcessObjects) -> Option<Vec<(u64, u64)>> {
    let program = objects.main_object()?;
    let spans = program.spans();
    Some(
        spans
            .iter()
            .filter(|s| s.class.is_writable_static())
            .map(|s| (s.start, s.end))
            .collect(),
    )
}

/// Starts the reaper `spec` names for claims in `claims`.
fn spawn_reaper(spec: ReaperSpec, claims: &Path) -> Result<Reaper, HotpagesError> {
    let program = spec.program.map_err(HotpagesError::OwnBinary)?;
    let args = spec.args.iter().map(OsString::as_os_str).chain([claims.as_os_str()]);
    Ok(Reaper::spawn(&program, args)?)
}

fn judge_run(
    root: &Root,
    topology: &Topology,
    raw: HotpagesRaw,
    top: usize,
    comm: String,
    mut notes: Vec<String>,
) -> Observed {
    let pid = raw.pid;
    let threads = match read_threads(root, pid) {
        Ok(threads) => threads,
        Err(e) => {
            notes.push(format!("threads not read ({e}): nothing can be called remote"));
            Vec::new()
        }
    };
    let placements: Vec<ThreadPlacement> = threads
        .iter()
        .map(|t| ThreadPlacement::from_reading(t, topology))
        .collect();
    let nodes = thread_nodes(&placements);
    let tids: Vec<u32> = threads.iter().map(|t| t.stat.tid).collect();
    let regions = judge::heat(&raw.snapshots, &raw.attrs);
    let regions_total = regions.len();
    let regions_hot = regions.iter().filter(|r| r.access_percent >= HOT_PERCENT).count();
    let chosen = judge::candidates(&regions, MAX_CANDIDATES.max(top));
    let namer = Namer::load(root, pid, &tids);
    notes.extend(namer.notes.iter().cloned());
    let page_bytes = pages::page_size_bytes();
    let mut refused = None;
    let mut candidates = Vec::with_capacity(chosen.len());
    for i in chosen {
        let mut region = regions[i].clone();
        // Named first: the score weighs read-only memory half.
        region.name = Some(namer.name(region.start, region.end));
        match place(root, pid, &region, page_bytes, &namer) {
            Ok(placement) => judge::place(&mut region, placement, &nodes),
            Err(e) => {
                refused.get_or_insert(e);
            }
        }
        candidates.push(region);
    }
    if let Some(e) = refused {
        notes.push(format!("pages not placed: move_pages query: {e}"));
    }
    let ranked = judge::rank(candidates, top);
    let mut findings = judge::findings(&ranked, &nodes, pid);
    let window = Window {
        pid,
        ran_s: raw.span.ran_s,
        snapshots: raw.snapshots.iter().filter(|s| !s.regions.is_empty()).count(),
    };
    findings.extend(judge::unseen(&regions, window));
    let hot_remote = judge::hot_remote_regions(&ranked, &nodes);
    Observed {
        raw,
        comm: Some(comm),
        thread_nodes: nodes,
        ranked,
        regions_total,
        regions_hot,
        findings,
        hot_remote,
        notes,
    }
}

/// Where a sample of the region's pages lives.
fn place(
    root: &Root,
    pid: u32,
    region: &HotRegion,
    page_bytes: u64,
    namer: &Namer,
) -> Result<PagePlacement, PagesError> {
    let addresses = judge::sample_addresses(region.start, region.end, page_bytes, SAMPLE_PAGES);
    damon_collect::place_pages(root, pid, &addresses, page_bytes, |a| namer.is_mapped(a))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// A global in this test binary's .bss.
    static HOT: AtomicU64 = AtomicU64::new(0);

    #[test]
    fn this_process_starts_with_its_globals_page_as_a_region_of_its_own() {
        HOT.fetch_add(1, Ordering::Relaxed);
        let root = Root::live();
        let pid = std::process::id();
        let address = &HOT as *const AtomicU64 as u64;
        // The sections come from this binary's ELF, and one holds the global.
        let objects = ProcessObjects::load(&root, pid).unwrap();
        let sections = program_static_data(&objects).expect("the test binary's ELF is read");
        assert!(
            sections.iter().any(|(s, e)| *s <= address && address < *e),
            "{address:#x} in none of {sections:x?}"
        );
        let mut notes = Vec::new();
        let regions = start_regions(&root, pid, &mut notes).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert!(regions.len() <= (DEFAULT_ATTRS.max_regions / 2) as usize);
        assert!(regions.windows(2).all(|w| w[0].1 <= w[1].0));
        let page = pages::page_size_bytes();
        let first = address / page * page;
        assert!(regions.contains(&(first, first + page)), "{regions:x?}");
    }

    #[test]
    fn the_reaper_runs_its_program_with_its_args_then_the_claims_directory() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("args");
        // `sh -c SCRIPT NAME CLAIMS`: the script sees the claims as $1.
        let script = format!("printf '%s|%s' \"$0\" \"$1\" > '{}'", out.display());
        let spec = ReaperSpec {
            program: Ok(PathBuf::from("sh")),
            args: vec!["-c".into(), script.into(), "damon-reaper".into()],
        };
        // Dropping the reaper closes its stdin and waits for it.
        let Ok(reaper) = spawn_reaper(spec, Path::new("/claims/dir")) else {
            panic!("sh did not start");
        };
        drop(reaper);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "damon-reaper|/claims/dir");
    }

    #[test]
    fn a_program_not_found_is_said_as_before() {
        let spec = ReaperSpec {
            program: Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
            args: Vec::new(),
        };
        let Err(e) = spawn_reaper(spec, Path::new("/claims")) else {
            panic!("a reaper started without a program");
        };
        assert_eq!(
            format!("{e:#}"),
            "cannot find numasleuth's own binary: entity not found"
        );
    }
}
