//! Conformance with hwloc's `lstopo` on hwloc's own Linux test captures.
//!
//! `../shared/fixtures/hwloc` (or `$NUMASLEUTH_HWLOC_FIXTURES`) holds the
//! `/proc` and `/sys` trees that hwloc's test suite captured on real machines
//! (`NAME.tar.bz2`), and for most of them what `lstopo` printed for that tree
//! (`NAME.console`, made with the options and environment in `NAME.test`).
//! `lstopo` is an independent, trusted reading of the same files, so for
//! every capture we build our [`Topology`] and check, node by node, that we
//! agree with it on which NUMA nodes exist, which CPUs each serves, how much
//! memory each holds, and the SLIT distances between them.
//!
//! hwloc and numasleuth do not show the same thing in every case, on purpose:
//! hwloc shows what this process may use and where each memory is best used
//! from, numasleuth shows what the kernel says about the whole machine and
//! reports the limits beside it. [`hwloc_view`] turns our model into what
//! `lstopo` would show; each rule there says why we differ. Everything else
//! must match exactly, or be listed in [`ALLOWED_MISMATCHES`] with the reason
//! the difference is deliberate.
//!
//! The captures are read from the shared folder at test time and never
//! copied into this repository; where the folder is absent, as on a user's
//! machine, the test says so and passes. Each is unpacked with the system
//! `tar -xjf` into its own temporary folder. The summary, every mismatch and
//! the time taken are printed past the harness's output capture; set
//! `NUMASLEUTH_HWLOC_VERBOSE=1` to also see which hwloc rule shaped each
//! expectation.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use numasleuth_kernel::gather::{read_topology, TopologyReadings};
use numasleuth_kernel::Root;
use numasleuth_model::{Node, Topology};

const FIXTURES_ENV: &str = "NUMASLEUTH_HWLOC_FIXTURES";

/// Per-capture notes (which hwloc rules applied) are printed when this is set.
const VERBOSE_ENV: &str = "NUMASLEUTH_HWLOC_VERBOSE";

/// A mismatch that is a deliberate difference, not a bug, and that cannot
/// be written as a rule in [`hwloc_view`] because it hinges on data our
/// model rightly does not carry. A bug never belongs here.
struct Allowed {
    capture: &'static str,
    /// The mismatch's field, exactly (`node ids`, `node 3 cpus`, ...).
    field: &'static str,
    /// Text the mismatch's detail must contain, so that the entry cannot
    /// hide a different difference in the same field.
    detail: &'static str,
    reason: &'static str,
}

/// Why nvidiagpunumanodes differs: its task sits in cgroup v1 `/jjh`, whose
/// configured `cpuset.cpus`/`cpuset.mems` are 0-175 and 0,8,250-255 while the
/// kernel's `cpuset.effective_cpus`/`effective_mems` are 0-87 and 0. hwloc
/// reads the configured files on v1; numasleuth reads the effective ones,
/// because they are what the kernel enforces (and what v2 calls
/// `cpuset.cpus.effective`). So hwloc shows CPUs 88-103 and node 8, which the
/// task cannot use, and we report them as outside the cgroup.
const V1_EFFECTIVE: &str = "cgroup v1: numasleuth restricts by cpuset.effective_cpus/effective_mems (0-87, node 0), \
    which the kernel enforces; hwloc by the configured cpuset.cpus/mems (0-175, nodes 0,8,250-255)";

const ALLOWED_MISMATCHES: &[Allowed] = &[
    Allowed {
        capture: "nvidiagpunumanodes",
        field: "PUs",
        detail: "hwloc shows only hwloc {88-103}, we expect only ours -",
        reason: V1_EFFECTIVE,
    },
    Allowed {
        capture: "nvidiagpunumanodes",
        field: "node ids",
        detail: "hwloc shows [0, 8], we expect [0]; we expected hwloc to hide node 8: outside the cgroup",
        reason: V1_EFFECTIVE,
    },
];

/// Why captures fail to build today, found by investigation: (capture, or ""
/// for any, text the error contains, diagnosis). These are numasleuth bugs, not allowed
/// differences: a listed capture still fails the test. The diagnosis is only
/// printed beside the error, and an entry that no longer matches is reported
/// as stale.
const BUILD_DIAGNOSES: &[(&str, &str, &str)] = &[
    (
        "",
        "\\n\\u{0}` is not a CPU/node list entry",
        "the captured kernel wrote this list as `...\\n\\0` (node state files on older kernels, \
         cpulist/cpumap on 5.15-rc); hwloc stops at the NUL, IdList::parse rejects it",
    ),
    (
        "128ia64-17n4s2c",
        "cpu0/online: malformed: `` is not 0 or 1",
        "every cpuN/online in this capture is empty and there is no cpu/online; hwloc counts an unreadable \
         per-CPU online file as online, read_cpu fails the whole read",
    ),
    (
        "2pa-pcidomain32bits",
        "/sys/class/net/lo: not found",
        "sys/class/net/lo links to devices/virtual/net/lo, which the capture lacks (live, an interface can go \
         between listing and resolving); read_devices lets that NotFound abort read_topology",
    ),
    (
        "offline-cpu0-node0",
        "node1/distance: malformed: 2 entries but 1 nodes",
        "node 0 was taken offline (node/online 1, possible 0-1) but node1/distance still lists both \
         possible nodes (`21 10`); hwloc ignores distances with one node and shows the machine, Topology::build \
         refuses the whole topology",
    ),
];

