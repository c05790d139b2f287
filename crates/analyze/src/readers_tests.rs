use super::*;

fn process(pid: u32, comm: &str, parent: Option<(u32, &str)>) -> ReaderProcess {
    ReaderProcess {
        pid,
        comm: comm.into(),
        cmdline: Some(format!("{comm} /proc/slabinfo")),
        parents: parent
            .map(|(pid, comm)| Ancestor { pid, comm: comm.into() })
            .into_iter()
            .collect(),
    }
}

fn open(t_s: f64, pid: u32, file: LockFile, target: Target) -> Open {
    Open {
        t_s,
        pid,
        tid: pid,
        file,
        target,
    }
}

/// A loop running `cat /proc/slabinfo` every 200 ms (a new PID each
/// time), an agent reading another process's smaps_rollup twice and its
/// own smaps once.
fn raw() -> ReadersRaw {
    let mut opens: Vec<Open> = (0..15u32)
        .map(|i| open(0.1 + 0.2 * f64::from(i), 1000 + i, LockFile::Slabinfo, Target::System))
        .collect();
    opens.push(open(0.5, 50, LockFile::SmapsRollup, Target::Process(60)));
    opens.push(open(1.5, 50, LockFile::SmapsRollup, Target::Process(60)));
    opens.push(open(1.6, 50, LockFile::Smaps, Target::Own));
    opens.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut processes: Vec<ReaderProcess> = (0..15).map(|i| process(1000 + i, "cat", Some((900, "sh")))).collect();
    processes.push(process(50, "node-agent", None));
    ReadersRaw {
        method: Method::Tracepoint {
            why_not_kprobe: "no kprobe PMU".into(),
        },
        files: LockFile::ALL.to_vec(),
        duration_s: 3.0,
        opens,
        opens_dropped: 0,
        processes,
        targets: vec![TargetProcess {
            pid: 60,
            comm: Some("postgres".into()),
            resident_bytes: Some(8 << 30),
        }],
        lost_records: 0,
        notes: vec![],
    }
}

#[test]
fn a_loop_of_short_processes_is_one_reader_with_every_open() {
    let summary = summarize(&raw());
    assert_eq!(summary.readers.len(), 2);
    let cat = &summary.readers[0];
    assert_eq!((cat.comm.as_str(), cat.opens, cat.processes), ("cat", 15, 15));
    assert_eq!(cat.parents[0].comm, "sh");
    assert_eq!(cat.pids.len(), 15);
    assert!((cat.opens_per_s - 5.0).abs() < 1e-9);
    assert!((cat.median_interval_s.unwrap() - 0.2).abs() < 1e-9);
    assert_eq!((cat.first_s, cat.last_s), (0.1, 0.1 + 0.2 * 14.0));
    assert_eq!(cat.cmdline.as_deref(), Some("cat /proc/slabinfo"));
    assert_eq!(name_with_parent(cat), "`cat` (child of `sh` 900)");
}

#[test]
fn own_smaps_is_left_out_and_targets_carry_their_size() {
    let summary = summarize(&raw());
    assert_eq!(summary.own_reads_left_out, 1);
    assert_eq!(summary.opens, 17);
    assert!(
        summary.notes.iter().any(|n| n.contains("own smaps")),
        "{:?}",
        summary.notes
    );
    let agent = &summary.readers[1];
    assert_eq!(
        (agent.comm.as_str(), agent.opens, agent.processes),
        ("node-agent", 2, 1)
    );
    assert_eq!(agent.median_interval_s, Some(1.0));
    let rollup = &agent.files[0];
    assert_eq!((rollup.file, rollup.opens), (LockFile::SmapsRollup, 2));
    assert_eq!(rollup.targets[0].comm.as_deref(), Some("postgres"));
    assert_eq!(
        (rollup.targets[0].resident_bytes, rollup.targets[0].opens),
        (Some(8 << 30), 2)
    );
}

#[test]
fn the_finding_names_processes_rate_and_remedy() {
    let found = finding(&summarize(&raw())).unwrap();
    assert_eq!((found.id, found.severity), ("lock-taking-reader", Severity::Warning));
    assert!(
        found.title.contains("2 process(es)") && found.title.contains("17 opens"),
        "{}",
        found.title
    );
    assert!(found.title.contains("/proc/slabinfo") && found.title.contains("/proc/PID/smaps_rollup"));
    let first = &found.evidence[0];
    assert!(first.text.contains("`cat` (child of `sh` 900)"), "{}", first.text);
    assert!(
        first.text.contains("5.0/s") && first.text.contains("15 processes"),
        "{}",
        first.text
    );
    assert_eq!(first.values.int("opens"), Some(15));
    assert_eq!(first.values.int("parent_pid"), Some(900));
    assert_eq!(first.source, "tracepoint:syscalls:sys_enter_open*");
    assert!(found.remedy.contains("/proc/net/sockstat") && found.remedy.contains("meminfo"));
    assert!(found.remedy.contains("status"), "{}", found.remedy);
    assert_eq!(found.incident, Some(incident::ZONE_RECLAIM));
}

#[test]
fn nothing_read_means_no_finding() {
    let mut quiet = raw();
    quiet.opens.clear();
    let summary = summarize(&quiet);
    assert!(summary.readers.is_empty());
    assert_eq!(finding(&summary), None);
    // Only own reads: still nothing to raise.
    quiet.opens.push(open(0.1, 50, LockFile::NumaMaps, Target::Own));
    assert_eq!(finding(&summarize(&quiet)), None);
}

#[test]
fn a_sampled_view_says_its_counts_are_lower_bounds() {
    let mut scanned = raw();
    scanned.method = Method::FdScan {
        interval_ms: 100,
        reason: "no perf".into(),
    };
    let found = finding(&summarize(&scanned)).unwrap();
    assert!(found.evidence.last().unwrap().text.contains("lower bounds"));
    assert_eq!(found.evidence[0].source, "/proc/*/fd");
}
