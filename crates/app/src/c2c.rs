//! `c2c`: the core-to-core cache-line latency matrix, with the contended
//! line on a node the request chooses, from a plain [`C2cRequest`] to the
//! [`C2cDocument`].
//!
//! Pairs are measured once (A↔B, not also B↔A) and mirrored; on big
//! machines the request's sampling keeps one CPU per core, cache domain or
//! node so a run finishes in minutes rather than hours. `doctor --measure`
//! runs [`quick_matrix`].

use numasleuth_analyze::c2c::{self, Grid};
use numasleuth_analyze::c2c_document::{C2cDocument, C2cMethod};
use numasleuth_analyze::cpu_sample::{sample_cpus, CpuSample};
use numasleuth_analyze::siblings;
use numasleuth_analyze::stats::{rows_spread_warning, Summary};
use numasleuth_kernel::IdList;
use numasleuth_measure::c2c::{HomeLine, Method};
use numasleuth_measure::grids::{self, PairTiming};
use numasleuth_measure::MeasureError;
use numasleuth_model::stop::{RunSpan, Stop};

use crate::limits::{self, OutOfRange};
use crate::machine::{Machine, MachineError};
use crate::measured;
use crate::steps::{StepObserver, Steps};

/// A `c2c` run as asked for, each value already checked for form.
#[derive(Debug, Clone)]
pub struct C2cRequest {
    /// Only these CPUs; default every CPU this process may use.
    pub cpus: Option<IdList>,
    /// The node whose memory holds the line; default the first CPU's.
    pub home_node: Option<u32>,
    pub method: Method,
    /// Which CPUs stand for the machine.
    pub sample: CpuSample,
    pub samples: Option<u32>,
    /// Round trips (or one-way transfers) per sample.
    pub transfers: Option<u32>,
    /// Fewer samples and transfers.
    pub quick: bool,
    /// Keep every sample in the document (`--raw`).
    pub raw: bool,
}

/// Why a `c2c` measurement could not be made, each as the one line
/// `numasleuth` prints, with its cause as the source.
#[derive(Debug, thiserror::Error)]
pub enum C2cError {
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("--home-node not given")]
    NoHomeNode(#[source] MachineError),
    #[error("cannot place the line on node {node}")]
    Line {
        node: u32,
        #[source]
        cause: MeasureError,
    },
    #[error("CPUs {a} and {b}")]
    Pair {
        a: u32,
        b: u32,
        #[source]
        cause: MeasureError,
    },
    #[error("c2c needs at least two CPUs, and {}", leaves(.0))]
    TooFewCpus(Vec<u32>),
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
}

/// Measures every pair of the request's CPUs through a line on its home
/// node until `stop`, and judges the matrix against the declared topology.
pub fn run(
    machine: &Machine,
    request: &C2cRequest,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<(C2cDocument, RunSpan), C2cError> {
    limits::sampling(request.samples, None)?;
    if let Some(transfers) = request.transfers {
        limits::count("the transfers per sample", transfers, (1, limits::TRANSFERS_MAX))?;
    }
    let (cpus, sampling) = cpus(machine, request)?;
    let home_node = match request.home_node {
        Some(node) => node,
        None => machine.cpu_home_node(cpus[0]).map_err(C2cError::NoHomeNode)?,
    };
    machine.check_node(home_node)?;
    let line = place_line(home_node)?;
    let samples = request
        .samples
        .map_or(if request.quick { 5 } else { 7 }, |n| n as usize);
    let transfers = request
        .transfers
        .map_or(if request.quick { 200 } else { 1000 }, |n| n as usize);
    let timing = PairTiming {
        method: request.method,
        samples,
        transfers_per_sample: transfers,
    };
    let (matrix, span) = measure_all(&line, &cpus, timing, request.raw, (stop, observer))?;
    let c2c::Matrix {
        latency_ns: matrix,
        raw_ns: raw,
        raw_timing,
        timer_overhead_ns: overhead,
        short_samples,
    } = matrix;
    let (cycles_per_ns, cycles_note) = measured::cycles();
    let mut warnings = warnings(&cpus, &matrix, short_samples);
    if !line.placement().verified {
        warnings.push(format!("the line could not be verified to be on node {home_node}"));
    }
    let siblings = siblings::check(&machine.topo, &cpus, &siblings::pair_medians(&matrix));
    warnings.extend(siblings.left_out);
    let doc = C2cDocument {
        cpus,
        home_node,
        method: match request.method {
            Method::Cas => C2cMethod::Cas,
            Method::OneWay => C2cMethod::OneWay,
        },
        sampling,
        latency_ns: matrix,
        transfers_per_sample: transfers,
        timer_overhead_ns: overhead,
        cycles_per_ns,
        cycles_note,
        placement_verified: line.placement().verified,
        suspected_siblings: siblings.pairs,
        warnings,
        raw_latency_ns: request.raw.then_some(raw),
        raw_timing: request.raw.then_some(raw_timing),
    };
    Ok((doc, span))
}

/// The spread of the pairs, and samples too short to time.
fn warnings(cpus: &[u32], matrix: &Grid<Summary>, short_samples: usize) -> Vec<String> {
    let n = cpus.len();
    let pairs = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b)));
    let summaries = pairs.filter_map(|(a, b)| Some((format!("CPU {}↔{}", cpus[a], cpus[b]), matrix[a][b].as_ref()?)));
    let mut warnings = rows_spread_warning("pairs", summaries);
    if short_samples > 0 {
        warnings.push(format!(
            "{short_samples} samples took no longer than the clock's own overhead and count as 0 ns; use more \
             --transfers per sample"
        ));
    }
    warnings
}