#[test]
fn numa_nodes_match_lstopo_on_hwloc_captures() {
    let started = Instant::now();
    let Some(dir) = fixtures_dir() else {
        say("SKIPPED: ../shared/fixtures/hwloc not found");
        return;
    };
    let captures = list_captures(&dir);
    assert!(!captures.is_empty(), "{}: no NAME.tar.bz2 captures", dir.display());

    let outcomes = run_all(&captures);

    let mut build_failures = Vec::new();
    let mut checked = Checked::default();
    let mut with_allowed = 0;
    let mut compared = 0;
    let mut matched = 0;
    let mut failing = Vec::new();
    let mut allowed_used = BTreeSet::new();
    let verbose = std::env::var_os(VERBOSE_ENV).is_some();
    let mut report = Vec::new();
    for (capture, outcome) in captures.iter().zip(&outcomes) {
        let comparison = match outcome {
            Outcome::BuildFailed(why) => {
                build_failures.push(format!("{}: {}", capture.name, visible(why)));
                continue;
            }
            Outcome::Built(None) => continue,
            Outcome::Built(Some(comparison)) => comparison,
        };
        compared += 1;
        checked.nodes += comparison.checked.nodes;
        checked.memories += comparison.checked.memories;
        checked.distances += comparison.checked.distances;
        if verbose {
            for note in &comparison.notes {
                report.push(format!("  note {}: {note}", capture.name));
            }
        }
        let mut unexplained = 0;
        for mismatch in &comparison.mismatches {
            let allowed = ALLOWED_MISMATCHES.iter().position(|a| {
                a.capture == capture.name && a.field == mismatch.field && mismatch.detail.contains(a.detail)
            });
            match allowed {
                Some(index) => {
                    allowed_used.insert(index);
                    report.push(format!(
                        "  allowed {}: {}: {} (deliberate: {})",
                        capture.name, mismatch.field, mismatch.detail, ALLOWED_MISMATCHES[index].reason
                    ));
                }
                None => {
                    unexplained += 1;
                    report.push(format!(
                        "  MISMATCH {}: {}: {}",
                        capture.name, mismatch.field, mismatch.detail
                    ));
                }
            }
        }
        if unexplained == 0 {
            matched += 1;
            with_allowed += usize::from(!comparison.mismatches.is_empty());
        } else {
            failing.push(capture.name.clone());
        }
    }
    for (index, allowed) in ALLOWED_MISMATCHES.iter().enumerate() {
        let compared_it = captures
            .iter()
            .zip(&outcomes)
            .any(|(capture, outcome)| capture.name == allowed.capture && matches!(outcome, Outcome::Built(Some(_))));
        if compared_it && !allowed_used.contains(&index) {
            report.push(format!(
                "  stale allow-list entry {}: {}: nothing differs any more, remove it",
                allowed.capture, allowed.field
            ));
        }
    }

    say(&format!(
        "hwloc conformance: {} captures, {} built, {} failed to build",
        captures.len(),
        captures.len() - build_failures.len(),
        build_failures.len()
    ));
    let mut diagnoses_used = BTreeSet::new();
    for failure in &build_failures {
        say(&format!("  BUILD FAILED {failure}"));
        let diagnosis = BUILD_DIAGNOSES.iter().position(|(name, error, _)| {
            (name.is_empty() || failure.starts_with(&format!("{name}: "))) && failure.contains(error)
        });
        if let Some(index) = diagnosis {
            diagnoses_used.insert(index);
            say(&format!("    why: {}", BUILD_DIAGNOSES[index].2));
        }
    }
    for (index, (name, error, _)) in BUILD_DIAGNOSES.iter().enumerate() {
        if !diagnoses_used.contains(&index) {
            say(&format!(
                "  stale build diagnosis `{name}` / `{error}`: no failure matches it, remove it"
            ));
        }
    }
    let consoles = captures.iter().filter(|c| c.console.is_some()).count();
    say(&format!(
        "hwloc conformance: compared {compared} captures, {matched} matched ({} of them through the allow-list; \
         {} of {consoles} captures with a .console could not be compared; {} nodes, {} memory sizes, \
         {} distances checked)",
        with_allowed,
        consoles - compared,
        checked.nodes,
        checked.memories,
        checked.distances
    ));
    for line in &report {
        say(line);
    }
    say(&format!(
        "hwloc conformance: took {:.2}s",
        started.elapsed().as_secs_f64()
    ));

    assert!(
        build_failures.is_empty() && failing.is_empty(),
        "{} capture(s) failed to build and {} differ from lstopo {:?}; see the BUILD FAILED and MISMATCH lines",
        build_failures.len(),
        failing.len(),
        failing
    );
}

/// Writes past the test harness's output capture, so the skip notice and the
/// summary show on a plain `cargo test`.
fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Error text with its control characters spelled out: kernel files quoted
/// in errors may end in `\n\0`, which would otherwise break or vanish.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os(FIXTURES_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/hwloc"),
    };
    dir.is_dir().then_some(dir)
}

// ---------------------------------------------------------------------------
// Captures and running them
// ---------------------------------------------------------------------------

struct Capture {
    name: String,
    tarball: PathBuf,
    console: Option<PathBuf>,
    test: Option<PathBuf>,
}

