use std::collections::BTreeMap;

use numasleuth_parse::procfs::zoneinfo::Zone;

use super::*;

fn node(node: u32, free: u64, miss: u64, foreign: u64) -> NodeSample {
    NodeSample {
        node,
        free_pages: free,
        min_pages: 131132,
        low_pages: 163915,
        high_pages: 196698,
        numa_miss: Some(miss),
        numa_foreign: Some(foreign),
        ..NodeSample::default()
    }
}

fn sample(t_s: f64, nodes: Vec<NodeSample>, direct: u64) -> Sample {
    Sample {
        t_s,
        nodes,
        machine: MachineCounters {
            pgscan_direct: direct,
            oom_kill: Some(0),
            ..MachineCounters::default()
        },
        zone_reclaim_mode: Some(0),
    }
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}

#[test]
fn crossing_low_with_fallback_is_reported_with_its_amount() {
    // The zone-reclaim incident's node 1 slipping under low, node 0
    // taking its allocations.
    let before = sample(11.3, vec![node(0, 900000, 10, 0), node(1, 174188, 0, 5)], 0);
    let after = sample(12.3, vec![node(0, 880000, 2010, 0), node(1, 160000, 0, 2005)], 0);
    let events = EventTracker::new(4096).events(&before, &after);
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].message,
        "node 1 fell below its low watermark at t=12.3 s (160000 free, low 163915), \
         2000 pages, 7.8 MiB of its allocations fell back to node 0"
    );
    let rows = rows(&before, &after);
    assert_eq!(rows[1].numa_foreign_per_sec, Some(2000.0));
    assert_eq!(rows[0].numa_miss_per_sec, Some(2000.0));
    // No per-node reclaim counters in these samples: no per-node rate.
    assert_eq!(rows[0].kswapd_scan_per_sec, None);
}

#[test]
fn a_trickle_is_named_as_one() {
    let before = sample(0.0, vec![node(0, 900000, 10, 0), node(1, 170000, 0, 5)], 0);
    let after = sample(1.0, vec![node(0, 900000, 26, 0), node(1, 160000, 0, 21)], 0);
    let events = EventTracker::new(4096).events(&before, &after);
    assert!(events[0]
        .message
        .ends_with("16 pages, 64 KiB of its allocations fell back to node 0"));
}

#[test]
fn fallback_after_the_crossing_is_told_at_recovery() {
    // The kernel spills a node's allocations only once it is under low:
    // the crossing sample saw none, the next two did, and the recovery
    // says what the whole episode sent to node 0.
    let mut tracker = EventTracker::new(4096);
    let a = sample(0.0, vec![node(0, 900000, 10, 0), node(1, 170000, 0, 5)], 0);
    let b = sample(1.0, vec![node(0, 900000, 10, 0), node(1, 160000, 0, 5)], 0);
    let c = sample(2.0, vec![node(0, 890000, 1010, 0), node(1, 160000, 0, 1005)], 0);
    let d = sample(3.0, vec![node(0, 880000, 2570, 0), node(1, 161000, 0, 2565)], 0);
    let e = sample(4.0, vec![node(0, 880000, 2570, 0), node(1, 200000, 0, 2565)], 0);
    let fell = tracker.events(&a, &b);
    assert_eq!(kinds(&fell), ["below-low"]);
    assert!(!fell[0].message.contains("fell back"), "{}", fell[0].message);
    assert!(tracker.events(&b, &c).is_empty());
    assert!(tracker.events(&c, &d).is_empty());
    let recovered = tracker.events(&d, &e);
    assert_eq!(kinds(&recovered), ["recovered"]);
    assert!(
        recovered[0]
            .message
            .ends_with("; while it was low, 2560 pages, 10 MiB of its allocations fell back to node 0"),
        "{}",
        recovered[0].message
    );
    // A second episode counts from its own start.
    let f = sample(5.0, vec![node(0, 880000, 2570, 0), node(1, 160000, 0, 2565)], 0);
    let g = sample(6.0, vec![node(0, 880000, 2570, 0), node(1, 200000, 0, 2565)], 0);
    tracker.events(&e, &f);
    let again = tracker.events(&f, &g);
    assert_eq!(kinds(&again), ["recovered"]);
    assert!(!again[0].message.contains("fell back"), "{}", again[0].message);
}

