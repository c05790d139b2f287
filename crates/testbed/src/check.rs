//! Booting a guest, collecting what it printed, and the checks every guest
//! shares (commands succeeded, JSON parses, the snapshot replays to the
//! same answer). Guest-specific expectations live in tests/guests.rs.
//!
//! Why failures are collected instead of asserted one by one: a guest run
//! takes seconds of TCG time, and one run should report every wrong field,
//! not just the first.

use std::fmt::Debug;
use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::env::HostEnv;
use crate::facts::{self, KernelFacts};
use crate::guest::{self, GuestRun, GuestSpec};
use crate::topo;

/// Collected failures for one guest.
pub struct Checks {
    pub guest: String,
    pub failures: Vec<String>,
}

impl Checks {
    pub fn new(guest: &str) -> Self {
        Checks {
            guest: guest.to_string(),
            failures: Vec::new(),
        }
    }

    pub fn fail(&mut self, msg: impl Into<String>) {
        self.failures.push(msg.into());
    }

    pub fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) {
        if !ok {
            self.failures.push(msg());
        }
    }

    pub fn eq<T: PartialEq + Debug>(&mut self, what: &str, got: T, want: T) {
        if got != want {
            self.failures.push(format!("{what}: got {got:?}, want {want:?}"));
        }
    }

    /// Panics with every failure, or returns quietly.
    pub fn finish(self) {
        if !self.failures.is_empty() {
            panic!(
                "guest {}: {} check(s) failed:\n  - {}",
                self.guest,
                self.failures.len(),
                self.failures.join("\n  - ")
            );
        }
    }
}

/// Everything a guest produced, parsed as far as it would parse.
pub struct Outcome {
    pub run: GuestRun,
    pub kernel: KernelFacts,
    /// Live `numasleuth topo --json` from the guest, if it printed valid JSON.
    pub topo: Option<Value>,
    /// The same command on the host, replaying the guest's snapshot.
    pub replay: Option<Value>,
}

impl Outcome {
    pub fn boot_to_poweroff(&self) -> Duration {
        self.run.boot_to_poweroff
    }
}

/// Boots `spec` and runs the shared checks into `checks`. `Err` means there
/// is nothing to check at all (qemu failed, timed out, /init died).
/// With `fixture_dir`, the guest's snapshot is unpacked there.
pub fn boot_and_collect(
    host: &HostEnv,
    spec: &GuestSpec,
    workdir: &Path,
    fixture_dir: Option<&Path>,
    checks: &mut Checks,
) -> Result<Outcome, String> {
    let run = guest::run(host, spec, workdir)?;
    let sections = &run.transcript.sections;
    let section = |name: &str| sections.get(name);

    // The harness's own steps: if these fail, later failures are noise.
    for name in ["setup", "kernel"] {
        match section(name) {
            Some(s) if s.rc == 0 => {}
            Some(s) => checks.fail(format!(
                "guest step {name} exited {}: {}",
                s.rc,
                section(&format!("{name}.stderr")).map_or("", |e| e.text.trim())
            )),
            None => checks.fail(format!("guest step {name} printed no result")),
        }
    }
    let kernel = match section("kernel").map(|s| facts::parse(&s.text)) {
        Some(Ok(f)) => f,
        Some(Err(e)) => {
            checks.fail(e);
            KernelFacts::default()
        }
        None => KernelFacts::default(),
    };
    // A guest asked for one kernel must have booted it: `uname -r` starts
    // with its version and a dot ("6.1." is not a prefix of "6.12.x").
    let version = spec.kernel.version();
    checks.check(kernel.release.starts_with(&format!("{version}.")), || {
        format!("guest booted kernel {:?}, not {version}", kernel.release)
    });

    let topo = command_json(checks, sections, "topo");
    if let Some(t) = &topo {
        checks.eq("topo schema", t.get("schema"), Some(&Value::from("numasleuth.topo/1")));
    }

    let replay = replayed_snapshot(host, spec, workdir, fixture_dir, checks, sections)?;
    if let (Some(live), Some(offline)) = (&topo, &replay) {
        compare_replay(live, offline, checks);
    }

    Ok(Outcome {
        run,
        kernel,
        topo,
        replay,
    })
}

