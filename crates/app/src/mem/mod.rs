//! `mem`: node×node idle latency and bandwidth matrices (both by default),
//! latency against buffer size (`mem latency --sizes`) and against load
//! (`mem loaded`), from a plain [`MemRequest`] to the [`MemDocument`].
//!
//! The machine's rules ([`Machine`]) refuse what could not be measured
//! honestly, the working sets are sized from the caches ([`sizing`]),
//! `numasleuth-measure` returns raw samples, unsteady cells are measured
//! again ([`again`]), and `numasleuth-analyze` summarises and judges; the
//! front-end only turns arguments into the request and prints the
//! document. `doctor --measure` runs [`matrices`].

mod again;
mod bandwidth;
mod curves;
mod error;
mod latency;
mod sizing;

use numasleuth_analyze::interconnect::{judge, NodeMatrix};
use numasleuth_analyze::mem::placement_verdict;
use numasleuth_analyze::mem_document::MemDocument;
use numasleuth_kernel::IdList;
use numasleuth_measure::latency::Sampling;
use numasleuth_measure::stream::Mix;
use numasleuth_measure::PageKind;
use numasleuth_model::stop::{RunSpan, Stop};

pub use error::MemError;

use crate::limits::{self, OutOfRange};
use crate::machine::Machine;
use crate::steps::{StepObserver, Steps};

/// What `mem` measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemMode {
    /// Both node×node matrices, latency then bandwidth.
    Matrices,
    /// The latency matrix alone.
    Latency,
    /// The bandwidth matrix alone.
    Bandwidth,
    /// Latency against buffer size, from one CPU to one node (default:
    /// the CPU's own).
    Sweep { sizes_bytes: Vec<usize>, node: Option<u32> },
    /// Latency while the node's other CPUs load it, one point per delay
    /// (default: nine, from flat out to 12.8 µs per 4 KiB read).
    Loaded {
        delays_ns: Option<Vec<u64>>,
        node: Option<u32>,
    },
}

/// A `mem` run as asked for, every choice already checked for form (the
/// front-end's bounds); the machine's rules are checked here.
#[derive(Debug, Clone)]
pub struct MemRequest {
    pub mode: MemMode,
    /// Keep every sample in the document (`--raw`).
    pub raw: bool,
    /// Only these nodes; default all.
    pub nodes: Option<IdList>,
    /// Only these CPUs; default every CPU this process may use.
    pub cpus: Option<IdList>,
    /// Fewer, shorter samples; never a smaller working set.
    pub quick: bool,
    pub samples: Option<u32>,
    pub sample_ms: Option<u64>,
    /// The chase buffer, or all bandwidth threads' buffers together;
    /// default: sized from the caches.
    pub size_bytes: Option<usize>,
    /// Bandwidth threads per node; default every allowed CPU of the node.
    pub threads: Option<u32>,
    pub mix: Mix,
    pub pages: PageKind,
}

impl MemRequest {
    /// `doctor --measure`'s request: the quick matrices, reads only, on
    /// transparent huge pages.
    pub fn quick_matrices() -> MemRequest {
        MemRequest {
            mode: MemMode::Matrices,
            raw: false,
            nodes: None,
            cpus: None,
            quick: true,
            samples: None,
            sample_ms: None,
            size_bytes: None,
            threads: None,
            mix: Mix::Read,
            pages: PageKind::Transparent,
        }
    }
}

/// The request's values within their limits, before anything is measured.
fn check(request: &MemRequest) -> Result<(), OutOfRange> {
    limits::sampling(request.samples, request.sample_ms)?;
    if let Some(threads) = request.threads {
        limits::count("the bandwidth threads per node", threads, (1, limits::THREADS_MAX))?;
    }
    if let Some(bytes) = request.size_bytes {
        limits::buffer("the buffer", bytes)?;
    }
    match &request.mode {
        MemMode::Sweep { sizes_bytes, .. } => {
            limits::list_len("the size sweep", sizes_bytes.len(), limits::SWEEP_MAX)?;
            sizes_bytes
                .iter()
                .try_for_each(|&bytes| limits::buffer("a swept buffer", bytes))?;
        }
        MemMode::Loaded {
            delays_ns: Some(delays),
            ..
        } => {
            limits::list_len("the delay list", delays.len(), limits::LIST_MAX)?;
            let max = limits::DELAY_MAX_NS;
            delays
                .iter()
                .try_for_each(|&ns| limits::count("a delay in ns", ns, (0, max)))?;
        }
        _ => {}
    }
    Ok(())
}

/// Resolved knobs shared by every `mem` mode. Buffer sizes are not among
/// them: each measurement sizes its working set from the caches of the
/// CPUs it measures with ([`sizing`]), unless `--size` gave one.
struct Settings {
    sampling: Sampling,
    size: Option<usize>,
    pages: PageKind,
}

impl Settings {
    fn new(request: &MemRequest) -> Self {
        let quick = request.quick;
        let samples = request.samples.map_or(if quick { 5 } else { 7 }, |n| n as usize);
        // --quick takes fewer and shorter samples; never a smaller working
        // set, which would measure cache instead of memory.
        let sample_ms = request.sample_ms.unwrap_or(if quick { 10 } else { 20 });
        Settings {
            sampling: Sampling {
                samples,
                sample_ns: sample_ms * 1_000_000,
            },
            size: request.size_bytes,
            pages: request.pages,
        }
    }
}