#[test]
fn hovering_around_low_does_not_flap() {
    // Free pages within ±30 of low for 20 samples, then a real recovery
    // above high: one below-low event and one recovery, nothing between.
    let low = 163915;
    let mut tracker = EventTracker::new(4096);
    let mut all = Vec::new();
    let mut previous = sample(0.0, vec![node(1, 170000, 0, 0)], 0);
    for i in 1..=20u64 {
        let free = if i % 2 == 0 { low + 30 } else { low - 30 };
        let current = sample(i as f64, vec![node(1, free, 0, 0)], 0);
        all.extend(tracker.events(&previous, &current));
        previous = current;
    }
    assert_eq!(kinds(&all), ["below-low"]);
    let current = sample(21.0, vec![node(1, 200000, 0, 0)], 0);
    let recovered = tracker.events(&previous, &current);
    assert_eq!(kinds(&recovered), ["recovered"]);
    assert!(recovered[0].message.contains("above its high watermark"));
}

#[test]
fn steady_between_low_and_high_recovers_after_n_samples() {
    let mut tracker = EventTracker::new(4096);
    let a = sample(0.0, vec![node(1, 170000, 0, 0)], 0);
    let b = sample(1.0, vec![node(1, 160000, 0, 0)], 0);
    assert_eq!(kinds(&tracker.events(&a, &b)), ["below-low"]);
    let mut previous = b;
    let mut seen = Vec::new();
    for i in 0..RECOVERY_SAMPLES {
        let current = sample(2.0 + f64::from(i), vec![node(1, 180000, 0, 0)], 0);
        seen.push(kinds(&tracker.events(&previous, &current)));
        previous = current;
    }
    let last = seen.pop().unwrap();
    assert!(seen.iter().all(|k| k.is_empty()), "{seen:?}");
    assert_eq!(last, ["recovered"]);
}

#[test]
fn below_min_recovery_and_direct_reclaim_have_no_fake_node() {
    let mut tracker = EventTracker::new(4096);
    let a = sample(0.0, vec![node(1, 170000, 0, 0)], 0);
    let mut b = sample(1.0, vec![node(1, 100000, 0, 0)], 64);
    b.machine.allocstall = 3;
    let mut c = sample(2.0, vec![node(1, 200000, 0, 0)], 64);
    c.machine.allocstall = 3;
    let events = tracker.events(&a, &b);
    assert_eq!(kinds(&events), ["below-min", "direct-reclaim"]);
    assert_eq!(events[1].node, None);
    assert!(events[1].message.contains("3 allocation stalls, 64 pages scanned"));
    assert_eq!(kinds(&tracker.events(&b, &c)), ["recovered"]);
}

#[test]
fn zone_reclaim_is_named_node_local_reclaim() {
    let mut a = sample(0.0, vec![node(0, 900000, 0, 0)], 0);
    let mut b = sample(1.0, vec![node(0, 900000, 0, 0)], 500);
    a.zone_reclaim_mode = Some(1);
    b.zone_reclaim_mode = Some(1);
    let events = EventTracker::new(4096).events(&a, &b);
    assert_eq!(kinds(&events), ["node-reclaim"]);
    assert!(events[0]
        .message
        .starts_with("node-local reclaim (zone_reclaim_mode=1)"));
    assert!(!events[0].message.contains("stall"));
}

#[test]
fn kswapd_episode_and_oom_kill_are_events() {
    let mut tracker = EventTracker::new(4096);
    let steal = [0u64, 0, 10000, 25000, 33280, 33280];
    let mut previous = sample(0.0, vec![], 0);
    let mut all = Vec::new();
    for (i, pages) in steal.iter().enumerate().skip(1) {
        let mut current = sample(i as f64 * 0.4, vec![], 0);
        current.machine.pgsteal_kswapd = *pages;
        previous.machine.pgsteal_kswapd = steal[i - 1];
        if i == 5 {
            current.machine.oom_kill = Some(1);
        }
        all.extend(tracker.events(&previous, &current));
        previous = current;
    }
    assert_eq!(kinds(&all), ["kswapd-episode", "oom-kill"]);
    assert_eq!(
        all[0].message,
        "kswapd reclaimed 130 MiB in 1.2 s (t=0.4 s to t=1.6 s, machine-wide)"
    );
    assert_eq!(all[1].node, None);
}

