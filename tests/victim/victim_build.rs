//! Builds and runs `tests/victim/victim.c` for integration tests.
//!
//! Included by path from the test crates that need it. Without gcc the
//! test fails and says so: `scripts/test-all` installs gcc, and a test
//! that cannot run must never pass.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/victim/victim.c")
}

/// Compiles the victim with the given extra gcc flags (`-no-pie`,
/// `-static`) into `dir`. A missing gcc fails the test.
pub fn build(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let status = Command::new("gcc")
        .args(["-O1", "-g", "-pthread", "-fno-toplevel-reorder"])
        .args(flags)
        .arg(source())
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => out,
        Ok(s) => panic!("gcc failed on the victim: {s}"),
        Err(e) => panic!("gcc not found ({e}): the victim tests need it (scripts/test-all installs it)"),
    }
}

/// A running victim; killed when dropped.
pub struct Victim {
    pub child: Child,
    pub pid: u32,
    pub nil_root: u64,
    pub log_level: u64,
    pub line: String,
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the victim and waits for its start line (its globals are then
/// first-touched and its workers about to start).
pub fn start(binary: &Path, args: &[&str]) -> Victim {
    let mut child = Command::new(binary)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the victim");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .expect("victim start line");
    let field = |key: &str| -> String {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key}= in `{line}`"))
            .to_string()
    };
    let hex = |key: &str| u64::from_str_radix(field(key).trim_start_matches("0x"), 16).unwrap();
    let victim = Victim {
        pid: field("pid").parse().unwrap(),
        nil_root: hex("nil_root"),
        log_level: hex("log_level"),
        line: line.clone(),
        child,
    };
    // Let the workers start and touch their stacks.
    std::thread::sleep(std::time::Duration::from_millis(300));
    victim
}
