use super::*;

fn exposition() -> Exposition {
    Exposition {
        build: BuildInfo {
            version: "0.1.0".into(),
            commit: "9adf3cbe136f".into(),
        },
        nodes: vec![NodeMetrics {
            node: 1,
            free_bytes: Some(4096),
            total_bytes: Some(8192),
            numa_hit: Some(10),
            numa_miss: Some(2),
            numa_foreign: None,
        }],
        watermarks: vec![Watermark {
            node: 1,
            zone: "Normal".into(),
            min_bytes: 1,
            low_bytes: 2,
            high_bytes: 3,
        }],
        reclaim: Some(ReclaimMetrics {
            scan_kswapd: 7,
            scan_direct: 5,
            oom_kill: Some(1),
            ..ReclaimMetrics::default()
        }),
        irqs: vec![(24, "eth0".into(), true)],
        findings: vec![("zone-reclaim".into(), "warning".into())],
        processes: vec![ProcessMetrics {
            pid: 42,
            comm: "db \"x\"".into(),
            bytes_by_node: vec![(0, 100), (1, 300)],
            remote_ratio: Some(0.75),
            thread_node_moves: Some(3),
        }],
        collect_errors: vec![],
        refresh_age_seconds: Some(1.5),
        scrape_duration_seconds: 0.002,
        lock_file_opens: Some(vec![("slabinfo".into(), "cat".into(), 15)]),
    }
}

#[test]
fn names_and_labels_are_pinned() {
    let text = encode_text(&exposition());
    for line in [
        "numasleuth_node_memory_free_bytes{node=\"1\"} 4096",
        "numasleuth_node_memory_total_bytes{node=\"1\"} 8192",
        "numasleuth_node_watermark_bytes{node=\"1\",zone=\"Normal\",level=\"low\"} 2",
        "numasleuth_node_numa_hit_total{node=\"1\"} 10",
        "numasleuth_node_numa_miss_total{node=\"1\"} 2",
        "numasleuth_reclaim_scan_total{kind=\"kswapd\"} 7",
        "numasleuth_reclaim_scan_total{kind=\"direct\"} 5",
        "numasleuth_oom_kill_total 1",
        "numasleuth_irq_off_node{irq=\"24\",device=\"eth0\"} 1",
        "numasleuth_finding{id=\"zone-reclaim\",severity=\"warning\"} 1",
        "numasleuth_process_memory_bytes{pid=\"42\",comm=\"db \\\"x\\\"\",node=\"1\"} 300",
        "numasleuth_process_remote_ratio{pid=\"42\",comm=\"db \\\"x\\\"\"} 0.75",
        "numasleuth_scrape_duration_seconds 0.002",
        "numasleuth_process_thread_node_moves_total{pid=\"42\",comm=\"db \\\"x\\\"\"} 3",
        "# TYPE numasleuth_build info",
        "numasleuth_build_info{version=\"0.1.0\",commit=\"9adf3cbe136f\"} 1",
        "numasleuth_lock_file_opens_total{file=\"slabinfo\",comm=\"cat\"} 15",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }
    // Absent counters are absent, not zero.
    let mut odd = exposition();
    odd.processes[0].comm = "a\nb\\".into();
    let text_odd = encode_text(&odd);
    assert!(text_odd.contains("comm=\"a\\nb\\\\\""), "{text_odd}");
    // A control in a label is shown escaped, its backslash escaped again.
    odd.processes[0].comm = "a\u{1b}]0;t\u{7}".into();
    let text_odd = encode_text(&odd);
    assert!(text_odd.contains("comm=\"a\\\\x1b]0;t\\\\x07\""), "{text_odd}");
    assert!(!text.contains("numasleuth_node_numa_foreign_total{"));
    // Where no cheap method watches opens, the family is not there at all.
    odd.lock_file_opens = None;
    assert!(!encode_text(&odd).contains("lock_file_opens"));
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn every_emitted_name_is_listed() {
    let text = encode_text(&exposition());
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let name = line.split(['{', ' ']).next().unwrap();
        assert!(METRIC_NAMES.contains(&name), "{name} not in METRIC_NAMES");
    }
}

#[test]
fn series_come_out_in_label_order_whatever_order_they_went_in() {
    let mut e = exposition();
    let node = |node: u32| NodeMetrics {
        node,
        free_bytes: Some(u64::from(node)),
        ..NodeMetrics::default()
    };
    e.nodes = vec![node(10), node(2), node(0)];
    e.irqs = vec![
        (120, "eth1".into(), false),
        (24, "eth0".into(), true),
        (9, "acpi".into(), false),
    ];
    let text = encode_text(&e);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing in {text}"))
    };
    assert!(at("free_bytes{node=\"0\"}") < at("free_bytes{node=\"2\"}"));
    assert!(at("free_bytes{node=\"2\"}") < at("free_bytes{node=\"10\"}"));
    assert!(at("irq_off_node{irq=\"9\"") < at("irq_off_node{irq=\"24\"") && at("irq=\"24\"") < at("irq=\"120\""));
    // The same numbers in another order: the very same text.
    e.nodes.reverse();
    e.irqs.reverse();
    assert_eq!(encode_text(&e), text);
}