#[test]
fn machine_counters_are_exact_names_and_reported_once() {
    let vmstat: BTreeMap<String, u64> = [
        ("pgscan_direct", 10),
        ("pgscan_direct_throttle", 99),
        ("pgscan_kswapd", 100),
        ("allocstall_normal", 2),
        ("allocstall_movable", 1),
        ("oom_kill", 4),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let m = machine_counters(&vmstat);
    assert_eq!(
        (m.pgscan_direct, m.pgscan_kswapd, m.allocstall, m.oom_kill),
        (10, 100, 3, Some(4))
    );
    let before = Sample::default();
    let after = Sample {
        t_s: 2.0,
        machine: m,
        ..Sample::default()
    };
    let row = machine_row(&before, &after);
    assert_eq!((row.kswapd_scan_per_sec, row.direct_scan_per_sec), (50.0, 5.0));
}

#[test]
fn per_node_reclaim_counters_are_used_where_the_kernel_has_them() {
    let zones = vec![Zone {
        node: 1,
        name: "Normal".into(),
        free_pages: 100,
        managed_pages: 1000,
        ..Zone::default()
    }];
    let vmstat: BTreeMap<u32, BTreeMap<String, u64>> = [(1, [("pgscan_kswapd".to_string(), 40)].into_iter().collect())]
        .into_iter()
        .collect();
    let samples = node_samples(&zones, &BTreeMap::new(), &vmstat);
    assert_eq!((samples[0].pgscan_kswapd, samples[0].pgscan_direct), (Some(40), None));
}

fn zone(name: &str, free_pages: u64, managed_pages: u64, protection_pages: &[u64]) -> Zone {
    Zone {
        node: 0,
        name: name.into(),
        free_pages,
        low_pages: free_pages / 10,
        managed_pages,
        protection_pages: protection_pages.to_vec(),
        ..Zone::default()
    }
}

/// x86's 16 MiB DMA zone beside gigabytes: the kernel reserves more of it
/// than it manages (tests/fixtures/kvm-2cpu-1node), so it is not counted.
#[test]
fn a_zone_its_reserve_shuts_out_is_not_a_node_s_memory() {
    let zones = vec![
        zone("DMA", 5, 3840, &[0, 3019, 6987, 6987, 6987]),
        zone("Normal", 100, 1000, &[0, 0, 0, 0, 0]),
    ];
    let samples = node_samples(&zones, &BTreeMap::new(), &BTreeMap::new());
    assert_eq!(
        (samples[0].free_pages, samples[0].low_pages, samples[0].numa_miss),
        (100, 10, None)
    );
}

/// The rule is the kernel's numbers, not the name: arm64's ZONE_DMA is a
/// small guest's only zone (all of a 512 MiB node), and a DMA zone on a
/// small x86 node is reserved only in part, so ordinary allocations reach it.
#[test]
fn a_dma_zone_ordinary_allocations_reach_is_counted() {
    let arm64 = [zone("DMA", 120_000, 126_976, &[0, 0, 0, 0])];
    let samples = node_samples(&arm64, &BTreeMap::new(), &BTreeMap::new());
    assert_eq!(samples.len(), 1, "the node is watched");
    assert_eq!(samples[0].free_pages, 120_000);
    let small_x86 = [
        zone("DMA", 3000, 3840, &[0, 487, 487, 487, 487]),
        zone("DMA32", 100_000, 124_756, &[0, 0, 0, 0, 0]),
    ];
    let samples = node_samples(&small_x86, &BTreeMap::new(), &BTreeMap::new());
    assert_eq!(samples[0].free_pages, 103_000);
}

/// `conditions` on the fixtures' watermarks (min 100, low 200, high 300).
fn pressed(node: u32, free: u64, miss: u64) -> NodeSample {
    NodeSample {
        node,
        free_pages: free,
        min_pages: 100,
        low_pages: 200,
        high_pages: 300,
        numa_miss: Some(miss),
        numa_foreign: Some(0),
        ..NodeSample::default()
    }
}

fn reclaiming(t_s: f64, nodes: Vec<NodeSample>, direct: u64, stalls: u64) -> Sample {
    Sample {
        t_s,
        nodes,
        machine: MachineCounters {
            pgscan_direct: direct,
            allocstall: stalls,
            ..MachineCounters::default()
        },
        zone_reclaim_mode: None,
    }
}

#[test]
fn a_quiet_machine_has_no_conditions() {
    let a = reclaiming(0.0, vec![pressed(0, 5000, 7), pressed(1, 5000, 0)], 10, 1);
    let b = reclaiming(0.2, vec![pressed(0, 4000, 7), pressed(1, 6000, 0)], 10, 1);
    assert!(conditions(&a, &b).is_empty());
}

#[test]
fn pressure_fallback_and_reclaim_are_conditions_every_sample() {
    let a = reclaiming(0.0, vec![pressed(0, 5000, 7), pressed(1, 250, 0)], 10, 1);
    let b = reclaiming(0.2, vec![pressed(0, 4000, 23), pressed(1, 150, 0)], 74, 3);
    let got: Vec<(EventKind, Option<u32>, String)> = conditions(&a, &b)
        .into_iter()
        .map(|e| (e.kind, e.node, e.message))
        .collect();
    let want = [
        (
            EventKind::NumaFallback,
            Some(0),
            "node 0: 16 pages allocated here as fallback (numa_miss)",
        ),
        (
            EventKind::UnderLow,
            Some(1),
            "node 1 below low watermark (150 free pages)",
        ),
        (EventKind::AllocStalls, None, "direct reclaim: 2 allocation stall(s)"),
        (EventKind::DirectScan, None, "direct reclaim scanned 64 pages"),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (got, want) in got.iter().zip(want) {
        assert_eq!((got.0, got.1, got.2.as_str()), want);
    }
    // Still under a watermark a sample later: said again, now under min.
    let c = reclaiming(0.4, vec![pressed(0, 4000, 23), pressed(1, 90, 0)], 74, 3);
    let again = conditions(&b, &c);
    assert_eq!(again[0].message, "node 1 below min watermark (90 free pages)");
    assert_eq!((again[0].kind, again[0].t_s), (EventKind::UnderMin, 0.4));
}

#[test]
fn counters_that_go_backwards_or_vanish_are_not_conditions() {
    let mut a = reclaiming(0.0, vec![pressed(0, 5000, 70)], 100, 5);
    let b = reclaiming(0.2, vec![pressed(0, 5000, 3)], 10, 1);
    assert!(conditions(&a, &b).is_empty());
    a.nodes[0].numa_miss = None;
    assert!(conditions(&a, &reclaiming(0.2, vec![pressed(0, 5000, 900)], 100, 5)).is_empty());
}

#[test]
fn every_kind_serializes_as_its_name() {
    use EventKind::*;
    for kind in [
        BelowLow,
        BelowMin,
        Recovered,
        DirectReclaim,
        NodeReclaim,
        KswapdEpisode,
        OomKill,
        UnderLow,
        UnderMin,
        NumaFallback,
        AllocStalls,
        DirectScan,
        KswapdScan,
    ] {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.name(), "{kind:?}");
    }
}

#[test]
fn a_sample_from_a_reading_sums_zones_and_reads_the_machine_counters() {
    let root = numasleuth_kernel::test_support::fixture("zone-reclaim-incident");
    let reading = numasleuth_kernel::gather::memory_sample(&root, numasleuth_parse::gather::MemoryParts::WATCH)
        .complete()
        .unwrap();
    let sample = Sample::from_reading(1.5, &reading);
    assert_eq!(sample.t_s, 1.5);
    assert_eq!(
        sample.nodes.iter().map(|n| n.node).collect::<Vec<_>>(),
        reading.nodes().into_iter().collect::<Vec<_>>()
    );
    let vmstat = reading.vmstat.as_ref().unwrap();
    assert_eq!(sample.machine, machine_counters(vmstat));
    assert_eq!(sample.zone_reclaim_mode, reading.zone_reclaim_mode);
}

#[test]
fn cost_is_the_median_and_worst_sample() {
    assert_eq!(cost_of(&[], 1000.0), None);
    let cost = cost_of(&[30.0, 10.0, 20.0, 90.0], 1000.0).unwrap();
    // The upper median of an even count, as memwatch always reported.
    assert_eq!((cost.median_us, cost.max_us), (30.0, 90.0));
    assert_eq!(cost.share_of_interval_percent, 3.0);
}
