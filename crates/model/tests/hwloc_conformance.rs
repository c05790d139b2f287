//! Conformance with hwloc's `lstopo` on hwloc's own Linux test captures.
//!
//! `../shared/fixtures/hwloc` (or `$NUMASLEUTH_HWLOC_FIXTURES`) holds the
//! `/proc` and `/sys` trees that hwloc's test suite captured on real machines
//! (`NAME.tar.bz2`), and for most of them what `lstopo` printed for that tree
//! (`NAME.console`, made with the options and environment in `NAME.test`).
//! `lstopo` is an independent, trusted reading of the same files, so for
//! every capture we build our [`Topology`] and check, node by node, that we
//! agree with it on which NUMA nodes exist, which CPUs each serves, how much
//! memory each holds, and the SLIT distances between them.
//!
//! hwloc and numasleuth do not show the same thing in every case, on purpose:
//! hwloc shows what this process may use and where each memory is best used
//! from, numasleuth shows what the kernel says about the whole machine and
//! reports the limits beside it. [`hwloc_view`] turns our model into what
//! `lstopo` would show; each rule there says why we differ. Everything else
//! must match exactly, or be listed in [`ALLOWED_MISMATCHES`] with the reason
//! the difference is deliberate.
//!
//! The captures are read from the shared folder at test time and never
//! copied into this repository, so the test is `#[ignore]`d with the reason
//! (every `cargo test` summary counts it as ignored), and `scripts/test-all`
//! runs it with `--ignored` wherever the folder exists and says so where it
//! does not. Run with `--ignored` and no captures, it fails saying where it
//! looked. Each is unpacked with the system
//! `tar -xjf` into its own temporary folder. The summary, every mismatch and
//! the time taken are printed past the harness's output capture; set
//! `NUMASLEUTH_HWLOC_VERBOSE=1` to also see which hwloc rule shaped each
//! expectation.

mod hwloc;

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Instant;

use hwloc::allow::{ALLOWED_MISMATCHES, BUILD_DIAGNOSES};
use hwloc::compare::Checked;
use hwloc::corpus::{fixtures_dir, list_captures};
use hwloc::run::{run_all, Outcome};

/// Per-capture notes (which hwloc rules applied) are printed when this is set.
const VERBOSE_ENV: &str = "NUMASLEUTH_HWLOC_VERBOSE";

#[test]
#[ignore = "needs hwloc's captures in ../shared/fixtures/hwloc or $NUMASLEUTH_HWLOC_FIXTURES; scripts/test-all runs it with --ignored where they exist"]
fn numa_nodes_match_lstopo_on_hwloc_captures() {
    let started = Instant::now();
    let Some(dir) = fixtures_dir() else {
        panic!(
            "hwloc's captures not found: put them in ../shared/fixtures/hwloc (beside the repository) or set \
             $NUMASLEUTH_HWLOC_FIXTURES"
        );
    };
    let captures = list_captures(&dir);
    assert!(!captures.is_empty(), "{}: no NAME.tar.bz2 captures", dir.display());

    let outcomes = run_all(&captures);

    let mut build_failures = Vec::new();
    let mut checked = Checked::default();
    let mut with_allowed = 0;
    let mut compared = 0;
    let mut matched = 0;
    let mut failing = Vec::new();
    let mut allowed_used = BTreeSet::new();
    let verbose = std::env::var_os(VERBOSE_ENV).is_some();
    let mut report = Vec::new();
    for (capture, outcome) in captures.iter().zip(&outcomes) {
        let comparison = match outcome {
            Outcome::BuildFailed(why) => {
                build_failures.push(format!("{}: {}", capture.name, visible(why)));
                continue;
            }
            Outcome::Built(None) => continue,
            Outcome::Built(Some(comparison)) => comparison,
        };
        compared += 1;
        checked.nodes += comparison.checked.nodes;
        checked.memories += comparison.checked.memories;
        checked.distances += comparison.checked.distances;
        if verbose {
            for note in &comparison.notes {
                report.push(format!("  note {}: {note}", capture.name));
            }
        }
        let mut unexplained = 0;
        for mismatch in &comparison.mismatches {
            let allowed = ALLOWED_MISMATCHES.iter().position(|a| {
                a.capture == capture.name && a.field == mismatch.field && mismatch.detail.contains(a.detail)
            });
            match allowed {
                Some(index) => {
                    allowed_used.insert(index);
                    report.push(format!(
                        "  allowed {}: {}: {} (deliberate: {})",
                        capture.name, mismatch.field, mismatch.detail, ALLOWED_MISMATCHES[index].reason
                    ));
                }
                None => {
                    unexplained += 1;
                    report.push(format!(
                        "  MISMATCH {}: {}: {}",
                        capture.name, mismatch.field, mismatch.detail
                    ));
                }
            }
        }
        if unexplained == 0 {
            matched += 1;
            with_allowed += usize::from(!comparison.mismatches.is_empty());
        } else {
            failing.push(capture.name.clone());
        }
    }
    for (index, allowed) in ALLOWED_MISMATCHES.iter().enumerate() {
        let compared_it = captures
            .iter()
            .zip(&outcomes)
            .any(|(capture, outcome)| capture.name == allowed.capture && matches!(outcome, Outcome::Built(Some(_))));
        if compared_it && !allowed_used.contains(&index) {
            report.push(format!(
                "  stale allow-list entry {}: {}: nothing differs any more, remove it",
                allowed.capture, allowed.field
            ));
        }
    }

    say(&format!(
        "hwloc conformance: {} captures, {} built, {} failed to build",
        captures.len(),
        captures.len() - build_failures.len(),
        build_failures.len()
    ));
    let mut diagnoses_used = BTreeSet::new();
    for failure in &build_failures {
        say(&format!("  BUILD FAILED {failure}"));
        let diagnosis = BUILD_DIAGNOSES.iter().position(|(name, error, _)| {
            (name.is_empty() || failure.starts_with(&format!("{name}: "))) && failure.contains(error)
        });
        if let Some(index) = diagnosis {
            diagnoses_used.insert(index);
            say(&format!("    why: {}", BUILD_DIAGNOSES[index].2));
        }
    }
    for (index, (name, error, _)) in BUILD_DIAGNOSES.iter().enumerate() {
        if !diagnoses_used.contains(&index) {
            say(&format!(
                "  stale build diagnosis `{name}` / `{error}`: no failure matches it, remove it"
            ));
        }
    }
    let consoles = captures.iter().filter(|c| c.console.is_some()).count();
    say(&format!(
        "hwloc conformance: compared {compared} captures, {matched} matched ({} of them through the allow-list; \
         {} of {consoles} captures with a .console could not be compared; {} nodes, {} memory sizes, \
         {} distances checked)",
        with_allowed,
        consoles - compared,
        checked.nodes,
        checked.memories,
        checked.distances
    ));
    for line in &report {
        say(line);
    }
    say(&format!(
        "hwloc conformance: took {:.2}s",
        started.elapsed().as_secs_f64()
    ));

    assert!(
        build_failures.is_empty() && failing.is_empty(),
        "{} capture(s) failed to build and {} differ from lstopo {:?}; see the BUILD FAILED and MISMATCH lines",
        build_failures.len(),
        failing.len(),
        failing
    );
}

/// Writes past the test harness's output capture, so the skip notice and the
/// summary show on a plain `cargo test`.
fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Error text with its control characters spelled out: kernel files quoted
/// in errors may end in `\n\0`, which would otherwise break or vanish.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