/// The guest's snapshot, decoded and replayed on the host with `--root`
/// (and unpacked into `fixture_dir` when given); `None` when there is none.
fn replayed_snapshot(
    host: &HostEnv,
    spec: &GuestSpec,
    workdir: &Path,
    fixture_dir: Option<&Path>,
    checks: &mut Checks,
    sections: &std::collections::BTreeMap<String, crate::console::Section>,
) -> Result<Option<Value>, String> {
    let mut replay = None;
    match sections.get("snapshot") {
        Some(s) if s.rc == 0 => {}
        Some(s) => checks.fail(format!(
            "guest `numasleuth snapshot` exited {}: {}",
            s.rc,
            sections.get("snapshot.stderr").map_or("", |e| e.text.trim())
        )),
        None => checks.fail("guest `numasleuth snapshot` printed no result"),
    }
    let snapshot = sections
        .get("snapshot.b64")
        .filter(|s| s.rc == 0)
        .ok_or_else(|| "snapshot tarball was not printed".to_string())
        .and_then(|s| topo::decode_base64(&s.text));
    match snapshot {
        Err(e) => checks.fail(e),
        Ok(bytes) => {
            let path = workdir.join("snapshot.tar.gz");
            fs::write(&path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
            match topo::replay(host, &path) {
                Ok(v) => replay = Some(v),
                Err(e) => checks.fail(e),
            }
            if let Some(dest) = fixture_dir {
                match topo::unpack_fixture(&path, dest) {
                    Ok(()) => crate::env::report(&format!(
                        "[testbed] {}: fixture written to {}",
                        spec.name,
                        dest.display()
                    )),
                    Err(e) => checks.fail(format!("updating fixture: {e}")),
                }
            }
        }
    }
    Ok(replay)
}

/// The live topo and the replay of the guest's snapshot must agree, but for
/// what changes from one run to the next.
fn compare_replay(live: &Value, offline: &Value, checks: &mut Checks) {
    let (mut live, mut offline) = (live.clone(), offline.clone());
    topo::strip_volatile(&mut live);
    topo::strip_volatile(&mut offline);
    let d = topo::diff(&live, &offline);
    checks.check(d.is_empty(), || {
        format!(
            "replayed snapshot differs from live topo (live != replay):\n      {}",
            d.join("\n      ")
        )
    });
}

/// One guest test from boot to verdict: boots `spec`, runs the shared
/// checks and then `expect`, prints the timings line (seen even when the
/// test passes) and panics with every failure collected.
pub fn run_checked(
    host: &HostEnv,
    spec: &GuestSpec,
    workdir: &Path,
    fixture_dir: Option<&Path>,
    expect: impl FnOnce(&Outcome, &mut Checks),
) {
    let mut checks = Checks::new(&spec.name);
    let outcome = boot_and_collect(host, spec, workdir, fixture_dir, &mut checks).unwrap_or_else(|e| panic!("{e}"));
    expect(&outcome, &mut checks);
    crate::env::report(&format!(
        "[testbed] {}: boot-to-poweroff {:.1} s, boot-to-verdict {:.1} s, kernel {}, {} failure(s); artefacts in {}",
        spec.name,
        outcome.boot_to_poweroff().as_secs_f64(),
        outcome.run.started.elapsed().as_secs_f64(),
        outcome.kernel.release,
        checks.failures.len(),
        workdir.display()
    ));
    checks.finish();
}

/// Parses a command section as JSON, recording why when it cannot.
pub fn command_json(
    checks: &mut Checks,
    sections: &std::collections::BTreeMap<String, crate::console::Section>,
    name: &str,
) -> Option<Value> {
    let stderr = sections
        .get(&format!("{name}.stderr"))
        .map_or(String::new(), |s| s.text.trim().to_string());
    let Some(s) = sections.get(name) else {
        checks.fail(format!("guest `numasleuth {name}` printed no result"));
        return None;
    };
    if s.rc != 0 {
        checks.fail(format!("guest `numasleuth {name} --json` exited {}: {stderr}", s.rc));
    }
    match serde_json::from_str(&s.text) {
        Ok(v) => Some(v),
        Err(e) => {
            checks.fail(format!(
                "guest `numasleuth {name} --json` printed invalid JSON ({e}): {:?}",
                s.text
            ));
            None
        }
    }
}
