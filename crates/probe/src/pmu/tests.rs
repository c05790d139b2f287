use super::*;
use numasleuth_kernel::test_support::surviving;

fn software() -> Vec<EventSpec> {
    catalog::generic_events()
        .into_iter()
        .filter(|e| e.pmu == catalog::PMU_SOFTWARE)
        .collect()
}

fn argv(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn value(raw: &PmuRaw, name: &str) -> u64 {
    raw.counted
        .iter()
        .find(|e| e.spec.name == name)
        .unwrap_or_else(|| panic!("{name} not counted: {raw:#?}"))
        .readings
        .iter()
        .map(|r| r.value)
        .sum()
}

#[test]
fn a_command_is_counted_from_exec_to_exit_with_its_exit_code() {
    let spec = CountSpec {
        target: Target::Command {
            // Some work, so task-clock and faults are well above zero.
            argv: argv(&["sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; exit 3"]),
        },
        events: catalog::generic_events(),
        max_threads: 16,
    };
    let raw = count(&spec, &Stop::new()).unwrap();
    let TargetRaw::Command { exit_code, signal, .. } = &raw.target else {
        panic!("{raw:#?}")
    };
    assert_eq!((*exit_code, *signal), (Some(3), None));
    assert!(value(&raw, "task-clock") > 0, "{raw:#?}");
    assert!(value(&raw, "page-faults") > 0, "{raw:#?}");
    assert_eq!(
        value(&raw, "page-faults"),
        value(&raw, "minor-faults") + value(&raw, "major-faults")
    );
    assert_eq!(raw.counted.len() + raw.failed.len(), spec.events.len());
    for event in &raw.counted {
        for r in &event.readings {
            assert!(r.time_running_ns <= r.time_enabled_ns, "{event:#?}");
        }
    }
    // Whatever this machine lacks is said with its errno, never dropped.
    for f in &raw.failed {
        assert!(f.errno.is_some() && !f.message.is_empty(), "{f:#?}");
    }
}

#[test]
fn page_faults_follow_the_memory_a_command_touches() {
    let faults = |mib: u32| {
        let script = format!("b = bytearray({mib} << 20)\nfor i in range(0, len(b), 4096): b[i] = 1");
        let raw = count(
            &CountSpec {
                target: Target::Command {
                    argv: argv(&["python3", "-c", &script]),
                },
                events: software(),
                max_threads: 16,
            },
            &Stop::new(),
        )
        .unwrap();
        value(&raw, "page-faults")
    };
    let (small, large) = (faults(4), faults(64));
    // 60 MiB more is 15,360 more 4 KiB pages, each faulted once (fewer
    // with transparent huge pages, hence only half required).
    assert!(large > small + 7_000, "4 MiB: {small} faults, 64 MiB: {large}");
}

#[test]
fn a_running_process_is_counted_for_the_duration() {
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let spec = CountSpec {
        target: Target::Pid {
            pid: sleeper.id(),
            duration: Some(Duration::from_millis(200)),
        },
        events: software(),
        max_threads: 16,
    };
    let raw = count(&spec, &Stop::new());
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    let raw = raw.unwrap();
    let TargetRaw::Pid {
        threads_attached,
        process_exited,
        ..
    } = raw.target
    else {
        panic!("{raw:#?}")
    };
    assert_eq!((threads_attached, process_exited), (1, false));
    assert!(
        (150_000_000..5_000_000_000).contains(&raw.duration_ns),
        "{}",
        raw.duration_ns
    );
    // A task's events advance only while it is on a CPU, so a sleeping
    // process has tiny enabled times; the counter is there all the same.
    let task_clock = raw.counted.iter().find(|e| e.spec.name == "task-clock").unwrap();
    assert_eq!(task_clock.readings.len(), 1, "{task_clock:#?}");
    assert!(
        task_clock.readings[0].time_enabled_ns < raw.duration_ns,
        "{task_clock:#?}"
    );
}

#[test]
fn without_a_duration_a_process_is_counted_until_stopped() {
    let mut sleeper = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let spec = CountSpec {
        target: Target::Pid {
            pid: sleeper.id(),
            duration: None,
        },
        events: software(),
        max_threads: 16,
    };
    let stop = Stop::new();
    let requester = stop.clone();
    let waker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        requester.request();
    });
    let raw = count(&spec, &stop);
    waker.join().unwrap();
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    let raw = raw.unwrap();
    assert!(
        matches!(
            raw.target,
            TargetRaw::Pid {
                process_exited: false,
                threads_attached: 1,
                ..
            }
        ),
        "{raw:#?}"
    );
    // Ended by the request (a hang guard, not a timing).
    assert!(raw.duration_ns < 30_000_000_000, "{}", raw.duration_ns);
    assert!(raw.counted.iter().any(|e| e.spec.name == "task-clock"), "{raw:#?}");
}

