//! `move --range` with ranges far wider than anything mapped: pages come
//! from the process's mappings intersected with the range, never from the
//! range itself, and the number of pages one move considers is capped.

mod common;

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

/// Largest resident set of any child this test process has waited for.
fn children_peak_rss_kib() -> i64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0);
    usage.ru_maxrss
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
    let started = Instant::now();
    let output = numasleuth()
        .args([
            "move",
            &pid.to_string(),
            "--range",
            "0-ffffffffffffffff",
            "--to-node",
            "0",
            "--json",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        children_peak_rss_kib() < 256 << 10,
        "peak RSS {} KiB",
        children_peak_rss_kib()
    );
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
