//! The boot watchdog (guest.rs): a kernel that never reaches /init is killed
//! at the init limit, and a guest whose heartbeat stops once /init runs is
//! killed at the freeze limit; either is booted once more, and a second
//! failure is an error that says so. A stand-in `qemu` script plays the
//! hung or frozen guest, so the test takes seconds; it still builds a real
//! image, so it needs the same inputs as the guests (`cargo test -- --skip
//! qemu_` leaves it out visibly).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use numasleuth_testbed::console::{MARK_DONE, MARK_INIT};
use numasleuth_testbed::{env, guest, guests};

/// How the stand-in qemu fails on its first starts.
#[derive(Clone, Copy)]
enum Failure {
    /// No console line at all: a kernel that never starts /init.
    NoInit,
    /// /init's first line and one heartbeat, then nothing: a frozen guest.
    Frozen,
}

/// A `qemu` that fails as `failure` says on its first `fails` starts and
/// afterwards prints what a healthy /init would, then exits 0. The first
/// `-serial` is the console, the second the heartbeat.
fn fake_qemu(dir: &Path, fails: u32, failure: Failure) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let starts = dir.join("starts");
    let _ = fs::remove_file(&starts);
    let fail = match failure {
        Failure::NoInit => String::new(),
        Failure::Frozen => format!(r#"printf '%s\r\n' '{MARK_INIT}' > "$console"; echo 1.00 > "$beat""#),
    };
    let script = format!(
        r#"#!/bin/sh
console= beat=
while [ $# -gt 0 ]; do
    if [ "$1" = -serial ]; then
        if [ -z "$console" ]; then console=${{2#file:}}; else beat=${{2#file:}}; fi
    fi
    shift
done
echo start >> '{starts}'
: > "$console"
if [ "$(wc -l < '{starts}')" -le {fails} ]; then
    {fail}
    exec sleep 600
fi
printf '%s\r\n%s\r\n' '{MARK_INIT}' '{MARK_DONE}' > "$console"
"#,
        starts = starts.display()
    );
    let path = dir.join("qemu");
    fs::write(&path, script).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn starts(dir: &Path) -> usize {
    fs::read_to_string(dir.join("starts")).map_or(0, |s| s.lines().count())
}

fn host_with(qemu: PathBuf) -> env::HostEnv {
    let mut host = env::require("qemu boot watchdog");
    host.qemu = qemu;
    host.init_timeout_secs = 2;
    host.freeze_secs = 2;
    host.timeout_secs = 30;
    host
}

/// Runs a two-node guest named `name` under a stand-in qemu that fails as
/// `failure` says on its first `fails` starts; returns the run, its work
/// dir and how many times qemu was started.
fn run_failing(name: &str, fails: u32, failure: Failure) -> (Result<guest::GuestRun, String>, PathBuf, usize) {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let host = host_with(fake_qemu(&tmp.join("bin"), fails, failure));
    let mut spec = guests::two_nodes();
    spec.name = name.into();
    let workdir = tmp.join("work");
    let run = guest::run(&host, &spec, &workdir);
    (run, workdir, starts(&tmp.join("bin")))
}

/// Runs a guest whose first boot fails as `failure` says and whose second
/// is healthy; checks that exactly one retry happened and reached /init's
/// end, and returns the first boot's console, kept as `kept`.
fn boots_again(name: &str, failure: Failure, kept: &str) -> String {
    let (run, workdir, starts) = run_failing(name, 1, failure);
    let run = run.unwrap_or_else(|e| panic!("{e}"));
    assert!(run.transcript.done, "the second boot's /init reached its end");
    assert_eq!(starts, 2, "one failed boot, one retry");
    fs::read_to_string(workdir.join(kept))
        .unwrap_or_else(|e| panic!("the failed boot's console is kept as {kept}: {e}"))
}

/// Runs a guest whose first two boots fail as `failure` says; checks that
/// there was no third boot and returns the error.
fn gives_up(name: &str, failure: Failure) -> String {
    let (run, _, starts) = run_failing(name, 2, failure);
    let err = run.expect_err("two failed boots fail");
    assert_eq!(starts, 2, "no third boot");
    err
}

#[test]
fn qemu_boot_watchdog_boots_again_after_a_kernel_that_never_reaches_init() {
    boots_again("boot-watchdog-once", Failure::NoInit, "console-hung-boot.log");
}

#[test]
fn qemu_boot_watchdog_gives_up_after_two_hung_boots() {
    let err = gives_up("boot-watchdog-twice", Failure::NoInit);
    assert!(err.contains("did not start /init within 2 s, twice"), "{err}");
}

#[test]
fn qemu_boot_watchdog_boots_again_after_a_guest_that_froze() {
    let kept = boots_again("boot-watchdog-frozen-once", Failure::Frozen, "console-frozen.log");
    assert!(kept.contains(MARK_INIT), "{kept:?}");
}

#[test]
fn qemu_boot_watchdog_gives_up_after_two_frozen_boots() {
    let err = gives_up("boot-watchdog-frozen-twice", Failure::Frozen);
    assert!(err.contains("froze (no heartbeat for 2 s), twice"), "{err}");
}
