//! Every golden file of every crate (`crates/*/tests/snapshots/*.snap`)
//! writes CPU, node and thread lists the one way people read them
//! (`numasleuth_parse::human_list`: `0-15`, `0-12:4`): no run of three or
//! more consecutive numbers may appear written out (`0,1,2`).

use std::fs;
use std::path::{Path, PathBuf};

/// Runs of at least this many consecutive numbers, written out, fail.
const RUN: usize = 3;

/// Each maximal `a,b,c` or `a, b, c` sequence of whole numbers in `text`
/// (not part of a decimal or a longer token), with the line it starts on.
fn number_sequences(text: &str) -> Vec<(usize, Vec<u64>, String)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_token = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.');
        if !(bytes[i].is_ascii_digit() && starts_token) {
            i += 1;
            continue;
        }
        let start = i;
        let mut numbers = Vec::new();
        loop {
            let digits = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            numbers.push(text[digits..i].parse::<u64>().unwrap_or(u64::MAX));
            // A separator is `,` with at most one space, then a digit.
            let mut next = i;
            if next < bytes.len() && bytes[next] == b',' {
                next += 1;
                if next < bytes.len() && bytes[next] == b' ' {
                    next += 1;
                }
            }
            if next > i && next < bytes.len() && bytes[next].is_ascii_digit() {
                i = next;
            } else {
                break;
            }
        }
        // `1.5,2,3` or `12.3`: a decimal is not an id list.
        let decimal = i < bytes.len() && bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if numbers.len() >= RUN && !decimal {
            let line = text[..start].matches('\n').count() + 1;
            found.push((line, numbers, text[start..i].to_string()));
        }
    }
    found
}

/// The longest stretch of `numbers` where each is the previous plus one.
fn longest_run(numbers: &[u64]) -> usize {
    let (mut best, mut run) = (usize::from(!numbers.is_empty()), 1);
    for w in numbers.windows(2) {
        run = if w[0].checked_add(1) == Some(w[1]) { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

fn snapshot_files() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for entry in fs::read_dir(&crates).unwrap().flatten() {
        let dir = entry.path().join("tests/snapshots");
        let Ok(listing) = fs::read_dir(&dir) else { continue };
        files.extend(
            listing
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "snap")),
        );
    }
    files.sort();
    files
}

#[test]
fn no_golden_file_writes_out_a_run_of_consecutive_numbers() {
    let files = snapshot_files();
    assert!(
        files.len() > 50,
        "only {} golden files found: is the layout the same?",
        files.len()
    );
    let mut offences = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for (line, numbers, written) in number_sequences(&text) {
            if longest_run(&numbers) >= RUN {
                offences.push(format!("{}:{line}: {written}", file.display()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "lists written out instead of as runs (use numasleuth_parse::human_list):\n{}",
        offences.join("\n")
    );
}

/// The check itself catches what it should and nothing else.
#[test]
fn the_check_finds_written_out_runs_only() {
    let runs = |text: &str| -> Vec<String> {
        number_sequences(text)
            .into_iter()
            .filter(|(_, n, _)| longest_run(n) >= RUN)
            .map(|(_, _, w)| w)
            .collect()
    };
    assert_eq!(runs("CPUs 0,1,2,3 and"), ["0,1,2,3"]);
    assert_eq!(runs("threads 4243, 4244, 4245"), ["4243, 4244, 4245"]);
    assert_eq!(runs("x\n8,9,10,12"), ["8,9,10,12"]);
    assert!(runs("CPUs 0-15, 0-12:4, 0,8,1,9, 0,2,4").is_empty());
    assert!(runs("23,819 samples; 1,234,567 bytes; 5,6").is_empty());
    assert!(runs("a decimal 3,4,5.5 ends it").is_empty());
    assert!(runs("rgb(0,1,2)").len() == 1, "an id-like run anywhere counts");
    assert!(runs("v1,2,3").is_empty(), "part of a longer token");
}