#[test]
fn a_process_that_exits_ends_the_count_early() {
    let mut short = std::process::Command::new("sleep").arg("0.2").spawn().unwrap();
    let raw = count(
        &CountSpec {
            target: Target::Pid {
                pid: short.id(),
                duration: Some(Duration::from_secs(20)),
            },
            events: software(),
            max_threads: 16,
        },
        &Stop::new(),
    );
    short.wait().unwrap();
    let raw = raw.unwrap();
    assert!(
        matches!(
            raw.target,
            TargetRaw::Pid {
                process_exited: true,
                ..
            }
        ),
        "{raw:#?}"
    );
    assert!(raw.duration_ns < 10_000_000_000, "{}", raw.duration_ns);
}

#[test]
fn missing_processes_and_commands_are_clear_errors() {
    let missing = count(
        &CountSpec {
            target: Target::Pid {
                pid: i32::MAX as u32,
                duration: Some(Duration::from_millis(10)),
            },
            events: software(),
            max_threads: 16,
        },
        &Stop::new(),
    );
    assert_eq!(missing.unwrap_err(), PmuError::NoSuchProcess { pid: i32::MAX as u32 });
    let command = count(
        &CountSpec {
            target: Target::Command {
                argv: argv(&["numasleuth-no-such-command"]),
            },
            events: software(),
            max_threads: 16,
        },
        &Stop::new(),
    );
    assert_eq!(
        command.unwrap_err().to_string(),
        "cannot run `numasleuth-no-such-command`: command `numasleuth-no-such-command` not found in PATH"
    );
}

#[test]
fn an_event_the_kernel_does_not_know_fails_with_its_errno() {
    let bogus = EventSpec {
        name: "bogus".into(),
        pmu: "nowhere".into(),
        // No PMU registers this type.
        type_id: 0x7fff_0000,
        config: 0,
        config1: 0,
        config2: 0,
        config3: 0,
    };
    let raw = count(
        &CountSpec {
            target: Target::Command { argv: argv(&["true"]) },
            events: vec![bogus],
            max_threads: 1,
        },
        &Stop::new(),
    )
    .unwrap();
    assert!(raw.counted.is_empty());
    assert_eq!(raw.failed[0].errno_name(), "ENOENT", "{raw:#?}");
}

