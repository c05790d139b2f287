//! Real child processes on this machine: pinning, release, the probe,
//! output capture, exits and refusals. No timing is asserted except that
//! we do not wait for what is not coming.

use std::ffi::OsStr;
use std::time::Duration;

use super::*;
use crate::affinity::allowed_cpus;
use numasleuth_kernel::test_support::surviving;

fn has_value(line: &str) -> bool {
    line.starts_with("value")
}

fn spec<'a>(args: &'a [&'a OsStr], cpu: u32) -> RunSpec<'a> {
    RunSpec {
        program: OsStr::new("sh"),
        args,
        start_cpu: cpu,
        release: None,
        settle: Duration::from_secs(30),
        matches: &has_value,
        timeout: None,
        stop: Box::leak(Box::new(Stop::new())),
    }
}

/// A workload that forks: at the timeout, on a stop request and at its
/// own exit, nothing it started survives the run.
#[test]
fn nothing_a_workload_started_survives_its_run() {
    let cpu = allowed_cpus().unwrap()[0];
    let timed = sh("sleep 77.0101 & sleep 78.0101");
    let mut run = spec(&timed, cpu);
    run.timeout = Some(Duration::from_millis(300));
    assert!(run_once(&run, |_| ()).unwrap().timed_out);
    assert_eq!(surviving("7.0101", &[]), Vec::<String>::new());

    let stop = Stop::new();
    stop.request();
    let stopped = sh("sleep 77.0202 & sleep 78.0202");
    let mut run = spec(&stopped, cpu);
    run.stop = &stop;
    let record = run_once(&run, |_| ()).unwrap();
    assert!(record.stopped && !record.timed_out);
    assert_eq!(surviving("7.0202", &[]), Vec::<String>::new());

    // The command exits at once, leaving a background child holding the
    // output open: the child goes with it, and the output closes at once.
    let exits = sh("sleep 77.0303 & echo value 1");
    let record = run_once(&spec(&exits, cpu), |_| ()).unwrap();
    assert_eq!(record.exit.code, Some(0));
    assert_eq!(record.output.note, None, "the output was not left open");
    assert_eq!(surviving("77.0303", &[]), Vec::<String>::new());
}

#[test]
fn a_workload_past_its_timeout_is_killed() {
    let script = sh("echo value 1; sleep 30");
    let mut run = spec(&script, allowed_cpus().unwrap()[0]);
    run.timeout = Some(Duration::from_millis(300));
    let record = run_once(&run, |_| ()).unwrap();
    assert!(record.timed_out);
    assert_eq!(record.exit.signal, Some(libc::SIGKILL));
    assert_eq!(record.output.last_match.map(|(_, l)| l), Some("value 1".to_string()));
}

fn sh(script: &str) -> [&OsStr; 2] {
    [OsStr::new("-c"), OsStr::new(script)]
}

fn allowed_line(output: &Output) -> String {
    output
        .tail
        .iter()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .cloned()
        .unwrap_or_default()
}

#[test]
fn the_workload_starts_pinned_and_its_metric_line_is_kept() {
    for cpu in allowed_cpus().unwrap() {
        let args = sh("echo value 1; echo value 2; grep Cpus_allowed_list /proc/self/status");
        let record = run_once(&spec(&args, cpu), |_| ()).unwrap();
        assert_eq!(allowed_line(&record.output), format!("Cpus_allowed_list:\t{cpu}"));
        assert_eq!(record.output.last_match, Some((2, "value 2".into())));
        assert_eq!(record.exit.code, Some(0));
        assert_eq!(record.start_cpu, cpu);
        assert!(record.sample.is_none(), "exited long before the settle time");
        assert!(record.exit.usage.minor_faults > 0);
        assert!(record.wall_ns > 0 && record.wall_ns < 20_000_000_000);
    }
}

#[test]
fn release_widens_the_threads_back_to_every_allowed_cpu() {
    let all = allowed_cpus().unwrap();
    let args = sh("sleep 0.4; grep Cpus_allowed_list /proc/self/status");
    let mut run = spec(&args, all[0]);
    run.release = Some((Duration::from_millis(50), &all));
    let record = run_once(&run, |_| ()).unwrap();
    // Started pinned, released: whatever the count, it is a count (we run
    // as root here) or a stated refusal, never a silent zero.
    match &record.cpu_migrations {
        Ok(_) => {}
        Err(why) => assert!(why.to_string().contains("perf"), "{why}"),
    }
    let release = record.release.expect("released");
    assert_eq!(release.threads_widened, 1, "{release:?}");
    let widened = allowed_line(&record.output);
    let expected: Vec<String> = all.iter().map(u32::to_string).collect();
    // The kernel writes ranges; compare as sets.
    let listed = widened.trim_start_matches("Cpus_allowed_list:").trim();
    let parsed: Vec<u32> = listed
        .split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().unwrap()..=b.parse().unwrap()).collect::<Vec<_>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect();
    assert_eq!(parsed, all, "{widened} vs {expected:?}");
}