fn place_line(node: u32) -> Result<HomeLine, C2cError> {
    HomeLine::allocate(node).map_err(|cause| C2cError::Line { node, cause })
}

/// Every pair of `cpus` with a line homed on `home_node`, quick sampling
/// and no raw samples kept: what `doctor --measure` compares with the
/// declared topology.
pub fn quick_matrix(
    cpus: &[u32],
    home_node: u32,
    stop: &Stop,
    observer: &mut dyn StepObserver,
) -> Result<Grid<Summary>, C2cError> {
    let line = place_line(home_node)?;
    let timing = PairTiming {
        method: Method::Cas,
        samples: 5,
        transfers_per_sample: 200,
    };
    Ok(measure_all(&line, cpus, timing, false, (stop, observer))?.0.latency_ns)
}

/// Measures every pair once (the matrix is symmetric) until `stop`; the
/// analysis mirrors and summarises them, keeping the raw timing for
/// `--raw` when `keep_raw`. The span says how far it got: a stop ends the
/// run after the pair under way.
fn measure_all(
    line: &HomeLine,
    cpus: &[u32],
    timing: PairTiming,
    keep_raw: bool,
    (stop, observer): (&Stop, &mut dyn StepObserver),
) -> Result<(c2c::Matrix, RunSpan), C2cError> {
    let mut steps = Steps::new(observer, stop, grids::pairs(cpus.len()).len() as u64, "c2c");
    let done = grids::c2c_pairs(line, cpus, timing, stop, &mut |p| {
        steps.step(&format!("CPU {}↔{}", cpus[p.a], cpus[p.b]));
    })
    .map_err(|e| C2cError::Pair {
        a: cpus[e.step.a],
        b: cpus[e.step.b],
        cause: e.error,
    })?;
    steps.finish();
    let timed = done
        .iter()
        .map(|(p, samples)| (p.a, p.b, measured::pair(samples)))
        .collect();
    Ok((c2c::matrix(cpus.len(), timed, keep_raw), steps.span("CPU pairs")))
}

/// The CPUs asked for (all this process may use by default), thinned by
/// the request's sampling, and the sampling mode's name.
fn cpus(machine: &Machine, request: &C2cRequest) -> Result<(Vec<u32>, &'static str), C2cError> {
    let chosen: Vec<u32> = match &request.cpus {
        Some(list) => {
            for cpu in list.iter() {
                machine.check_cpu(cpu)?;
            }
            list.iter().collect()
        }
        None => machine.allowed_cpus.iter().collect(),
    };
    let (cpus, sampling) = sample_cpus(&machine.topo, chosen, request.sample);
    if cpus.len() < 2 {
        return Err(C2cError::TooFewCpus(cpus));
    }
    Ok((cpus, sampling))
}

/// What a selection of fewer than two CPUs leaves, in words: the count
/// first, so `-C 0` does not read as "leaves 0".
fn leaves(cpus: &[u32]) -> String {
    match cpus {
        [] => "the selection leaves none".to_string(),
        [cpu] => format!("the selection leaves 1 (CPU {cpu})"),
        more => format!(
            "the selection leaves {} (CPUs {})",
            more.len(),
            numasleuth_kernel::human_list(more)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{leaves, C2cError};

    #[test]
    fn one_cpu_left_reads_as_one_not_as_its_number() {
        assert_eq!(leaves(&[0]), "the selection leaves 1 (CPU 0)");
        assert_eq!(leaves(&[]), "the selection leaves none");
        assert_eq!(leaves(&[3, 5]), "the selection leaves 2 (CPUs 3,5)");
        assert_eq!(
            C2cError::TooFewCpus(vec![2]).to_string(),
            "c2c needs at least two CPUs, and the selection leaves 1 (CPU 2)"
        );
    }
}