fn list_captures(dir: &Path) -> Vec<Capture> {
    let mut captures: Vec<Capture> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let file_name = entry.ok()?.file_name().to_string_lossy().into_owned();
            let name = file_name.strip_suffix(".tar.bz2")?.to_string();
            let sibling = |ext: &str| Some(dir.join(format!("{name}.{ext}"))).filter(|p| p.is_file());
            Some(Capture {
                tarball: dir.join(&file_name),
                console: sibling("console"),
                test: sibling("test"),
                name,
            })
        })
        .collect();
    captures.sort_by(|a, b| a.name.cmp(&b.name));
    captures
}

enum Outcome {
    BuildFailed(String),
    /// `None` when there is no `.console` to compare with.
    Built(Option<Comparison>),
}

#[derive(Default)]
struct Comparison {
    mismatches: Vec<Mismatch>,
    /// Which hwloc rules changed the expected view, for the verbose report.
    notes: Vec<String>,
    checked: Checked,
}

/// How much was compared, so a summary of "all matched" cannot hide an
/// empty comparison.
#[derive(Debug, Default, Clone, Copy)]
struct Checked {
    nodes: usize,
    memories: usize,
    distances: usize,
}

struct Mismatch {
    field: String,
    detail: String,
}

/// Runs the captures on a few threads; unpacking and reading them is mostly
/// file-system work, which overlaps well.
fn run_all(captures: &[Capture]) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let results: Mutex<BTreeMap<usize, Outcome>> = Mutex::new(BTreeMap::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(capture) = captures.get(index) else {
                    break;
                };
                let outcome = run_capture(capture);
                results.lock().unwrap().insert(index, outcome);
            });
        }
    });
    results.into_inner().unwrap().into_values().collect()
}

fn run_capture(capture: &Capture) -> Outcome {
    let (_scratch, root_dir) = match unpack(&capture.tarball) {
        Ok(unpacked) => unpacked,
        Err(why) => return Outcome::BuildFailed(why),
    };
    let (readings, topology) = match build(&root_dir) {
        Ok(built) => built,
        Err(why) => return Outcome::BuildFailed(why),
    };
    let Some(console_path) = &capture.console else {
        return Outcome::Built(None);
    };
    let mut comparison = Comparison::default();
    let knobs = match &capture.test {
        Some(path) => match fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_test(&t))
        {
            Ok(knobs) => knobs,
            Err(why) => {
                comparison.mismatches.push(Mismatch {
                    field: "test file".into(),
                    detail: format!("{}: {why}", path.display()),
                });
                return Outcome::Built(Some(comparison));
            }
        },
        None => Knobs::default(),
    };
    let console = match fs::read_to_string(console_path)
        .map_err(|e| e.to_string())
        .and_then(|t| parse_console(&t))
    {
        Ok(console) => console,
        Err(why) => {
            comparison.mismatches.push(Mismatch {
                field: "console file".into(),
                detail: format!("{}: {why}", console_path.display()),
            });
            return Outcome::Built(Some(comparison));
        }
    };
    let facts = HwlocFacts::read(&root_dir);
    let view = hwloc_view(&topology, &knobs, &facts, &hugetlb_by_node(&readings));
    comparison.notes = view.notes.clone();
    (comparison.mismatches, comparison.checked) = compare(&topology, &view, &console);
    Outcome::Built(Some(comparison))
}

fn build(root_dir: &Path) -> Result<(TopologyReadings, Topology), String> {
    let root = Root::directory(root_dir).map_err(|e| format!("root: {e}"))?;
    let readings = read_topology(&root).map_err(|e| format!("read_topology: {e}"))?;
    let topology = Topology::build(&readings).map_err(|e| format!("Topology::build: {e}"))?;
    Ok((readings, topology))
}

/// Bytes of default-size hugetlb pages per node, from the node's
/// `HugePages_Total` and `/proc/meminfo`'s `Hugepagesize`. Only used to show
/// that hwloc counts them in `local=` (see [`hwloc_view`]).
fn hugetlb_by_node(readings: &TopologyReadings) -> BTreeMap<u32, u64> {
    let page = readings.meminfo.as_ref().and_then(|m| m.get("Hugepagesize"));
    let nodes = readings.nodes.as_ref().map(|n| n.nodes.as_slice()).unwrap_or_default();
    nodes
        .iter()
        .filter_map(|n| Some((n.id, n.meminfo.get("HugePages_Total")?.checked_mul(page?)?)))
        .filter(|(_, bytes)| *bytes > 0)
        .collect()
}

/// Unpacks with the system `tar` into a fresh temporary folder and returns
/// the single top folder the archive holds, whatever its name.
fn unpack(tarball: &Path) -> Result<(tempfile::TempDir, PathBuf), String> {
    let scratch = scratch_dir().map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let output = Command::new("tar")
        .arg("-xjf")
        .arg(tarball)
        .arg("-C")
        .arg(scratch.path())
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "tar -xjf {} failed: {}",
            tarball.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let entries: Vec<PathBuf> = fs::read_dir(scratch.path())
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match entries.as_slice() {
        [only] if only.is_dir() => {
            let only = only.clone();
            Ok((scratch, only))
        }
        _ => Err(format!(
            "{} should unpack to one folder, got {:?}",
            tarball.display(),
            entries
        )),
    }
}

/// Each capture is thousands of tiny files; on a disk-backed `/tmp` creating
/// them dominates the run (about 9 s for the largest capture here, against
/// 0.5 s on tmpfs), so use `/dev/shm` unless the user chose a `TMPDIR`.
fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("numasleuth-hwloc-");
    let shm = Path::new("/dev/shm");
    if std::env::var_os("TMPDIR").is_none() && shm.is_dir() {
        if let Ok(dir) = builder.tempdir_in(shm) {
            return Ok(dir);
        }
    }
    builder.tempdir()
}

