//! The interconnect verdict: from measured node×node latency and bandwidth,
//! how much slower remote memory is than local, whether that matches what
//! the firmware's distance table (SLIT) claims, and whether remote
//! bandwidth is starved the way a bad BIOS snoop mode starves it.

use numasleuth_model::Topology;
use serde::Serialize;

use crate::confidence::{qualify, Confidence};
use crate::doctor::CheckId;
use crate::evidence::{MEASURED_MEM, REFERENCE};
use crate::findings::{incident, Evidence, Finding, Severity};
use crate::stats::{Summary, SPREAD_LIMIT};

/// Below this remote/local bandwidth ratio the link is called starved. The
/// incident measured 6 of 46 GB/s (0.13); healthy two-socket links give a
/// third or more.
pub const STARVED_BANDWIDTH_RATIO: f64 = 0.25;

/// Remote memory "beats" local only when it is this much faster: a
/// remote/local latency ratio below this, or a bandwidth ratio above
/// [`INVERTED_BANDWIDTH_RATIO`]. Two buffers on one node already differ by
/// around 10% with their physical pages (cache colouring, huge pages or
/// not), and an emulated guest's "nodes" are the same host memory: in the
/// two-node TCG guest a steady 0.88× (spread 9%) was a WARNING on a clean
/// machine. A real inversion (misnumbered nodes, unverified placement) is
/// far larger.
pub const INVERTED_LATENCY_RATIO: f64 = 0.8;
/// The bandwidth side of [`INVERTED_LATENCY_RATIO`]: its reciprocal.
pub const INVERTED_BANDWIDTH_RATIO: f64 = 1.25;

/// How far (as a factor) measured latency ratios may stray from the SLIT
/// ratio before we say the table misleads.
pub const SLIT_TOLERANCE: f64 = 1.5;

/// Cells indexed `[initiator][target]`; `None` where not measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeMatrix {
    pub initiators: Vec<u32>,
    pub targets: Vec<u32>,
    pub cells: Vec<Vec<Option<Summary>>>,
}

impl NodeMatrix {
    pub fn get(&self, initiator: u32, target: u32) -> Option<&Summary> {
        let i = self.initiators.iter().position(|n| *n == initiator)?;
        let t = self.targets.iter().position(|n| *n == target)?;
        self.cells.get(i)?.get(t)?.as_ref()
    }
}

/// Remote figures relative to the initiator's local one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    pub initiator: u32,
    pub target: u32,
    /// remote latency / local latency (above 1 = slower).
    pub latency_ratio: Option<f64>,
    /// remote bandwidth / local bandwidth (below 1 = less).
    pub bandwidth_ratio: Option<f64>,
    /// SLIT distance(i, j) / distance(i, i): what the firmware claims.
    pub slit_ratio: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Interconnect {
    pub ratios: Vec<Ratio>,
    pub findings: Vec<Finding>,
}

fn slit(topo: &Topology, from: u32, to: u32) -> Option<f64> {
    let column = topo.nodes.iter().position(|n| n.id == to)?;
    topo.node(from)?.distances.get(column).copied().flatten().map(f64::from)
}

fn ratio(remote: Option<&Summary>, local: Option<&Summary>) -> Option<f64> {
    match (remote, local) {
        (Some(r), Some(l)) if l.median > 0.0 => Some(r.median / l.median),
        _ => None,
    }
}

fn noisy(cells: &[Option<&Summary>]) -> &'static str {
    if cells.iter().flatten().any(|s| s.relative_spread() > SPREAD_LIMIT) {
        " (these cells are noisy; see the warnings)"
    } else {
        ""
    }
}

/// One measured bandwidth cell: the sentence and its numbers, the median
/// with its spread.
fn bandwidth_cell(text: String, s: &Summary) -> Evidence {
    Evidence::new(MEASURED_MEM, text)
        .with("bandwidth_bytes_per_sec", s.median)
        .with("bandwidth_p10_bytes_per_sec", s.p10)
        .with("bandwidth_p90_bytes_per_sec", s.p90)
        .with("samples", s.samples)
}

