use numasleuth_model::perf::watch::{IpHits, ThreadRaw};

use super::*;

fn thread(tid: u32, hits: u64, ips: &[(u64, u64)], attached_at_s: f64) -> ThreadRaw {
    ThreadRaw {
        tid,
        attached_at_s,
        watched_s: 2.0 - attached_at_s,
        hits,
        exited: false,
        sampled: true,
        ip_hits: ips.iter().map(|&(ip, samples)| IpHits { ip, samples }).collect(),
        lost_samples: 0,
        throttle_events: 0,
    }
}

fn raw(threads: Vec<ThreadRaw>) -> WatchRaw {
    WatchRaw {
        pid: 42,
        address: 0x4140,
        len_bytes: 8,
        access: Access::Write,
        duration_s: 2.0,
        rescan_interval_ms: 100,
        rescans: 19,
        threads,
        threads_missed: 0,
        process_exited: false,
        problems: vec![],
    }
}

fn at(address: u64, function: &str, line: u32) -> CodeLocation {
    CodeLocation {
        address,
        object: Some("/opt/victim".into()),
        symbol: Some(function.into()),
        offset_bytes: Some(0x32),
        function: Some(function.into()),
        inlined_into: None,
        path: Some("/src/victim.c".into()),
        line: Some(line),
    }
}

#[test]
fn rates_and_writers_ranked() {
    let raw = raw(vec![
        thread(10, 0, &[], 0.0),
        thread(11, 300, &[(0x1327, 100), (0x1339, 100), (0x1344, 100)], 0.0),
        thread(12, 150, &[(0x1327, 50), (0x1339, 50), (0x1344, 50), (0x2000, 1)], 1.0),
    ]);
    let locations = [
        at(0x1327, "apply_op", 75),
        at(0x1339, "apply_op", 78),
        at(0x1344, "apply_op", 79),
    ];
    let s = summarize(
        &raw,
        &locations,
        Target {
            symbol: Some("nil_root".into()),
            object: None,
        },
    );
    assert_eq!(s.writes_total, 450);
    assert_eq!(s.writes_per_sec, 225.0);
    assert_eq!(s.threads[0].tid, 11);
    assert_eq!(s.threads[0].writes_per_sec, 150.0);
    assert_eq!(s.threads[1].writes_per_sec, 150.0, "tid 12 was watched for 1 s");
    assert_eq!(s.threads[2].writes, 0);
    assert_eq!(s.samples_total, 451);
    let top = &s.writers[0];
    assert_eq!(top.function.as_deref(), Some("apply_op"));
    assert_eq!(top.file.as_deref(), Some("victim.c"));
    assert_eq!(top.line, Some(75));
    assert_eq!(top.samples, 150);
    assert_eq!(top.tids, vec![11, 12]);
    assert_eq!(top.symbol.as_deref(), Some("apply_op+0x32"));
    let unknown = s.writers.last().unwrap();
    assert_eq!((unknown.function.clone(), unknown.samples), (None, 1));
    assert_eq!(unknown.addresses, vec![0x2000]);
    assert!(s.notes.iter().any(|n| n.contains("lower bound")));
    assert!(s.notes.iter().any(|n| n.contains("(1 joined late;")), "{:?}", s.notes);
}

#[test]
fn nothing_written_says_so() {
    let s = summarize(&raw(vec![thread(10, 0, &[], 0.0)]), &[], Target::default());
    assert_eq!(s.writes_total, 0);
    assert!(s.writers.is_empty());
    assert!(
        s.notes[0].starts_with("no write by user code in 2.0 s"),
        "{:?}",
        s.notes
    );
}

#[test]
fn watched_length() {
    assert_eq!(choose_len(0x4140, Some(8), None), Ok(8));
    assert_eq!(choose_len(0x4148, Some(4), None), Ok(4));
    assert_eq!(choose_len(0x4144, Some(64), None), Ok(4), "aligned to 4 only");
    assert_eq!(choose_len(0x4141, None, None), Ok(1));
    assert_eq!(choose_len(0x4140, Some(2), None), Ok(2));
    assert_eq!(choose_len(0x4140, None, Some(4)), Ok(4));
    let err = choose_len(0x4142, None, Some(4)).unwrap_err().to_string();
    assert!(err.contains("not aligned to 4 bytes"), "{err}");
    assert!(choose_len(0x4140, None, Some(3)).is_err());
}

#[test]
fn a_len_wider_than_the_symbol_says_it_covers_the_neighbour() {
    let note = len_beyond_object(8, Some(4)).unwrap();
    assert!(note.starts_with("--len 8 is wider than the symbol (4 bytes)"), "{note}");
    assert!(note.contains("the 4 byte(s) after it"), "{note}");
    assert_eq!(len_beyond_object(4, Some(4)), None);
    assert_eq!(len_beyond_object(8, None), None);
    assert_eq!(len_beyond_object(8, Some(0)), None);
}