// ---------------------------------------------------------------------------
// NAME.test: the lstopo options and environment behind NAME.console
// ---------------------------------------------------------------------------

/// The `lstopo` options and `HWLOC_*` variables that change which NUMA nodes
/// and PUs it shows. Anything in a `.test` file not known here is an error,
/// so a new knob is looked at rather than silently ignored.
#[derive(Debug, Default, Clone)]
struct Knobs {
    /// `--whole-system`, `--disallowed` or `HWLOC_ALLOW=all`: show CPUs and
    /// nodes outside our cgroup too.
    whole_system: bool,
    /// `HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES`; unset means hwloc's default.
    keep_gpu_nodes: Option<bool>,
    /// `HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS` non-zero.
    allow_overlapping_nodes: bool,
}

fn parse_test(text: &str) -> Result<Knobs, String> {
    let mut knobs = Knobs::default();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("unknown line `{line}`"));
        };
        let value = value.trim();
        match key.trim() {
            "source" | "target" => {}
            "options" => {
                let mut words = value.split_whitespace();
                while let Some(word) = words.next() {
                    match word {
                        "--whole-system" | "--disallowed" => knobs.whole_system = true,
                        // Output to stdout, verbosity, index style, caches and
                        // I/O devices: none adds or removes a NUMA node or PU.
                        "-" | "-v" | "--verbose" | "-p" | "--physical" | "-l" | "--logical" | "--no-icaches"
                        | "--whole-io" | "--no-io" => {}
                        // Type filters cannot drop NUMA nodes or PUs: hwloc
                        // refuses to filter either.
                        "--filter" => {
                            words.next().ok_or("--filter without a value")?;
                        }
                        other => {
                            return Err(format!(
                                "unknown lstopo option `{other}`: does it change NUMA nodes or PUs?"
                            ))
                        }
                    }
                }
            }
            "env" => {
                if value.starts_with("export ") {
                    continue;
                }
                let (name, setting) = value.split_once('=').ok_or_else(|| format!("env line `{value}`"))?;
                let setting = setting.trim().trim_matches('"');
                let number = || setting.parse::<i64>().unwrap_or(0);
                match name.trim() {
                    "HWLOC_ALLOW" => knobs.whole_system |= setting == "all",
                    "HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES" => knobs.keep_gpu_nodes = Some(number() != 0),
                    "HWLOC_DEBUG_ALLOW_OVERLAPPING_NODE_CPUSETS" => knobs.allow_overlapping_nodes = number() != 0,
                    // PCI locality, error messages and CPU kinds: no effect on
                    // NUMA nodes or PUs.
                    "HWLOC_PCI_LOCALITY" | "HWLOC_SHOW_ERRORS" | "HWLOC_CPUKINDS" => {}
                    other => return Err(format!("unknown variable `{other}`: does it change NUMA nodes or PUs?")),
                }
            }
            other => return Err(format!("unknown key `{other}`")),
        }
    }
    Ok(knobs)
}

// ---------------------------------------------------------------------------
// NAME.console: lstopo's tree
// ---------------------------------------------------------------------------

/// A size as lstopo printed it: `8190MiB` is `value` 8190 at `shift` 20.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Printed {
    value: u64,
    shift: u32,
}

impl Printed {
    fn parse(text: &str) -> Option<Printed> {
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let value = text[..digits].parse().ok()?;
        let shift = match &text[digits..] {
            "B" => 0,
            "KiB" | "KB" | "kB" => 10,
            "MiB" | "MB" => 20,
            "GiB" | "GB" => 30,
            "TiB" | "TB" => 40,
            _ => return None,
        };
        Some(Printed { value, shift })
    }

    /// `bytes` in this unit, rounded to nearest with halves up, as lstopo
    /// rounds: 56 nodes in the corpus only match that way, none only by
    /// truncating (8em64t-2s2ca2c's 15.995 GiB prints as `local=16GiB`).
    fn round(&self, bytes: u64) -> u64 {
        if self.shift == 0 {
            return bytes;
        }
        (bytes + (1 << (self.shift - 1))) >> self.shift
    }
}

impl std::fmt::Display for Printed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.shift {
            0 => "B",
            10 => "KiB",
            20 => "MiB",
            30 => "GiB",
            _ => "TiB",
        };
        write!(f, "{}{unit}", self.value)
    }
}

#[derive(Debug)]
struct ConsoleNode {
    local: Option<Printed>,
    /// The PUs below the node's parent object: the CPUs hwloc considers
    /// local to this memory.
    cpus: BTreeSet<u32>,
}

#[derive(Debug)]
struct Console {
    nodes: BTreeMap<u32, ConsoleNode>,
    /// Every PU in the tree.
    pus: BTreeSet<u32>,
    /// The `NUMALatency` matrix, when lstopo printed one.
    distances: Option<Distances>,
}

/// `(from, to) -> value`, by OS index.
type Distances = BTreeMap<(u32, u32), u32>;

