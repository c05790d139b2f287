use numasleuth_model::{Node, NumaSource, Topology};
use numasleuth_parse::IdList;

use super::*;

fn node(id: u32, cpus: Vec<u32>, distances: Vec<u32>) -> Node {
    Node {
        id,
        cpus: IdList::new(cpus),
        memory_total_bytes: None,
        memory_free_bytes: None,
        hugetlb_bytes: None,
        distances: distances.into_iter().map(Some).collect(),
        has_memory: Some(true),
        access: Vec::new(),
    }
}

fn two_sockets() -> Topology {
    Topology {
        numa: NumaSource::Sysfs,
        nodes: vec![node(0, vec![0, 1], vec![10, 21]), node(1, vec![2, 3], vec![21, 10])],
        cpus: Vec::new(),
        ..Topology::default()
    }
}

fn cell(median: f64) -> Option<Summary> {
    Some(Summary {
        median,
        p10: median * 0.98,
        p90: median * 1.02,
        samples: 7,
    })
}

fn matrix(cells: [[f64; 2]; 2]) -> NodeMatrix {
    NodeMatrix {
        initiators: vec![0, 1],
        targets: vec![0, 1],
        cells: cells.iter().map(|row| row.iter().map(|v| cell(*v)).collect()).collect(),
    }
}

#[test]
fn the_qumulo_case_is_flagged_with_what_was_measured_and_what_is_typical() {
    let bandwidth = matrix([[46e9, 6e9], [6e9, 46e9]]);
    let latency = matrix([[90.0, 150.0], [150.0, 90.0]]);
    let verdict = judge(&two_sockets(), Some(&latency), Some(&bandwidth), "read");
    let starved: Vec<_> = verdict
        .findings
        .iter()
        .filter(|f| f.id == "interconnect-bandwidth")
        .collect();
    assert_eq!(starved.len(), 2, "{:#?}", verdict.findings);
    let first = starved[0];
    assert_eq!(
        first.title,
        "remote read bandwidth from node 0 to node 1 is 13% of local"
    );
    assert!(first.evidence[0].text.contains("6.0 GB/s"), "{:?}", first.evidence);
    assert!(first.evidence[1].text.contains("46.0 GB/s"));
    assert!(first.evidence[2].text.starts_with("typical:"));
    // The same numbers, as data: the remote and local cells and the ratio.
    let remote = &first.evidence[0];
    assert_eq!(remote.source, "measured:mem");
    assert_eq!(remote.values.float("bandwidth_bytes_per_sec"), Some(6e9));
    assert_eq!(remote.values.int("samples"), Some(7));
    assert_eq!(remote.values.float("bandwidth_p10_bytes_per_sec"), Some(6e9 * 0.98));
    assert_eq!(
        (remote.values.int("initiator_node"), remote.values.int("target_node")),
        (Some(0), Some(1))
    );
    assert!((remote.values.float("ratio_to_local").unwrap() - 6.0 / 46.0).abs() < 1e-9);
    assert_eq!(first.evidence[1].values.float("bandwidth_bytes_per_sec"), Some(46e9));
    assert_eq!(first.evidence[2].source, "reference");
    assert_eq!(first.evidence[2].values.float("starved_below_ratio"), Some(0.25));
    assert!(first.remedy.contains("snoop mode"));
    let ratio = &verdict.ratios[0];
    assert_eq!((ratio.initiator, ratio.target), (0, 1));
    assert!((ratio.bandwidth_ratio.unwrap() - 6.0 / 46.0).abs() < 1e-9);
    assert!((ratio.slit_ratio.unwrap() - 2.1).abs() < 1e-9);
    assert!((ratio.latency_ratio.unwrap() - 150.0 / 90.0).abs() < 1e-9);
    // 1.67× measured against 2.1× claimed is within tolerance.
    assert!(verdict.findings.iter().all(|f| f.id != "slit-misleading"));
}

#[test]
fn a_healthy_link_has_no_findings() {
    let bandwidth = matrix([[46e9, 30e9], [30e9, 46e9]]);
    let verdict = judge(&two_sockets(), None, Some(&bandwidth), "read");
    assert!(verdict.findings.is_empty(), "{:#?}", verdict.findings);
    assert_eq!(verdict.ratios.len(), 2);
    assert_eq!(verdict.ratios[0].latency_ratio, None);
}

#[test]
fn slit_far_from_measurement_and_inverted_cells_are_named() {
    let latency = matrix([[100.0, 400.0], [70.0, 100.0]]);
    let verdict = judge(&two_sockets(), Some(&latency), None, "read");
    let ids: Vec<_> = verdict.findings.iter().map(|f| f.id).collect();
    assert_eq!(ids, ["slit-misleading", "remote-beats-local", "slit-misleading"]);
}

#[test]
fn one_node_has_nothing_to_judge() {
    let mut topo = two_sockets();
    topo.nodes.truncate(1);
    let latency = NodeMatrix {
        initiators: vec![0],
        targets: vec![0],
        cells: vec![vec![cell(90.0)]],
    };
    let verdict = judge(&topo, Some(&latency), None, "read");
    assert!(verdict.ratios.is_empty() && verdict.findings.is_empty());
}

#[test]
fn cpu_less_targets_are_judged_from_each_initiator() {
    let latency = NodeMatrix {
        initiators: vec![0],
        targets: vec![0, 2],
        cells: vec![vec![cell(90.0), cell(200.0)]],
    };
    let verdict = judge(&two_sockets(), Some(&latency), None, "read");
    assert_eq!(verdict.ratios.len(), 1);
    assert_eq!(verdict.ratios[0].target, 2);
    assert_eq!(verdict.ratios[0].slit_ratio, None, "node 2 is not in this table");
}
