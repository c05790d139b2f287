//! `move --range` with ranges far wider than anything mapped: pages come
//! from the process's mappings intersected with the range, never from the
//! range itself, and the number of pages one move considers is capped.

use crate::common;

use std::time::{Duration, Instant};

use common::{numasleuth, stderr};
use serde_json::Value;

/// Bytes a process has mapped, from its maps.
fn mapped_pages(pid: u32) -> u64 {
    let page = 4096;
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap()
        .lines()
        .map(|line| {
            let (start, end) = line.split_whitespace().next().unwrap().split_once('-').unwrap();
            let (start, end) = (
                u64::from_str_radix(start, 16).unwrap(),
                u64::from_str_radix(end, 16).unwrap(),
            );
            end.div_ceil(page) - start / page
        })
        .sum()
}

/// Runs `command` to the end (killed after 60 s) and returns its output
/// with its own peak resident set: wait4's rusage of that one child, not
/// RUSAGE_CHILDREN, which counts every child of this binary's other tests.
// The child is reaped by wait4 below, which also gives its rusage.
#[allow(clippy::zombie_processes)]
fn output_and_peak_rss_kib(mut command: std::process::Command) -> (std::process::Output, i64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let pid = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut status = 0;
    // SAFETY: rusage is plain integers, for which all zeroes is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 only writes the status and the struct it is given; the
    // child is ours and is not waited for anywhere else.
    while unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) } == 0 {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("numasleuth move did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = std::process::Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (output, usage.ru_maxrss)
}

struct Sleeper(std::process::Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_whole_address_space_is_the_mapped_pages() {
    let sleeper = Sleeper(std::process::Command::new("sleep").arg("60").spawn().unwrap());
    let pid = sleeper.0.id();
    // Let exec finish so the maps are sleep's own.
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        != "sleep"
    {
        assert!(Instant::now() < deadline, "sleep did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_numasleuth"));
    command.args([
        "move",
        &pid.to_string(),
        "--range",
        "0-ffffffffffffffff",
        "--to-node",
        "0",
        "--json",
    ]);
    let (output, peak_rss_kib) = output_and_peak_rss_kib(command);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(peak_rss_kib < 256 << 10, "peak RSS {peak_rss_kib} KiB");
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["pages_total"].as_u64().unwrap(), mapped_pages(pid), "{doc:#}");
    assert_eq!(doc["targets"][0]["end"], "0xffffffffffffffff");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("is not mapped by process"), "{notes}");
    assert!(!doc["numa_maps_before"].as_array().unwrap().is_empty());
}

#[test]
fn too_many_mapped_pages_are_refused_with_the_cap() {
    // 5 GiB reserved but never touched: 1.3 million pages mapped, none
    // resident, no memory used.
    let len = 5usize << 30;
    // SAFETY: an anonymous PROT_NONE reservation, unmapped below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(base, libc::MAP_FAILED);
    let start = base as u64;
    let range = format!("{start:#x}-{:#x}", start + len as u64);
    let output = numasleuth()
        .args([
            "move",
            &std::process::id().to_string(),
            "--range",
            &range,
            "--to-node",
            "0",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(base, len) };
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.starts_with("numasleuth: error: "), "{err}");
    assert!(
        err.contains("1310720 page(s)") && err.contains("at most 1048576 pages"),
        "{err}"
    );
}

#[test]
fn a_range_with_nothing_mapped_is_an_error() {
    let output = numasleuth()
        .args([
            "move",
            &std::process::id().to_string(),
            "--range",
            "1000-2000",
            "--to-node",
            "0",
        ])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("maps nothing in the pages asked for"), "{err}");
}
