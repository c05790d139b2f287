use super::*;
use crate::openmetrics::{BuildInfo, NodeMetrics, ProcessMetrics, ReclaimMetrics};

fn exposition() -> Exposition {
    Exposition {
        build: BuildInfo {
            version: "0.1.0".into(),
            commit: "9adf3cbe136f".into(),
        },
        nodes: vec![NodeMetrics {
            node: 1,
            free_bytes: Some(4096),
            numa_hit: Some(10),
            ..NodeMetrics::default()
        }],
        reclaim: Some(ReclaimMetrics::default()),
        processes: vec![ProcessMetrics {
            pid: 42,
            comm: "db \"#x\" # {a=\"b\"} 1".into(),
            bytes_by_node: vec![(0, 100)],
            remote_ratio: Some(0.75),
            thread_node_moves: Some(3),
        }],
        scrape_duration_seconds: 0.002,
        ..Exposition::default()
    }
}

/// The types 0.0.4 knows, and the suffixes its histogram and summary
/// samples may carry beyond the family's name.
const TYPES: &[&str] = &["counter", "gauge", "histogram", "summary", "untyped"];

#[test]
fn every_family_has_a_004_type_named_as_its_samples() {
    let text = encode_text(&exposition());
    assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "{text}");
    let types: HashMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.split_once(' '))
        .collect();
    for kind in types.values() {
        assert!(TYPES.contains(kind), "type {kind} in\n{text}");
    }
    for help in text.lines().filter_map(|l| l.strip_prefix("# HELP ")) {
        let name = help.split(' ').next().unwrap();
        assert!(
            types.contains_key(name),
            "HELP {name} has no TYPE of that name in\n{text}"
        );
    }
    let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(samples.len() >= 8, "{text}");
    for sample in samples {
        assert!(
            types.contains_key(sample_name(sample)),
            "{sample} has no TYPE in\n{text}"
        );
    }
    for line in [
        "# TYPE numasleuth_build_info gauge",
        "numasleuth_build_info{version=\"0.1.0\",commit=\"9adf3cbe136f\"} 1",
        "# TYPE numasleuth_node_numa_hit_total counter",
        "numasleuth_node_numa_hit_total{node=\"1\"} 10",
        "# TYPE numasleuth_node_memory_free_bytes gauge",
        "numasleuth_node_memory_free_bytes{node=\"1\"} 4096",
        "numasleuth_scrape_duration_seconds 0.002",
        // A label value that looks like an exemplar stays whole.
        "numasleuth_process_remote_ratio{pid=\"42\",comm=\"db \\\"#x\\\" # {a=\\\"b\\\"} 1\"} 0.75",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn what_only_openmetrics_has_is_rewritten_or_left_out() {
    let openmetrics = "# HELP a_seconds Time \\\"spent\\\" \\\\ here\\n\n\
                       # TYPE a_seconds counter\n\
                       # UNIT a_seconds seconds\n\
                       a_seconds_total{x=\"}\"} 3 # {trace_id=\"1\"} 1.0\n\
                       a_seconds_created{x=\"}\"} 1.7e9\n\
                       # TYPE s stateset\n\
                       s{s=\"on\"} 1\n\
                       # TYPE u unknown\n\
                       u 2 # {} 1\n\
                       # EOF\n";
    assert_eq!(
        from_openmetrics(openmetrics),
        "# HELP a_seconds_total Time \"spent\" \\\\ here\\n\n\
         # TYPE a_seconds_total counter\n\
         a_seconds_total{x=\"}\"} 3\n\
         # TYPE s gauge\n\
         s{s=\"on\"} 1\n\
         # TYPE u untyped\n\
         u 2\n"
    );
}