#[test]
fn threads_of_a_running_process_are_attached_and_new_ones_inherited() {
    // Three threads exist at attach; 0.5 s later a fourth spins for 0.4 s
    // of CPU. Only inheritance can count that thread's time.
    let script = "import threading, time\n\
        def spin():\n    end = time.process_time() + 0.4\n    while time.process_time() < end: pass\n\
        for _ in range(2): threading.Thread(target=time.sleep, args=(3,)).start()\n\
        time.sleep(0.5)\n\
        t = threading.Thread(target=spin); t.start(); t.join()\n\
        time.sleep(3)\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .spawn()
        .unwrap();
    // Wait until the two sleeping threads are there.
    let deadline = Instant::now() + Duration::from_secs(10);
    while crate::live_threads::thread_ids(child.id()).map_or(0, |t| t.len()) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let raw = count(
        &CountSpec {
            target: Target::Pid {
                pid: child.id(),
                duration: Some(Duration::from_millis(2000)),
            },
            events: software(),
            max_threads: 16,
        },
        &Stop::new(),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let raw = raw.unwrap();
    let TargetRaw::Pid { threads_attached, .. } = raw.target else {
        panic!("{raw:#?}")
    };
    assert_eq!(threads_attached, 3, "{raw:#?}");
    let task_clock_ns = value(&raw, "task-clock");
    assert!(
        task_clock_ns >= 300_000_000,
        "the spinning thread's 0.4 s was not inherited: {task_clock_ns} ns"
    );
}

#[test]
fn a_thread_cap_is_applied_and_said() {
    let script = "import threading, time\nfor _ in range(3): threading.Thread(target=time.sleep, args=(3,)).start()\ntime.sleep(3)\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while crate::live_threads::thread_ids(child.id()).map_or(0, |t| t.len()) < 4 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let raw = count(
        &CountSpec {
            target: Target::Pid {
                pid: child.id(),
                duration: Some(Duration::from_millis(50)),
            },
            events: software(),
            max_threads: 2,
        },
        &Stop::new(),
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let TargetRaw::Pid {
        threads_listed,
        threads_attached,
        threads_not_attached,
        ..
    } = raw.unwrap().target
    else {
        panic!()
    };
    assert_eq!((threads_listed, threads_attached, threads_not_attached), (4, 2, 2));
}

#[test]
fn counters_are_capped_by_events_times_threads() {
    assert_eq!(threads_to_attach(4096, 62), 1057);
    assert_eq!(threads_to_attach(4096, 1), 4096);
    assert_eq!(threads_to_attach(4096, 0), 4096);
    assert_eq!(threads_to_attach(4096, MAX_COUNTERS * 2), 1);
    assert_eq!(threads_to_attach(0, 1), 1);
}

/// A command that forks: what it leaves in the background goes with it,
/// and a stop request (Ctrl-C) ends the whole group.
#[test]
fn nothing_a_counted_command_started_survives_it() {
    let spec = |script: &str| CountSpec {
        target: Target::Command {
            argv: argv(&["sh", "-c", script]),
        },
        events: software(),
        max_threads: 16,
    };
    let raw = count(&spec("sleep 77.0404 & exit 0"), &Stop::new()).unwrap();
    assert!(
        matches!(raw.target, TargetRaw::Command { exit_code: Some(0), .. }),
        "{:?}",
        raw.target
    );
    assert_eq!(surviving("77.0404", &[]), Vec::<String>::new());
    let stop = Stop::new();
    stop.request();
    let raw = count(&spec("sleep 78.0505 & sleep 79.0505"), &stop).unwrap();
    assert!(
        matches!(raw.target, TargetRaw::Command { exit_code: None, .. }),
        "{:?}",
        raw.target
    );
    assert_eq!(surviving(".0505", &[]), Vec::<String>::new());
}

/// model's errno numbers are Linux's generic ones; libc says what they are
/// on the architecture this is built for.
#[test]
fn the_errno_numbers_are_libcs() {
    use numasleuth_model::perf::errno::Errno;
    let named = [
        (libc::EPERM, Errno::Perm),
        (libc::ENOENT, Errno::NoEntry),
        (libc::ESRCH, Errno::NoProcess),
        (libc::E2BIG, Errno::TooBig),
        (libc::EACCES, Errno::Access),
        (libc::EBUSY, Errno::Busy),
        (libc::ENODEV, Errno::NoDevice),
        (libc::EINVAL, Errno::Invalid),
        (libc::ENFILE, Errno::FileTable),
        (libc::EMFILE, Errno::TooManyFiles),
        (libc::ENOSPC, Errno::NoSpace),
        (libc::ENOSYS, Errno::NoSys),
        (libc::EOVERFLOW, Errno::Overflow),
        (libc::EOPNOTSUPP, Errno::NotSupported),
    ];
    for (number, errno) in named {
        assert_eq!(Errno::from_raw(number), errno, "{number}");
    }
}