#[test]
fn the_probe_sees_the_running_pinned_child_at_the_settle_time() {
    let cpu = *allowed_cpus().unwrap().last().unwrap();
    let args = sh("sleep 0.5");
    let mut run = spec(&args, cpu);
    run.settle = Duration::from_millis(100);
    let record = run_once(&run, |pid| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .unwrap()
            .to_string()
    })
    .unwrap();
    assert_eq!(record.sample.unwrap(), format!("Cpus_allowed_list:\t{cpu}"));
    assert!(record.sample_after_ms.unwrap() >= 100);
}

#[test]
fn exits_and_signals_are_told_apart() {
    let cpu = allowed_cpus().unwrap()[0];
    let args = sh("exit 3");
    let exit = run_once(&spec(&args, cpu), |_| ()).unwrap().exit;
    assert_eq!((exit.code, exit.signal), (Some(3), None));
    let args = sh("kill -9 $$");
    let exit = run_once(&spec(&args, cpu), |_| ()).unwrap().exit;
    assert_eq!((exit.code, exit.signal), (None, Some(9)));
}

/// A child that left the workload's process group (setsid) is not killed
/// with it; if it holds the output open, the run still ends.
#[test]
fn a_background_child_holding_the_output_does_not_hang_the_run() {
    let cpu = allowed_cpus().unwrap()[0];
    // The child leaves the group before the parent goes on: no race.
    let script = "import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n    os.setsid()\n    os.write(w, b'x')\n    time.sleep(4)\n    os._exit(0)\nos.read(r, 1)\nprint('value 7', flush=True)\n";
    let args = [OsStr::new("-c"), OsStr::new(script)];
    let mut run = spec(&args, cpu);
    run.program = OsStr::new("python3");
    let record = run_once(&run, |_| ()).unwrap();
    assert_eq!(record.output.last_match.unwrap().1, "value 7");
    assert!(record.output.note.unwrap().contains("background child"));
}

#[test]
fn a_missing_command_and_an_impossible_cpu_are_errors() {
    let cpu = allowed_cpus().unwrap()[0];
    let mut run = spec(&[], cpu);
    run.program = OsStr::new("/nonexistent/numasleuth-no-such-program");
    let error = run_once(&run, |_| ()).unwrap_err().to_string();
    assert!(error.contains("no such command"), "{error}");
    let args = sh("true");
    let error = run_once(&spec(&args, 1 << 19), |_| ()).unwrap_err().to_string();
    assert!(error.contains("offline or outside"), "{error}");
}

#[test]
fn a_workload_that_moves_itself_counts_its_migrations() {
    let all = allowed_cpus().unwrap();
    assert!(all.len() >= 2, "this test needs two allowed CPUs, has {all:?}");
    // The shell starts on the first CPU and moves itself to the second,
    // after a pause: moves in the microseconds before the counter is
    // attached are not counted (see migrations.rs).
    let script = format!(
        "sleep 0.2; taskset -pc {} $$ > /dev/null; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done",
        all[1]
    );
    let args = sh(&script);
    let record = run_once(&spec(&args, all[0]), |_| ()).unwrap();
    assert_eq!(record.exit.code, Some(0), "{:?}", record.output.tail);
    let migrations = record
        .cpu_migrations
        .expect("root may count kernel-side software events");
    assert!(migrations >= 1, "{migrations}");
    // Pinned and never moved: nothing to count. The pause keeps the shell
    // alive until the counter is attached, however loaded the machine.
    let args = sh("sleep 0.3; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done");
    let record = run_once(&spec(&args, all[0]), |_| ()).unwrap();
    assert!(matches!(record.cpu_migrations, Ok(0)), "{:?}", record.cpu_migrations);
}
