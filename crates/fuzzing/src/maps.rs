//! `/proc/PID/maps`, alone and streamed with `numa_maps`.
//!
//! The input is `maps`, then a NUL byte, then `numa_maps` (no NUL: the
//! process has no numa_maps, a kernel without NUMA). Both are written to a
//! temporary root and joined by [`process::for_each_vma`], whose reader
//! thread and batches must give exactly what a plain sequential join of
//! the same lines gives.

use std::fs;

use numasleuth_kernel::procfs::maps::{self, Mapping, Perms};
use numasleuth_kernel::procfs::numa_maps::{self, NumaMapsEntry};
use numasleuth_kernel::procfs::process::{self, Vma, VmaStreamSummary};
use numasleuth_kernel::Root;

use crate::text;

pub fn run(data: &[u8]) {
    let (maps_bytes, numa_bytes) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    whole_file(&text(maps_bytes));
    join(maps_bytes, numa_bytes);
}

fn whole_file(text: &str) {
    let Ok(mappings) = maps::parse(text) else {
        return;
    };
    for mapping in &mappings {
        assert!(mapping.start <= mapping.end);
        assert_eq!(mapping.len_bytes(), mapping.end - mapping.start);
        let perms = mapping.perms.to_string();
        assert_eq!(
            Perms::parse(&perms).ok(),
            Some(mapping.perms),
            "`{perms}` does not parse back"
        );
        if let Some(path) = mapping.backing.path() {
            assert!(!path.is_empty(), "a file mapping with an empty path");
        }
    }
}

fn join(maps_bytes: &[u8], numa_bytes: Option<&[u8]>) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let proc_dir = dir.path().join("proc/1");
    fs::create_dir_all(&proc_dir).expect("proc/1");
    fs::write(proc_dir.join("maps"), maps_bytes).expect("maps");
    match numa_bytes {
        Some(bytes) => fs::write(proc_dir.join("numa_maps"), bytes).expect("numa_maps"),
        None => fs::write(proc_dir.join("stat"), "1 (fuzz) S 0").expect("stat"),
    }
    let root = Root::directory(dir.path()).expect("root");
    let mut seen = Vec::new();
    let streamed = process::for_each_vma(&root, 1, |vma| seen.push(vma.clone()));
    let expected = sequential_join(maps_bytes, numa_bytes);
    match (streamed, expected) {
        (Ok(summary), Some((vmas, expected))) => {
            assert_eq!(summary, expected);
            assert_eq!(seen, vmas, "the streamed join differs from the sequential one");
        }
        (Err(_), None) => {}
        (Ok(summary), None) => panic!("streamed join accepted malformed input: {summary:?}"),
        (Err(e), Some(_)) => panic!("streamed join refused well-formed input: {e}"),
    }
}

/// Lines as `LineStream` gives them: split on newlines, lines of only
/// whitespace and NULs skipped, trailing NULs dropped, bad UTF-8 replaced.
fn stream_lines(bytes: &[u8]) -> Vec<String> {
    bytes
        .split_inclusive(|b| *b == b'\n')
        .filter(|line| !line.iter().all(|b| b.is_ascii_whitespace() || *b == 0))
        .map(|line| String::from_utf8_lossy(line).trim_end_matches(['\n', '\0']).to_string())
        .collect()
}

/// The join, one file after the other; `None` when either has a bad line.
fn sequential_join(maps_bytes: &[u8], numa_bytes: Option<&[u8]>) -> Option<(Vec<Vma>, VmaStreamSummary)> {
    let mappings: Vec<Mapping> = stream_lines(maps_bytes)
        .iter()
        .map(|l| maps::parse_line(l))
        .collect::<Result<_, _>>()
        .ok()?;
    let entries: Vec<NumaMapsEntry> = stream_lines(numa_bytes.unwrap_or_default())
        .iter()
        .map(|l| numa_maps::parse_line(l))
        .collect::<Result<_, _>>()
        .ok()?;
    let mut summary = VmaStreamSummary {
        vmas: mappings.len() as u64,
        numa_maps_available: numa_bytes.is_some(),
        unmatched_numa_lines: 0,
    };
    let mut entries = entries.into_iter().peekable();
    let mut vmas = Vec::new();
    for mapping in mappings {
        while entries.next_if(|e| e.start < mapping.start).is_some() {
            summary.unmatched_numa_lines += 1;
        }
        let numa = entries.next_if(|e| e.start == mapping.start);
        vmas.push(Vma { mapping, numa });
    }
    summary.unmatched_numa_lines += entries.count() as u64;
    Some((vmas, summary))
}
