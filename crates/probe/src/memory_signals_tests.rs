use std::time::{Duration, Instant};

use numasleuth_kernel::{ReadError, Root};
use numasleuth_model::stop::Stop;

use super::*;

use numasleuth_kernel::test_support::fixture;

/// Both ways `follow` can fail, kept apart so a test can tell them.
#[derive(Debug)]
enum Failed {
    Read,
    Schedule,
}

impl From<ReadError> for Failed {
    fn from(_: ReadError) -> Self {
        Failed::Read
    }
}

impl From<ScheduleOutOfRange> for Failed {
    fn from(_: ScheduleOutOfRange) -> Self {
        Failed::Schedule
    }
}

fn schedule(interval: Duration, count: u128) -> Schedule {
    Schedule {
        start: Instant::now(),
        interval,
        count,
    }
}

#[test]
fn follow_hands_over_each_pair_in_order_and_times_every_read() {
    let root = fixture("qemu-two-nodes");
    let first = watch_sample(&root, 0.0).unwrap();
    assert_eq!(first.nodes.len(), 2);
    let mut seen = Vec::new();
    let cost = follow::<Failed>(
        &root,
        first,
        schedule(Duration::from_millis(1), 3),
        &Stop::new(),
        |p, c| {
            seen.push((p.t_s, c.t_s));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(cost.len(), 3);
    assert!(cost.iter().all(|us| *us >= 0.0));
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0].0, 0.0);
    // Each pair starts where the last one ended, later each time.
    for pair in seen.windows(2) {
        assert_eq!(pair[1].0, pair[0].1);
        assert!(pair[1].1 >= pair[0].1);
    }
}

#[test]
fn follow_takes_nothing_once_stopped() {
    let root = fixture("qemu-two-nodes");
    let stop = Stop::new();
    stop.request();
    let first = watch_sample(&root, 0.0).unwrap();
    let cost = follow::<Failed>(&root, first, schedule(Duration::from_secs(1), 5), &stop, |_, _| {
        panic!("no sample is due after a stop")
    })
    .unwrap();
    assert!(cost.is_empty());
}

#[test]
fn follow_stops_at_a_read_error_and_at_an_impossible_schedule() {
    let empty = tempfile::tempdir().unwrap();
    let root = Root::directory(empty.path()).unwrap();
    let first = watch_sample(&fixture("qemu-two-nodes"), 0.0).unwrap();
    let failed = follow::<Failed>(
        &root,
        first.clone(),
        schedule(Duration::from_millis(1), 2),
        &Stop::new(),
        |_, _| Ok(()),
    );
    assert!(matches!(failed, Err(Failed::Read)));
    let failed = follow::<Failed>(&root, first, schedule(Duration::MAX, 1), &Stop::new(), |_, _| Ok(()));
    assert!(matches!(failed, Err(Failed::Schedule)));
    assert_eq!(ScheduleOutOfRange.to_string(), "memwatch schedule out of range");
}

#[test]
fn follow_ends_at_the_callers_error() {
    let root = fixture("qemu-two-nodes");
    let first = watch_sample(&root, 0.0).unwrap();
    let mut calls = 0;
    let failed = follow::<Failed>(
        &root,
        first,
        schedule(Duration::from_millis(1), 5),
        &Stop::new(),
        |_, _| {
            calls += 1;
            Err(Failed::Schedule)
        },
    );
    assert!(matches!(failed, Err(Failed::Schedule)));
    assert_eq!(calls, 1);
}

/// A detector for the tests (analyze's is the real one): the nodes whose
/// free pages changed.
fn free_pages_changed(previous: &Sample, current: &Sample) -> Vec<u32> {
    let before = |node: u32| previous.nodes.iter().find(|n| n.node == node).map(|n| n.free_pages);
    current
        .nodes
        .iter()
        .filter(|n| before(n.node) != Some(n.free_pages))
        .map(|n| n.node)
        .collect()
}

#[test]
fn the_sampler_thread_samples_until_finished_and_finds_no_event_in_a_still_tree() {
    let sampler = Sampler::start(
        fixture("qemu-two-nodes"),
        Instant::now(),
        Duration::from_millis(1),
        free_pages_changed,
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let record = sampler.finish();
    assert_eq!(record.error, None);
    assert!(record.samples >= 2, "{record:?}");
    assert!(record.events.is_empty());
    assert_eq!(record.events_dropped, 0);
}

#[test]
fn the_sampler_thread_keeps_its_first_read_error() {
    let empty = tempfile::tempdir().unwrap();
    let sampler = Sampler::start(
        Root::directory(empty.path()).unwrap(),
        Instant::now(),
        Duration::from_millis(1),
        free_pages_changed,
    )
    .unwrap();
    let record = sampler.finish();
    assert_eq!(record.samples, 0);
    assert!(record.error.is_some());
}

#[test]
fn the_signal_sample_reads_fewer_parts_than_the_watch_sample() {
    let root = fixture("zone-reclaim-incident");
    let signals = sample(&root, 1.5).unwrap();
    let watched = watch_sample(&root, 1.5).unwrap();
    assert_eq!(signals.t_s, 1.5);
    assert_eq!(signals.zone_reclaim_mode, None);
    assert!(watched.zone_reclaim_mode.is_some());
    assert_eq!(signals.nodes.len(), watched.nodes.len());
}
