//! Explanations on hand-made series where the right answer is known.

use super::attributes::{Attributes, RunAttribute as A};
use super::explain::{explain, EXPLAINS};
use super::*;

fn attrs(pairs: &[(A, String)]) -> Attributes {
    pairs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// 12 runs alternating start CPU 0 (node 0) and 2 (node 1); runs started
/// on node 1 are slow, with .bss following the start node.
fn incident() -> (Vec<f64>, Vec<Attributes>) {
    let mut metrics = Vec::new();
    let mut all = Vec::new();
    for i in 0..12 {
        let node = i % 2;
        metrics.push(if node == 1 {
            48_000.0 + i as f64 * 10.0
        } else {
            100_000.0 - i as f64 * 10.0
        });
        all.push(attrs(&[
            (A::StartCpu, (node * 2).to_string()),
            (A::StartNode, node.to_string()),
            (A::BssNode, node.to_string()),
            (A::ThreadNodes, "0-1".into()),
            // A value unique to each run.
            (A::ExitCode, i.to_string()),
        ]));
    }
    (metrics, all)
}

#[test]
fn the_incident_is_explained_by_start_node_and_bss_node() {
    let (metrics, attributes) = incident();
    let analysis = analyze(&metrics, &attributes, false);
    assert!(analysis.bimodality.bimodal, "{}", analysis.bimodality.reason);
    let slow = analysis.cluster(Label::Slow).unwrap();
    assert_eq!(slow.runs, [1, 3, 5, 7, 9, 11]);
    assert_eq!(analysis.labels[1], Label::Slow);
    assert_eq!(analysis.labels[0], Label::Fast);
    let explaining: Vec<A> = analysis.explaining().map(|e| e.attribute).collect();
    assert_eq!(explaining, [A::StartNode, A::BssNode, A::StartCpu]);
    let node = analysis
        .explanations
        .iter()
        .find(|e| e.attribute == A::StartNode)
        .unwrap();
    assert_eq!(
        (node.separation, node.slow_values.clone(), node.fast_values.clone()),
        (1.0, vec!["1".to_string()], vec!["0".to_string()])
    );
    assert_eq!(
        (node.slow_matching, node.slow_total, node.fast_matching, node.fast_total),
        (6, 6, 6, 6)
    );
    // A value unique to each run predicts nothing; a constant says nothing.
    let id = analysis
        .explanations
        .iter()
        .find(|e| e.attribute == A::ExitCode)
        .unwrap();
    assert_eq!(id.separation, 0.0);
    assert!(!id.explains());
    let threads = analysis
        .explanations
        .iter()
        .find(|e| e.attribute == A::ThreadNodes)
        .unwrap();
    assert!(threads.constant && !threads.explains());
}

#[test]
fn lower_is_better_makes_the_high_cluster_slow() {
    let (metrics, attributes) = incident();
    let analysis = analyze(&metrics, &attributes, true);
    assert_eq!(analysis.cluster(Label::Slow).unwrap().runs, [0, 2, 4, 6, 8, 10]);
    let node = &analysis.explanations[0];
    assert_eq!(node.slow_values, ["0"]);
}

#[test]
fn one_mismatch_each_way_still_explains_at_five_sixths() {
    let slow: Vec<bool> = (0..12).map(|i| i < 6).collect();
    // Slow runs on node 1 except run 0; fast runs on node 0 except run 6.
    let node = |i: usize| if (i < 6) != (i == 0 || i == 6) { "1" } else { "0" };
    let attributes: Vec<_> = (0..12).map(|i| attrs(&[(A::StartNode, node(i).into())])).collect();
    let e = &explain(&attributes, &slow)[0];
    assert!((e.separation - 5.0 / 6.0).abs() < 1e-12, "{e:?}");
    assert!(e.separation >= EXPLAINS && e.explains());
    assert_eq!((e.slow_matching, e.fast_matching), (5, 5));
}

#[test]
fn an_unrelated_attribute_does_not_explain() {
    let slow: Vec<bool> = (0..12).map(|i| i < 6).collect();
    let attributes: Vec<_> = (0..12).map(|i| attrs(&[(A::StartNode, (i % 2).to_string())])).collect();
    let e = &explain(&attributes, &slow)[0];
    assert_eq!(e.separation, 0.0);
    assert!(!e.explains());
    assert!(
        e.slow_values.is_empty() && e.fast_values.is_empty(),
        "3 and 3 on each node: {e:?}"
    );
}

#[test]
fn unknown_values_count_against_the_attribute() {
    let slow: Vec<bool> = (0..8).map(|i| i % 2 == 1).collect();
    // Perfect where known, but only known for the first half.
    let attributes: Vec<_> = (0..8)
        .map(|i| {
            if i < 4 {
                attrs(&[(A::HeapNode, (i % 2).to_string())])
            } else {
                Attributes::new()
            }
        })
        .collect();
    let e = &explain(&attributes, &slow)[0];
    assert_eq!(e.unknown, 4);
    assert_eq!(e.separation, 0.5);
    assert!(!e.explains());
}

#[test]
fn one_mode_gives_one_cluster_and_no_explanations() {
    let metrics = [10.0, 10.1, 9.9, 10.05, 9.95, 10.0];
    let attributes: Vec<_> = (0..6).map(|i| attrs(&[(A::StartNode, (i % 2).to_string())])).collect();
    let analysis = analyze(&metrics, &attributes, true);
    assert!(!analysis.bimodality.bimodal);
    assert_eq!(analysis.clusters.len(), 1);
    assert_eq!(analysis.clusters[0].label, Label::All);
    assert_eq!(analysis.clusters[0].runs.len(), 6);
    assert!(analysis.explanations.is_empty());
    assert!(analysis.labels.iter().all(|l| *l == Label::All));
}
