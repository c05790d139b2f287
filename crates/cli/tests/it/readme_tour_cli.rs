//! The README's tour must show what the binary prints (issue 36: its first
//! `doctor` showed one "skipped" line where the binary printed three).
//! The tour commands that need no process of their own (`doctor`,
//! `meminfo | head -14`) run on `tests/fixtures/kvm-2cpu-1node`, a capture
//! of the tour's kind of machine (one node, 2 CPUs), so the test does not
//! depend on the machine it runs on; each line is compared by its shape
//! (indented or not, and its first two words, numbers as `N`), apart from the provenance
//! paragraph, which differs between a live run and a snapshot.

use std::path::PathBuf;

use assert_cmd::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The tour's blocks as (command after `$ `, the lines it shows).
fn tour_blocks() -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let tour = readme
        .split("\n## A five-minute tour")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README has a tour section");
    let mut blocks = Vec::new();
    for block in tour.split("\n```\n").skip(1).step_by(2) {
        let mut lines = block.lines();
        let Some(command) = lines.next().and_then(|l| l.strip_prefix("$ ")) else {
            continue;
        };
        blocks.push((command.to_string(), lines.map(String::from).collect()));
    }
    blocks
}

/// Lines without the leading provenance paragraph (its first line and
/// the continuation lines indented under it).
fn without_provenance(lines: &[String]) -> Vec<String> {
    let first = lines
        .iter()
        .position(|l| l.contains(", live system, ") || l.starts_with("reading snapshot "));
    let Some(first) = first else {
        return lines.to_vec();
    };
    let mut rest: Vec<String> = lines[..first].to_vec();
    rest.extend(lines[first + 1..].iter().skip_while(|l| l.starts_with("  ")).cloned());
    rest
}

/// A line's shape: whether it is indented (a continuation, or a table
/// header right-aligned over numbers whose width varies) and its first two
/// words, digits as `N`.
fn shape(line: &str) -> String {
    let indent = line.starts_with(' ');
    let words: Vec<String> = line
        .split_whitespace()
        .take(2)
        .map(|w| {
            let mut out = String::new();
            for c in w.chars() {
                let digit = c.is_ascii_digit();
                if !(digit && out.ends_with('N')) {
                    out.push(if digit { 'N' } else { c });
                }
            }
            out.replace("N.N", "N")
        })
        .collect();
    format!("{indent}:{}", words.join(" "))
}

fn run_on_fixture(args: &[&str]) -> Vec<String> {
    let output = Command::cargo_bin("numasleuth")
        .unwrap()
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .args(["--root", "tests/fixtures/kvm-2cpu-1node"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn the_tour_shows_what_the_binary_prints() {
    let blocks = tour_blocks();
    let mut compared = 0;
    for (command, shown) in &blocks {
        let printed = match command.as_str() {
            "numasleuth doctor" => run_on_fixture(&["doctor"]),
            "numasleuth meminfo | head -14" => run_on_fixture(&["meminfo"]).into_iter().take(14).collect(),
            // Needs a process of its own (victim, bimodal) or a change.
            _ => continue,
        };
        compared += 1;
        let shown: Vec<String> = without_provenance(shown).iter().map(|l| shape(l)).collect();
        let printed: Vec<String> = without_provenance(&printed).iter().map(|l| shape(l)).collect();
        assert_eq!(shown, printed, "README's `{command}` differs from what it prints");
    }
    assert_eq!(compared, 2, "the tour lost a command this test runs: {blocks:?}");
}
