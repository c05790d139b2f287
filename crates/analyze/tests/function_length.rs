//! No non-test function in the workspace is longer than 80 lines, the
//! project's rule for keeping code easy to change (issue 11 split the last
//! ones). A long function fails this test with its file, line and length.
//!
//! Functions are found by text, not by parsing: a line that starts an
//! item `fn`, then its braces counted to the matching close, with string
//! and character literals and `//` comments taken out first. Test code
//! (`*_tests.rs`, `tests.rs`, `tests/`, and everything after a file's
//! `#[cfg(test)]`) is left out: a test reads best as one story.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 80;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "target" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with("_tests.rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The line with literals and comments removed, so braces in them do not
/// count.
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => break,
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
            }
            // A char literal ('{', '\''), not a lifetime ('a).
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                let closes = rest.starts_with('\\') || rest.chars().nth(1) == Some('\'');
                if closes {
                    if chars.next() == Some('\\') {
                        chars.next();
                    }
                    chars.next();
                }
                out.push_str("''");
            }
            _ => out.push(c),
        }
    }
    out
}

/// The name of the function a line starts, if it starts one.
fn starts_fn(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "fn")?;
    let before_ok = words[..at]
        .iter()
        .all(|w| w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(w));
    let name = words.get(at + 1)?;
    before_ok.then(|| name.split(['(', '<']).next().unwrap_or(name).to_string())
}

/// `(line, name, length)` of each function in `text` longer than the limit.
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let Some(name) = starts_fn(lines[i]) else {
            i += 1;
            continue;
        };
        let (mut depth, mut opened, mut j) = (0i64, false, i);
        while j < lines.len() {
            let code = code_of(lines[j]);
            for c in code.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
                break;
            }
            j += 1;
        }
        let length = j - i + 1;
        if opened && length > MAX_LINES {
            found.push((i + 1, name, length));
        }
        i = if opened { j + 1 } else { i + 1 };
    }
    found
}

#[test]
fn no_function_is_longer_than_80_lines() {
    let mut files = Vec::new();
    sources(&workspace().join("crates"), &mut files);
    assert!(files.len() > 100, "found only {} source files", files.len());
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, name, length) in long_functions(&text) {
            long.push(format!("{}:{line} {name}: {length} lines", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_counter_sees_a_long_function_and_ignores_braces_in_literals() {
    let body: String = (0..85).map(|i| format!("    let x{i} = \"{{\";\n")).collect();
    let text = format!("pub fn long() {{\n{body}}}\nfn short() {{ let c = '}}'; }}\n");
    let found = long_functions(&text);
    assert_eq!(found, vec![(1, "long".to_string(), 87)]);
    let tested = format!("#[cfg(test)]\nmod tests {{\n{text}}}\n");
    assert!(long_functions(&tested).is_empty());
}