/// Reads lstopo's verbose console output. The tree comes first, one object
/// per line, nesting shown by indentation, and ends at the first line that is
/// not indented (`depth 0: ...`). A NUMA node is a memory child of the
/// object it hangs under, so the CPUs it serves are the PUs in its parent's
/// subtree: the nearest preceding line indented less than the node, looking
/// past memory-side caches (`MemCache`), which sit between a node and that
/// object (memorysidecaches). The `NUMALatency` matrix follows the tree.
fn parse_console(text: &str) -> Result<Console, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty file")?;
    if !first.starts_with("Machine") {
        return Err(format!("first line is not the Machine: `{first}`"));
    }
    let mut tree: Vec<(usize, &str)> = vec![(0, first)];
    let mut rest = Vec::new();
    let mut in_tree = true;
    for line in lines {
        if in_tree && line.starts_with(' ') {
            let body = line.trim_start_matches(' ');
            tree.push((line.len() - body.len(), body));
        } else {
            in_tree = false;
            rest.push(line);
        }
    }

    let pu_id = |body: &str| -> Result<Option<u32>, String> {
        if !body.starts_with("PU ") {
            return Ok(None);
        }
        os_index(body)
            .map(Some)
            .ok_or_else(|| format!("PU without P#: `{body}`"))
    };
    let mut pus = BTreeSet::new();
    for (_, body) in &tree {
        if let Some(id) = pu_id(body)? {
            pus.insert(id);
        }
    }

    let mut nodes = BTreeMap::new();
    let mut logical_to_os = BTreeMap::new();
    for (index, (_, body)) in tree.iter().enumerate() {
        let Some(after) = body.strip_prefix("NUMANode") else {
            continue;
        };
        if !(after.starts_with(' ') || after.starts_with('(')) {
            continue;
        }
        let id = os_index(body).ok_or_else(|| format!("NUMANode without P#: `{body}`"))?;
        let logical = logical_index(body).ok_or_else(|| format!("NUMANode without L#: `{body}`"))?;
        let local = match attribute(body, "local") {
            Some(text) => Some(Printed::parse(text).ok_or_else(|| format!("bad local= in `{body}`"))?),
            None => None,
        };
        // A memory-side cache (`MemCache`, e.g. DDR in front of Optane) sits
        // between the node and the object that holds its CPUs; look past it.
        let mut parent = index;
        loop {
            let below = tree[parent].0;
            parent = (0..parent)
                .rev()
                .find(|&j| tree[j].0 < below)
                .ok_or_else(|| format!("NUMANode without a parent: `{body}`"))?;
            if !tree[parent].1.starts_with("MemCache") {
                break;
            }
        }
        let mut cpus = BTreeSet::new();
        for (child_indent, child) in &tree[parent + 1..] {
            if *child_indent <= tree[parent].0 {
                break;
            }
            if let Some(pu) = pu_id(child)? {
                cpus.insert(pu);
            }
        }
        logical_to_os.insert(logical, id);
        if nodes.insert(id, ConsoleNode { local, cpus }).is_some() {
            return Err(format!("NUMANode P#{id} shown twice"));
        }
    }

    let distances = parse_latency_matrix(&rest, &logical_to_os)?;
    Ok(Console { nodes, pus, distances })
}

fn os_index(body: &str) -> Option<u32> {
    number_after(body, "(P#")
}

fn logical_index(body: &str) -> Option<u32> {
    number_after(body, " L#")
}

fn number_after(body: &str, marker: &str) -> Option<u32> {
    let start = body.find(marker)? + marker.len();
    let digits: String = body[start..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `local=8190MiB` inside the object's parenthesised attributes.
fn attribute<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let open = body.find('(')?;
    body[open + 1..]
        .trim_end_matches(')')
        .split_whitespace()
        .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .map(|value| value.trim_end_matches(')'))
}

/// ```text
/// Relative latency matrix (name NUMALatency kind 5) between 2 NUMANodes (depth -3) by logical indexes:
///  index     0     1
///      0    10    20
///      1    20    10
/// ```
fn parse_latency_matrix(lines: &[&str], logical_to_os: &BTreeMap<u32, u32>) -> Result<Option<Distances>, String> {
    let Some(start) = lines
        .iter()
        .position(|l| l.contains("latency matrix") && l.contains("name NUMALatency"))
    else {
        return Ok(None);
    };
    let logical = if lines[start].contains("by logical indexes") {
        true
    } else if lines[start].contains("by physical indexes") {
        false
    } else {
        return Err(format!("matrix indexed how? `{}`", lines[start]));
    };
    let to_os = |index: u32| -> Result<u32, String> {
        if logical {
            logical_to_os
                .get(&index)
                .copied()
                .ok_or_else(|| format!("latency matrix names NUMANode L#{index}, which the tree lacks"))
        } else {
            Ok(index)
        }
    };
    let header = lines.get(start + 1).ok_or("latency matrix without header")?;
    let mut words = header.split_whitespace();
    if words.next() != Some("index") {
        return Err(format!("latency matrix header `{header}`"));
    }
    let columns: Vec<u32> = words
        .map(|w| {
            w.parse()
                .map_err(|_| format!("latency matrix header `{header}`"))
                .and_then(to_os)
        })
        .collect::<Result<_, _>>()?;
    let mut matrix = BTreeMap::new();
    for row in 0..columns.len() {
        let line = lines.get(start + 2 + row).ok_or("latency matrix cut short")?;
        let mut words = line.split_whitespace();
        let from = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| format!("latency matrix row `{line}`"))
            .and_then(to_os)?;
        for &to in &columns {
            let value = words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| format!("latency matrix row `{line}`"))?;
            matrix.insert((from, to), value);
        }
    }
    Ok(Some(matrix))
}

// ---------------------------------------------------------------------------
// What lstopo would show, derived from our model
// ---------------------------------------------------------------------------

