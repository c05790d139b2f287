//! Running every capture: unpack it, build our [`Topology`] from it, read
//! what `lstopo` printed and compare. Separate from the test itself so that
//! the test only tallies and reports outcomes, and from the parsers so that
//! each step's failure is turned into an outcome in one place.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use numasleuth_kernel::gather::{read_topology, TopologyReadings};
use numasleuth_kernel::Root;
use numasleuth_model::Topology;

use super::compare::{compare, Checked, Mismatch};
use super::console::parse_console;
use super::corpus::{unpack, Capture};
use super::options::{parse_test, Knobs};
use super::view::{hwloc_view, HwlocFacts};

pub(crate) enum Outcome {
    BuildFailed(String),
    /// `None` when there is no `.console` to compare with.
    Built(Option<Comparison>),
}

#[derive(Default)]
pub(crate) struct Comparison {
    pub(crate) mismatches: Vec<Mismatch>,
    /// Which hwloc rules changed the expected view, for the verbose report.
    pub(crate) notes: Vec<String>,
    pub(crate) checked: Checked,
}

/// Runs the captures on a few threads; unpacking and reading them is mostly
/// file-system work, which overlaps well.
pub(crate) fn run_all(captures: &[Capture]) -> Vec<Outcome> {
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
    // Readers go on past a file they cannot use; on a real capture that is
    // a parser that rejected what a kernel wrote, so it fails here. A file
    // every kernel has but the capture left out (hwloc's keep no
    // `/proc/self/status`) is a gap in the capture, not a rejection.
    let rejected: Vec<_> = readings
        .unread
        .iter()
        .filter(|u| u.why != numasleuth_parse::unread::ABSENT_FROM_TREE)
        .collect();
    if !rejected.is_empty() {
        let unread: Vec<String> = rejected.iter().map(ToString::to_string).collect();
        return Err(format!("read_topology: {}", unread.join("; ")));
    }
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