fn gb(summary: &Summary) -> String {
    format!(
        "{:.1} GB/s (p10 {:.1}, p90 {:.1}, {} samples)",
        summary.median / 1e9,
        summary.p10 / 1e9,
        summary.p90 / 1e9,
        summary.samples
    )
}

/// Judges the matrices; `mix` names the bandwidth mix for the messages.
pub fn judge(topo: &Topology, latency: Option<&NodeMatrix>, bandwidth: Option<&NodeMatrix>, mix: &str) -> Interconnect {
    let mut out = Interconnect::default();
    let initiators = latency.or(bandwidth).map(|m| m.initiators.clone()).unwrap_or_default();
    let targets = latency.or(bandwidth).map(|m| m.targets.clone()).unwrap_or_default();
    for &i in &initiators {
        for &t in targets.iter().filter(|t| **t != i) {
            let (lat_local, lat_remote) = (latency.and_then(|m| m.get(i, i)), latency.and_then(|m| m.get(i, t)));
            let (bw_local, bw_remote) = (bandwidth.and_then(|m| m.get(i, i)), bandwidth.and_then(|m| m.get(i, t)));
            let row = Ratio {
                initiator: i,
                target: t,
                latency_ratio: ratio(lat_remote, lat_local),
                bandwidth_ratio: ratio(bw_remote, bw_local),
                slit_ratio: slit(topo, i, t)
                    .zip(slit(topo, i, i))
                    .filter(|(_, l)| *l > 0.0)
                    .map(|(r, l)| r / l),
            };
            if let (Some(r), Some(remote), Some(local)) = (row.bandwidth_ratio, bw_remote, bw_local) {
                if r < STARVED_BANDWIDTH_RATIO {
                    out.findings.push(measured(
                        starved_bandwidth((i, t), mix, r, remote, local),
                        [remote, local],
                    ));
                }
                if r > INVERTED_BANDWIDTH_RATIO {
                    let finding = inverted(
                        i,
                        t,
                        ("bandwidth", "bandwidth_ratio"),
                        r,
                        noisy(&[Some(remote), Some(local)]),
                    );
                    out.findings.push(measured(finding, [remote, local]));
                }
            }
            if let (Some(r), Some(remote), Some(local)) = (row.latency_ratio, lat_remote, lat_local) {
                if r < INVERTED_LATENCY_RATIO {
                    let finding = inverted(
                        i,
                        t,
                        ("latency", "latency_ratio"),
                        r,
                        noisy(&[Some(remote), Some(local)]),
                    );
                    out.findings.push(measured(finding, [remote, local]));
                }
                if let Some(slit_ratio) = row.slit_ratio {
                    if r > slit_ratio * SLIT_TOLERANCE || r * SLIT_TOLERANCE < slit_ratio {
                        let finding = slit_misleading((i, t), r, slit_ratio, remote, local);
                        out.findings.push(measured(finding, [remote, local]));
                    }
                }
            }
            out.ratios.push(row);
        }
    }
    if topo.cpu_is_emulated() {
        out.findings = out.findings.into_iter().map(crate::confidence::emulated).collect();
    }
    out
}

/// A finding over the cells `figures` with its confidence: at most INFO
/// when they do not hold.
fn measured(finding: Finding, figures: [&Summary; 2]) -> Finding {
    qualify(finding, Confidence::of(figures), MEASURED_MEM)
}