/// hwloc policy inputs that are not part of numasleuth's model: files only
/// hwloc reads, used to decide what it hides.
#[derive(Debug, Default)]
struct HwlocFacts {
    /// `Architecture:` of `/proc/hwloc-nofile-info`, which hwloc's captures
    /// carry instead of `uname`.
    architecture: Option<String>,
    /// Nodes that `/proc/driver/nvidia/gpus/*/numa_status` names as GPU
    /// memory.
    nvidia_gpu_nodes: BTreeSet<u32>,
}

impl HwlocFacts {
    fn read(root: &Path) -> HwlocFacts {
        let architecture = fs::read_to_string(root.join("proc/hwloc-nofile-info"))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("Architecture:").map(|a| a.trim().to_string()))
            });
        let mut nvidia_gpu_nodes = BTreeSet::new();
        if let Ok(gpus) = fs::read_dir(root.join("proc/driver/nvidia/gpus")) {
            for gpu in gpus.flatten() {
                let Ok(bytes) = fs::read(gpu.path().join("numa_status")) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&bytes);
                let node: Option<u32> = text
                    .lines()
                    .find_map(|l| l.trim_matches('\0').strip_prefix("Node:"))
                    .and_then(|v| v.trim().parse().ok());
                nvidia_gpu_nodes.extend(node);
            }
        }
        HwlocFacts {
            architecture,
            nvidia_gpu_nodes,
        }
    }

    fn is_power(&self) -> bool {
        self.architecture
            .as_deref()
            .is_some_and(|a| a.starts_with("ppc") || a.starts_with("power"))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Locality {
    /// The PUs under the node's parent.
    Cpus(BTreeSet<u32>),
    /// A CPU-less node for which neither HMAT nor the SLIT names nearer
    /// CPUs. hwloc attaches it at the top, under the Machine (every PU), or,
    /// when it then groups nodes by distance, in a Group of its own with no
    /// PU (the 17th node of 128ia64-17n4s2c). Either way it is local to no
    /// CPU in particular, which is what our empty `Node::cpus` says.
    Unplaced,
}

#[derive(Debug, Clone)]
struct ExpectedNode {
    cpus: Locality,
    /// MemTotal, as hwloc prints it in `local=`.
    memory_bytes: Option<u64>,
    /// The node's hugetlb pool, when it has one; included in `memory_bytes`.
    hugetlb_bytes: Option<u64>,
}

#[derive(Debug, Default)]
struct HwlocView {
    nodes: BTreeMap<u32, ExpectedNode>,
    /// Our nodes lstopo does not show, and why.
    hidden: BTreeMap<u32, String>,
    /// The PUs lstopo shows.
    pus: BTreeSet<u32>,
    notes: Vec<String>,
}

/// Our model, seen the way `lstopo` shows a machine. Every rule here is a
/// place where numasleuth deliberately shows something else.
fn hwloc_view(topology: &Topology, knobs: &Knobs, facts: &HwlocFacts, hugetlb: &BTreeMap<u32, u64>) -> HwlocView {
    let mut view = HwlocView::default();
    let set = |ids: &[u32]| ids.iter().copied().collect::<BTreeSet<u32>>();
    let cgroup_cpus = topology.restrictions.cgroup_cpus.as_ref().map(|l| set(l.ids()));
    let cgroup_mems = topology.restrictions.cgroup_mems.as_ref().map(|l| set(l.ids()));
    let restrict = !knobs.whole_system;

    // PUs. hwloc leaves offline CPUs out of the tree; numasleuth lists them
    // (`Cpu::online == false`) because "CPU 3 exists but is offline" is
    // exactly what a user debugging placement needs to see. hwloc also hides
    // CPUs outside the cpuset cgroup unless told otherwise (`HWLOC_ALLOW=all`,
    // `--whole-system`); numasleuth always shows the whole machine and
    // reports the cgroup's sets in `Restrictions`. hwloc takes the cgroup's
    // own `cpuset.cpus`/`cpus` file, not `/proc/self/status`, so we restrict by
    // `Restrictions::cgroup_cpus`, the same file.
    let online: BTreeSet<u32> = topology.cpus.iter().filter(|c| c.online).map(|c| c.id).collect();
    view.pus = match (&cgroup_cpus, restrict) {
        (Some(allowed), true) => online.intersection(allowed).copied().collect(),
        _ => online.clone(),
    };
    let offline = topology.cpus.len() - online.len();
    if offline > 0 {
        view.notes
            .push(format!("{offline} offline CPU(s) left out, as hwloc does"));
    }
    if view.pus.len() < online.len() {
        view.notes.push(format!(
            "{} online CPU(s) outside the cgroup left out, as hwloc does by default",
            online.len() - view.pus.len()
        ));
    }

    // Nodes hwloc keeps at discovery, in OS-index order as it reads them.
    let mut kept: Vec<&Node> = Vec::new();
    let mut claimed: BTreeSet<u32> = BTreeSet::new();
    for node in &topology.nodes {
        let cpus = set(node.cpus.ids());
        // Memory of an NVIDIA GPU (POWER9 + V100 NVLink): hwloc hides it by
        // default on POWER so that interleaved allocations stay off GPU
        // memory. numasleuth shows every node the kernel has; which memory to
        // interleave over is the user's decision, made with the full list.
        // (Where hwloc keeps such a node it files it under the GPU's PCI
        // locality, which no capture with a .console exercises yet.)
        let keep_gpu = knobs.keep_gpu_nodes.unwrap_or(!facts.is_power());
        if facts.nvidia_gpu_nodes.contains(&node.id) && !keep_gpu {
            view.hidden
                .insert(node.id, "NVIDIA GPU memory, hidden by hwloc on POWER".into());
            continue;
        }
        // Buggy firmware that puts one CPU in several nodes: hwloc keeps the
        // first node that claims it and drops the later ones. numasleuth
        // shows each node's CPU list exactly as the kernel gives it, so the
        // firmware bug is visible rather than papered over.
        if !knobs.allow_overlapping_nodes && !cpus.is_disjoint(&claimed) {
            view.hidden
                .insert(node.id, "its CPUs overlap an earlier node's, dropped by hwloc".into());
            continue;
        }
        claimed.extend(&cpus);
        kept.push(node);
    }

    // Where hwloc attaches each node. A node with CPUs goes with its CPUs.
    // A CPU-less node (HBM, CXL, NVDIMM, or a far memory board) has no CPUs
    // for the kernel, and numasleuth reports exactly that: `Node::cpus` is
    // empty and the HMAT initiators and SLIT are given separately. hwloc
    // instead files the memory under the CPUs it is best used from: its
    // HMAT initiators (`access1`, else `access0`), else the nodes strictly
    // nearest in the SLIT, else nowhere in particular. We apply the same
    // rules to our own initiators and distances, so this still checks them.
    let mut locality: BTreeMap<u32, BTreeSet<u32>> = kept.iter().map(|n| (n.id, set(n.cpus.ids()))).collect();
    let with_cpus: Vec<&Node> = kept.iter().copied().filter(|n| n.has_cpus()).collect();
    let without_cpus: Vec<&Node> = kept.iter().copied().filter(|n| !n.has_cpus()).collect();
    for node in &with_cpus {
        add_initiators(node, &mut locality);
    }
    for node in &without_cpus {
        let how = if add_initiators(node, &mut locality) && !locality[&node.id].is_empty() {
            "its HMAT initiators".to_string()
        } else if let Some(nearest) = nearest_by_distance(topology, node, &kept) {
            let cpus: BTreeSet<u32> = nearest.iter().flat_map(|id| locality[id].clone()).collect();
            locality.insert(node.id, cpus);
            format!("its nearest nodes in the SLIT ({nearest:?})")
        } else {
            "nothing: no initiator and no nearer node, so it is local to no CPU in particular".to_string()
        };
        view.notes.push(format!(
            "CPU-less node {} compared at hwloc's locality, from {how}",
            node.id
        ));
    }

    for node in kept {
        // Disallowed memory: hidden by hwloc by default, reported by
        // numasleuth with `Restrictions::cgroup_mems` (see the PUs above).
        if let (Some(allowed), true) = (&cgroup_mems, restrict) {
            if !allowed.contains(&node.id) {
                view.hidden
                    .insert(node.id, "outside the cgroup's mems, hidden by hwloc by default".into());
                continue;
            }
        }
        let local = &locality[&node.id];
        let cpus = if local.is_empty() {
            Locality::Unplaced
        } else {
            Locality::Cpus(local.intersection(&view.pus).copied().collect())
        };
        // Hugepages. hwloc's `local=` is the node's MemTotal with the hugetlb
        // pool still in it: 32intel64-2p8co2t+8ve reserves 2048 x 2 MiB pages
        // on each node and prints local=46GiB for node 0, its MemTotal of
        // 47925628 kB, where MemTotal less the pool would print 42GiB. Our
        // `memory_total_bytes` is MemTotal too, so we compare it as is and
        // subtract nothing; `compare` says so if hwloc ever disagrees.
        let hugetlb_bytes = hugetlb.get(&node.id).copied();
        if let Some(bytes) = hugetlb_bytes {
            view.notes.push(format!(
                "node {} has {bytes} bytes of hugetlb pages, counted in local memory as hwloc does",
                node.id
            ));
        }
        view.nodes.insert(
            node.id,
            ExpectedNode {
                cpus,
                memory_bytes: node.memory_total_bytes,
                hugetlb_bytes,
            },
        );
    }
    for (id, why) in &view.hidden {
        view.notes.push(format!("node {id} left out: {why}"));
    }
    view
}

/// ORs a node's HMAT initiators' CPUs into its locality, as hwloc does;
/// false when the node has no access class at all.
fn add_initiators(node: &Node, locality: &mut BTreeMap<u32, BTreeSet<u32>>) -> bool {
    // access1 holds the best CPU initiators; access0 may be a generic
    // initiator (a GPU or accelerator) that has no CPUs.
    let Some(class) = node
        .access
        .iter()
        .find(|a| a.class == 1)
        .or_else(|| node.access.iter().find(|a| a.class == 0))
    else {
        return false;
    };
    let mut cpus = locality[&node.id].clone();
    for initiator in class.initiators.iter().filter(|&i| i != node.id) {
        if let Some(theirs) = locality.get(&initiator) {
            cpus.extend(theirs);
        }
    }
    locality.insert(node.id, cpus);
    true
}

/// The kept nodes strictly nearest to a CPU-less node, when the SLIT singles
/// some out: not when every other node is as far, and not when another node
/// is as near as the node is to itself.
fn nearest_by_distance(topology: &Topology, node: &Node, kept: &[&Node]) -> Option<Vec<u32>> {
    if topology.nodes.len() < 2 || topology.nodes.iter().any(|n| n.distances.iter().any(Option::is_none)) {
        return None;
    }
    let column = |id: u32| topology.nodes.iter().position(|n| n.id == id);
    let own = node.distances[column(node.id)?]?;
    let others: Vec<(u32, u32)> = kept
        .iter()
        .filter(|other| other.id != node.id)
        .filter_map(|other| Some((other.id, node.distances[column(other.id)?]?)))
        .collect();
    let min = others.iter().map(|(_, d)| *d).min()?;
    let nearest: Vec<u32> = others.iter().filter(|(_, d)| *d == min).map(|(id, _)| *id).collect();
    if min <= own || nearest.len() == topology.nodes.len() - 1 {
        return None;
    }
    Some(nearest)
}

// ---------------------------------------------------------------------------
// Comparing
// ---------------------------------------------------------------------------

fn compare(topology: &Topology, view: &HwlocView, console: &Console) -> (Vec<Mismatch>, Checked) {
    let mut checked = Checked::default();
    let mut out = Vec::new();
    let mut push = |field: String, detail: String| out.push(Mismatch { field, detail });

    if view.pus != console.pus {
        push(
            "PUs".into(),
            format!(
                "hwloc shows {}, we expect {}",
                diff(&console.pus, &view.pus, "only hwloc"),
                diff(&view.pus, &console.pus, "only ours")
            ),
        );
    }

    let ours: BTreeSet<u32> = view.nodes.keys().copied().collect();
    let theirs: BTreeSet<u32> = console.nodes.keys().copied().collect();
    if ours != theirs {
        let mut detail = format!(
            "hwloc shows {:?}, we expect {:?}",
            theirs.iter().collect::<Vec<_>>(),
            ours.iter().collect::<Vec<_>>()
        );
        for id in theirs.difference(&ours) {
            match (topology.node(*id), view.hidden.get(id)) {
                (None, _) => detail.push_str(&format!("; node {id} is missing from our model")),
                (Some(_), Some(why)) => detail.push_str(&format!("; we expected hwloc to hide node {id}: {why}")),
                (Some(_), None) => {}
            }
        }
        push("node ids".into(), detail);
    }

    for (id, theirs) in &console.nodes {
        let Some(expected) = view.nodes.get(id) else {
            continue;
        };
        checked.nodes += 1;
        checked.memories += usize::from(theirs.local.is_some());
        let cpus_match = match &expected.cpus {
            Locality::Cpus(cpus) => *cpus == theirs.cpus,
            Locality::Unplaced => theirs.cpus.is_empty() || theirs.cpus == console.pus,
        };
        if !cpus_match {
            let our_node = topology.node(*id).map(|n| n.cpus.to_string()).unwrap_or_default();
            let detail = match &expected.cpus {
                Locality::Cpus(cpus) => format!(
                    "hwloc {} vs expected {} (our Node::cpus is `{our_node}`): {}, {}",
                    compact(&theirs.cpus),
                    compact(cpus),
                    diff(&theirs.cpus, cpus, "only hwloc"),
                    diff(cpus, &theirs.cpus, "only ours"),
                ),
                Locality::Unplaced => format!(
                    "hwloc places this CPU-less node with CPUs {} but we find no initiator or nearer node \
                     (our Node::cpus is `{our_node}`)",
                    compact(&theirs.cpus)
                ),
            };
            push(format!("node {id} cpus"), detail);
        }
        match (theirs.local, expected.memory_bytes) {
            (None, None) => {}
            (Some(printed), Some(bytes)) if printed.round(bytes) == printed.value => {}
            (Some(printed), Some(bytes)) => {
                let shown = |bytes: u64| Printed {
                    value: printed.round(bytes),
                    shift: printed.shift,
                };
                let mut detail = format!(
                    "hwloc local={printed}, our memory_total_bytes {bytes} is {}",
                    shown(bytes)
                );
                if let Some(pool) = expected.hugetlb_bytes {
                    let without = bytes.saturating_sub(pool);
                    if shown(without) == printed {
                        detail.push_str(&format!(
                            "; hwloc left out the {pool}-byte hugetlb pool here, which it does not elsewhere"
                        ));
                    }
                }
                push(format!("node {id} local memory"), detail);
            }
            (Some(printed), None) => push(
                format!("node {id} local memory"),
                format!("hwloc local={printed}, ours unknown"),
            ),
            (None, Some(bytes)) => push(
                format!("node {id} local memory"),
                format!("hwloc shows no local memory, ours {bytes} bytes"),
            ),
        }
    }

    if let Some(matrix) = &console.distances {
        let mut wrong: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for (&(from, to), &value) in matrix {
            checked.distances += 1;
            let ours = topology.node(from).and_then(|node| {
                let column = topology.nodes.iter().position(|n| n.id == to)?;
                node.distances.get(column).copied().flatten()
            });
            if ours != Some(value) {
                let ours = ours.map_or("none".to_string(), |d| d.to_string());
                wrong
                    .entry(from)
                    .or_default()
                    .push(format!("to {to}: hwloc {value}, ours {ours}"));
            }
        }
        for (from, entries) in wrong {
            push(format!("node {from} distances"), entries.join(", "));
        }
    }
    (out, checked)
}

fn diff(a: &BTreeSet<u32>, b: &BTreeSet<u32>, label: &str) -> String {
    let only: BTreeSet<u32> = a.difference(b).copied().collect();
    format!("{label} {}", if only.is_empty() { "-".into() } else { compact(&only) })
}

fn compact(ids: &BTreeSet<u32>) -> String {
    let list: numasleuth_kernel::IdList = ids.iter().copied().collect();
    if list.is_empty() {
        "{}".into()
    } else {
        format!("{{{list}}}")
    }
}