/// Measures what `request` asks on `machine` (narrowed here to its CPUs),
/// judges it, and says how far it got: a stop ends it after the step under
/// way, and what was measured is kept.
pub fn run(
    mut machine: Machine,
    request: &MemRequest,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(MemDocument, RunSpan), MemError> {
    check(request)?;
    machine.restrict_cpus(request.cpus.as_ref())?;
    let settings = Settings::new(request);
    let mut doc = document(request);
    let nodes = request.nodes.as_ref();
    let span = match &request.mode {
        MemMode::Matrices => {
            let (initiators, targets) = machine.nodes(nodes)?;
            let cells = (initiators.len() * targets.len() * 2) as u64;
            let mut steps = Steps::new(observer, stop, cells, "mem");
            let grid = (&initiators[..], &targets[..]);
            latency::matrix(&machine, &settings, grid, &mut doc, &mut steps)?;
            bandwidth::matrix(&machine, &settings, request, grid, &mut doc, &mut steps)?;
            steps.finish();
            steps.span("cells")
        }
        MemMode::Latency => one_matrix(&machine, nodes, (stop, observer), "mem latency", |grid, steps| {
            latency::matrix(&machine, &settings, grid, &mut doc, steps)
        })?,
        MemMode::Bandwidth => one_matrix(&machine, nodes, (stop, observer), "mem bandwidth", |grid, steps| {
            bandwidth::matrix(&machine, &settings, request, grid, &mut doc, steps)
        })?,
        MemMode::Sweep { sizes_bytes, node } => {
            let cpus_given = request.cpus.is_some();
            let mut steps = Steps::new(observer, stop, sizes_bytes.len() as u64, "mem latency");
            curves::sweep(
                &machine,
                &settings,
                (sizes_bytes, *node),
                cpus_given,
                &mut doc,
                &mut steps,
            )?
        }
        MemMode::Loaded { delays_ns, node } => {
            curves::loaded(&machine, &settings, (delays_ns.as_deref(), *node), stop, &mut doc)?
        }
    };
    finish(&machine, request.mix, &mut doc);
    Ok((doc, span))
}

/// The default `mem` job, which `doctor --measure` runs: both node×node
/// matrices, placement verdict and interconnect judgement.
pub fn matrices(
    machine: Machine,
    request: &MemRequest,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(MemDocument, RunSpan), MemError> {
    let request = MemRequest {
        mode: MemMode::Matrices,
        ..request.clone()
    };
    run(machine, &request, stop, observer)
}

fn document(request: &MemRequest) -> MemDocument {
    let mut doc = MemDocument::new();
    doc.raw = request.raw.then(Default::default);
    doc.page_kind = page_kind_name(request.pages).to_string();
    (doc.cycles_per_ns, doc.cycles_note) = crate::measured::cycles();
    doc
}

/// The page kind as the document names it.
fn page_kind_name(pages: PageKind) -> &'static str {
    match pages {
        PageKind::Small => "base",
        PageKind::Transparent => "transparent huge",
        PageKind::HugeTlb => "hugetlb",
    }
}

/// Placement verdict and the interconnect judgement, once all is measured.
fn finish(machine: &Machine, mix: Mix, doc: &mut MemDocument) {
    let (verified, warning) = placement_verdict(doc.placements.iter().map(|p| p.verified));
    doc.placement_verified = verified;
    doc.warnings.extend(warning.map(str::to_string));
    numasleuth_analyze::working_set::merge_warnings(&mut doc.warnings);
    let as_matrix = |initiators: &[u32], targets: &[u32], cells: &[Vec<Option<_>>]| NodeMatrix {
        initiators: initiators.to_vec(),
        targets: targets.to_vec(),
        cells: cells.to_vec(),
    };
    let latency = doc
        .latency_ns
        .as_ref()
        .map(|m| as_matrix(&m.initiators, &m.nodes, &m.matrix));
    let bandwidth = doc
        .bandwidth_bytes_per_sec
        .as_ref()
        .map(|m| as_matrix(&m.initiators, &m.nodes, &m.matrix));
    doc.interconnect = judge(&machine.topo, latency.as_ref(), bandwidth.as_ref(), mix.name());
}

/// `mem latency` or `mem bandwidth` alone: one matrix over the requested
/// nodes, with a progress line counting just its cells.
fn one_matrix(
    machine: &Machine,
    nodes: Option<&IdList>,
    (stop, observer): (&Stop, &mut dyn StepObserver),
    label: &str,
    measure: impl FnOnce((&[u32], &[u32]), &mut Steps) -> Result<(), MemError>,
) -> Result<RunSpan, MemError> {
    let (initiators, targets) = machine.nodes(nodes)?;
    let mut steps = Steps::new(observer, stop, (initiators.len() * targets.len()) as u64, label);
    measure((&initiators, &targets), &mut steps)?;
    steps.finish();
    Ok(steps.span("cells"))
}