/// `interconnect-bandwidth`: remote bandwidth under [`STARVED_BANDWIDTH_RATIO`]
/// of local, for the pair `(i, t)`.
fn starved_bandwidth((i, t): (u32, u32), mix: &str, r: f64, remote: &Summary, local: &Summary) -> Finding {
    Finding {
        id: CheckId::InterconnectBandwidth.as_str(),
        severity: Severity::Critical,
        confidence: None,
        title: format!(
            "remote {mix} bandwidth from node {i} to node {t} is {:.0}% of local",
            r * 100.0
        ),
        evidence: vec![
            bandwidth_cell(format!("measured: node {i} → node {t}: {}", gb(remote)), remote)
                .with("initiator_node", i)
                .with("target_node", t)
                .with("ratio_to_local", r),
            bandwidth_cell(
                format!(
                    "measured: node {i} → node {i} (local): {}{}",
                    gb(local),
                    noisy(&[Some(remote), Some(local)])
                ),
                local,
            )
            .with("initiator_node", i)
            .with("target_node", i),
            Evidence::new(
                REFERENCE,
                format!(
                    "typical: a healthy socket-to-socket link carries a third or more of local bandwidth; \
                     below {:.0}% the link is starved (a starved link has been measured at 6 of 46 GB/s, 13%)",
                    STARVED_BANDWIDTH_RATIO * 100.0
                ),
            )
            .with("starved_below_ratio", STARVED_BANDWIDTH_RATIO)
            .with("incident_remote_bandwidth_bytes_per_sec", 6e9)
            .with("incident_local_bandwidth_bytes_per_sec", 46e9),
        ],
        remedy: "check the firmware's coherence settings: the BIOS snoop mode (Intel: home snoop, early \
                 snoop, directory/OSB, cluster-on-die or SNC; AMD: xGMI link width and speed, DF \
                 C-states) and whether every socket link trained at full width; on one such \
                 server, changing the snoop mode gained 30% throughput"
            .into(),
        incident: Some(incident::INTERCONNECT),
        explains: Vec::new(),
    }
}

/// `slit-misleading`: the measured latency ratio of `(i, t)` is far from
/// what the firmware's distance table claims.
fn slit_misleading((i, t): (u32, u32), r: f64, slit_ratio: f64, remote: &Summary, local: &Summary) -> Finding {
    Finding {
        id: "slit-misleading",
        severity: Severity::Info,
        confidence: None,
        title: format!("node {i} → node {t}: measured latency ratio {r:.2}× differs from the SLIT's {slit_ratio:.2}×"),
        evidence: vec![
            Evidence::new(
                MEASURED_MEM,
                format!(
                    "measured: {:.1} ns remote vs {:.1} ns local{}",
                    remote.median,
                    local.median,
                    noisy(&[Some(remote), Some(local)])
                ),
            )
            .with("initiator_node", i)
            .with("target_node", t)
            .with("remote_latency_ns", remote.median)
            .with("remote_latency_p10_ns", remote.p10)
            .with("remote_latency_p90_ns", remote.p90)
            .with("local_latency_ns", local.median)
            .with("local_latency_p10_ns", local.p10)
            .with("local_latency_p90_ns", local.p90)
            .with("latency_ratio", r),
            Evidence::new(
                format!("/sys/devices/system/node/node{i}/distance"),
                format!(
                    "the firmware's distance table (/sys/devices/system/node/node{i}/distance) claims \
                     {slit_ratio:.2}×; the kernel and numactl place memory by that table"
                ),
            )
            .with("slit_ratio", slit_ratio),
        ],
        remedy: "trust the measured figures for placement decisions; report the SLIT to the \
                 platform vendor if it is far off"
            .into(),
        incident: Some(incident::INTERCONNECT),
        explains: Vec::new(),
    }
}

/// `what` names the figure for people, `ratio_name` for machines.
fn inverted(i: u32, t: u32, (what, ratio_name): (&str, &'static str), ratio: f64, noisy: &str) -> Finding {
    Finding {
        id: "remote-beats-local",
        severity: Severity::Warning,
        confidence: None,
        title: format!("node {i}: remote node {t} measured better {what} than local memory ({ratio:.2}× local)"),
        evidence: vec![
            Evidence::new(MEASURED_MEM, format!("remote/local {what} = {ratio:.2}{noisy}"))
                .with("initiator_node", i)
                .with("target_node", t)
                .with(ratio_name, ratio),
        ],
        remedy: "check that the placement was verified (placement_verified) and that the node numbering matches the \
                 hardware; otherwise rerun on a quiet machine"
            .into(),
        incident: Some(incident::INTERCONNECT),
        explains: Vec::new(),
    }
}

#[cfg(test)]
mod noise_tests;
#[cfg(test)]
mod tests;
