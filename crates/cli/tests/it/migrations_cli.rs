//! `numasleuth migrations`: a busy process whose affinity the test flips
//! 20 times between two CPUs shows at least 20 CPU moves, through the
//! tracepoint (tracefs mounted by the test) and through the sampled view
//! (`--method sampled`); without tracefs rights it falls back and says
//! why; `doctor --pid` runs the check. Node moves need two nodes: the QEMU
//! guest test (crates/testbed/tests/migrations_guest.rs) covers them.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{exit_2_stderr, json, numasleuth, require_root, stderr};
use serde_json::Value;

struct Busy(Child);

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn busy() -> Busy {
    Busy(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn pin(pid: u32, cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes
    // inside it; sched_setaffinity only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(pid as libc::pid_t, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "pin {pid} to CPU {cpu}"
        );
    }
}

/// The first two CPUs this test may use.
fn two_cpus() -> (usize, usize) {
    // SAFETY: as in `pin`; sched_getaffinity fills the set.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        set
    };
    // SAFETY: CPU_ISSET reads inside the set.
    let cpus: Vec<usize> = (0..1024).filter(|c| unsafe { libc::CPU_ISSET(*c, &set) }).collect();
    assert!(
        cpus.len() >= 2,
        "this test needs 2 CPUs to move a thread between: {cpus:?}"
    );
    (cpus[0], cpus[1])
}

/// Runs `migrations PID --json` (plus `extra`, as `runner` prefixes) while
/// flipping the process between two CPUs 20 times, `gap` apart.
fn flipped(runner: &[&str], extra: &[&str], gap: Duration) -> (Value, String) {
    let target = busy();
    let pid = target.0.id();
    let (a, b) = two_cpus();
    pin(pid, a);
    let seconds = (gap.as_secs_f64() * 20.0 + 1.5).to_string() + "s";
    let mut command = match runner.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(assert_cmd::cargo::cargo_bin("numasleuth"));
            c
        }
        None => Command::new(assert_cmd::cargo::cargo_bin("numasleuth")),
    };
    let child = command
        .args(["migrations", &pid.to_string(), "--json", "--duration", &seconds])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let it open its events (or take its first reading) before the flips.
    std::thread::sleep(Duration::from_millis(700));
    for i in 0..20 {
        pin(pid, if i % 2 == 0 { b } else { a });
        std::thread::sleep(gap);
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    (serde_json::from_slice(&output.stdout).unwrap(), stderr(&output))
}

fn only_thread(doc: &Value) -> &Value {
    let threads = doc["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1, "{doc:#}");
    &threads[0]
}

fn mount_tracefs() {
    if std::path::Path::new("/sys/kernel/tracing/events/sched/sched_migrate_task/id").exists() {
        return;
    }
    // Test setup, as root: numasleuth itself never mounts anything.
    let status = Command::new("mount")
        .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        .status()
        .unwrap();
    assert!(status.success(), "mount tracefs");
}

#[test]
fn tracepoint_counts_every_flip() {
    require_root("it mounts tracefs and opens a system-wide tracepoint");
    mount_tracefs();
    let (doc, _) = flipped(&[], &["--method", "tracepoint"], Duration::from_millis(50));
    assert_eq!(doc["schema"], "numasleuth.migrations/2");
    assert_eq!(doc["method"]["kind"], "tracepoint", "{doc:#}");
    let thread = only_thread(&doc);
    assert!(thread["cpu_migrations"].as_u64().unwrap() >= 20, "{doc:#}");
    assert_eq!(thread["comm"], "sh");
    assert!(thread["cpus_visited"].as_array().unwrap().len() >= 2, "{thread:#}");
    assert!(
        doc["numa_balancing"]["tasks"].as_array().is_some_and(|t| t.len() == 1),
        "{doc:#}"
    );
}

#[test]
fn sampled_view_counts_flips_and_says_it_is_sampled() {
    let (doc, _) = flipped(&[], &["--method", "sampled"], Duration::from_millis(150));
    assert_eq!(doc["method"]["kind"], "sampled", "{doc:#}");
    assert_eq!(doc["method"]["interval_ms"], 10);
    assert!(only_thread(&doc)["cpu_migrations"].as_u64().unwrap() >= 20, "{doc:#}");
    assert!(doc["notes"][0].as_str().unwrap().starts_with("sampled view"), "{doc:#}");
}

#[test]
fn without_tracepoint_rights_it_falls_back_and_says_why() {
    require_root("it runs numasleuth as another user");
    mount_tracefs();
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
    let (doc, err) = flipped(&nobody, &[], Duration::from_millis(150));
    assert_eq!(doc["method"]["kind"], "sampled", "{doc:#}");
    let reason = doc["method"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("not readable") || reason.contains("kernel.perf_event_paranoid"),
        "{reason}"
    );
    assert!(err.contains("sampling /proc/PID/task/*/stat instead"), "{err}");
    assert!(only_thread(&doc)["cpu_migrations"].as_u64().unwrap() >= 20, "{doc:#}");
    // Asked for the tracepoint only: a clear error instead.
    let output = Command::new(nobody[0])
        .args(&nobody[1..])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["migrations", "1", "--method", "tracepoint", "--duration", "200ms"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("cannot use the sched:sched_migrate_task tracepoint"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn all_tasks_and_errors() {
    let doc = json(&[
        "migrations",
        "--all",
        "--json",
        "--duration",
        "300ms",
        "--method",
        "sampled",
    ]);
    assert!(doc["pid"].is_null());
    assert!(doc["threads"].as_array().unwrap().len() > 1, "{doc:#}");
    let text = exit_2_stderr(&["migrations", "2", "--duration", "200ms"]);
    assert!(text.contains("process 2 is a kernel thread"), "{text}");
    let text = exit_2_stderr(&["migrations"]);
    assert!(text.contains("--all"), "{text}");
    exit_2_stderr(&["migrations", "1", "--interval", "0ms"]);
    exit_2_stderr(&["migrations", "1", "--duration", "2h"]);
}

#[test]
fn doctor_pid_runs_the_migrations_check() {
    let target = busy();
    let out = numasleuth()
        .args(["doctor", "--json", "--pid", &target.0.id().to_string()])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ran: Vec<&str> = doc["checks_run"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert!(ran.contains(&"process-migrations"), "{doc:#}");
}
