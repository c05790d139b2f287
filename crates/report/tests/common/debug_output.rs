//! Rust debug formatting that must never reach a reader: the check
//! crates/cli/tests/it/golden_cli.rs makes of the command goldens, plus sets
//! of numbers (`{0, 1}`). The cli golden tests include this file too.

/// Scans every stored golden file in `dir` except JSON ones (JSON keeps
/// `null`), panicking on the first that holds debug output; returns how
/// many were scanned, so a caller can tell an empty folder from a clean one.
#[allow(dead_code)]
pub fn scan_snapshots(dir: &std::path::Path) -> usize {
    let mut scanned = 0;
    for entry in std::fs::read_dir(dir).expect("the snapshots folder") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if !name.ends_with(".snap") || name.contains("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("snapshot file");
        if let Some(found) = find(&text) {
            panic!("{name}: {found}");
        }
        scanned += 1;
    }
    scanned
}

/// Rust debug formatting that must never reach a user: `Some(`, a bare
/// `None`, `Name { field: …`, and `[1, 2]`-style lists of numbers.
pub fn find(text: &str) -> Option<String> {
    type LineCheck = (&'static str, fn(&str) -> bool);
    let checks: [LineCheck; 5] = [
        ("Some(", |line| line.contains("Some(")),
        ("None", |line| {
            line.match_indices("None")
                .any(|(at, _)| word_boundary(line, at, "None".len()))
        }),
        ("struct debug", struct_debug),
        ("list debug", list_debug),
        ("set debug", set_debug),
    ];
    for (what, matches) in checks {
        if let Some(line) = text.lines().find(|line| matches(line)) {
            return Some(format!("{what} in {line:?}"));
        }
    }
    None
}

fn word_boundary(line: &str, at: usize, len: usize) -> bool {
    let before = line[..at].chars().next_back();
    let after = line[at + len..].chars().next();
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    !is_word(before) && !is_word(after)
}

/// `Name { field: ` as `{:?}` prints a struct.
fn struct_debug(line: &str) -> bool {
    line.match_indices(" { ").any(|(at, _)| {
        let name_ok = line[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric());
        let rest = &line[at + 3..];
        let field: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        name_ok && !field.is_empty() && rest[field.len()..].starts_with(": ")
    })
}

/// `[1, 2]` as `{:?}` prints a Vec of numbers (people read `1-2` or `1,2`).
fn list_debug(line: &str) -> bool {
    line.match_indices('[').any(|(at, _)| {
        let rest = &line[at + 1..];
        let Some(end) = rest.find(']') else {
            return false;
        };
        let inside = &rest[..end];
        inside.contains(", ")
            && inside
                .split(", ")
                .all(|item| !item.is_empty() && item.chars().all(|c| c.is_ascii_digit()))
    })
}

/// `{1}` or `{0, 1}` as `{:?}` prints a set of numbers.
fn set_debug(line: &str) -> bool {
    line.match_indices('{').any(|(at, _)| {
        let rest = &line[at + 1..];
        let Some(end) = rest.find('}') else {
            return false;
        };
        let inside = &rest[..end];
        !inside.is_empty()
            && inside
                .split(", ")
                .all(|item| !item.is_empty() && item.chars().all(|c| c.is_ascii_digit()))
    })
}

#[test]
fn the_detector_catches_what_it_should() {
    assert!(find("preferred nodes {0, 1}").is_some());
    assert!(find("preferred nodes {1}").is_some());
    assert!(find("set {0-1} and {name}").is_none());
    assert!(find("distances [Some(30), Some(21)]").is_some());
    assert!(find("cpus [1, 2]").is_some());
    assert!(find("node None").is_some());
    assert!(find("Zone { free: 3 }").is_some());
    assert!(find("cpus 1-2, nodes 0,1 [0-3] (none)").is_none());
    assert!(find("NoneSuch and Nonetheless").is_none());
}
