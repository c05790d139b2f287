//! docs/cli.md's table of limits says what the binary accepts (issue 36:
//! it said `runs -n` takes 2 to 1,000 and `bisect --rounds` 1 to 100, where
//! the binary takes 4 to 1000 and 3 to 100). Every `--flag A to B` of
//! whole numbers in the table is checked against that flag's `--help`.

use std::path::PathBuf;

use crate::common::numasleuth;

fn help(command: &str) -> String {
    let output = numasleuth()
        .args(command.split_whitespace())
        .arg("--help")
        .env("COLUMNS", "1000")
        .output()
        .unwrap();
    assert!(output.status.success(), "{command} --help");
    String::from_utf8(output.stdout).unwrap()
}

/// The help entry of `flag`: its line and the description lines under it.
fn entry(help: &str, flag: &str) -> Option<String> {
    let mut lines = help.lines().skip_while(|l| {
        let t = l.trim_start();
        !(t.starts_with(&format!("{flag} ")) || t.contains(&format!(", {flag} ")) || t.starts_with(&format!("{flag},")))
    });
    let first = lines.next()?;
    let rest =
        lines.take_while(|l| !l.trim_start().starts_with('-') && !l.trim().is_empty() || l.starts_with("          "));
    Some(std::iter::once(first).chain(rest).collect::<Vec<_>>().join(" "))
}

/// The whole-number words of `text`, commas dropped (`1,000` is `1000`).
fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == ','))
        .map(|w| w.trim_matches(',').replace(',', ""))
        .filter(|w| !w.is_empty())
        .collect()
}

/// `A to B` of whole numbers at the start of `text`, then its end, a
/// space or `;`/`,`: `2 to 1,000;` but not `1/s to …` or `1ms to 1h`.
fn range_at(text: &str) -> Option<(String, String)> {
    let number = |t: &str| -> Option<(String, usize)> {
        let len = t.find(|c: char| !(c.is_ascii_digit() || c == ',')).unwrap_or(t.len());
        let word = t[..len].trim_end_matches(',');
        (!word.is_empty() && word.starts_with(|c: char| c.is_ascii_digit()))
            .then(|| (word.replace(',', ""), word.len()))
    };
    let (low, used) = number(text)?;
    let rest = text[used..].strip_prefix(" to ")?;
    let (high, used) = number(rest)?;
    let after = rest[used..].chars().next();
    matches!(after, None | Some(' ' | ';' | ',')).then_some((low, high))
}

/// `(command, flag, low, high)` for every "`--flag` A to B" of the table.
fn claims() -> Vec<(String, String, String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split(" | ").collect();
        let [first, second] = cells[..] else { continue };
        let Some(first) = first.strip_prefix("| `").and_then(|f| f.strip_suffix('`')) else {
            continue;
        };
        let words: Vec<&str> = first.split(' ').collect();
        let second = second.trim_end_matches(" |");
        let (command, flag) = match words[..] {
            [command] if !command.starts_with('-') => (command.to_string(), None),
            [command, flag] if flag.starts_with('-') => (command.to_string(), Some(flag)),
            [command, sub, flag] if flag.starts_with('-') => (format!("{command} {sub}"), Some(flag)),
            _ => continue,
        };
        if let (Some(flag), Some((low, high))) = (flag, range_at(second)) {
            out.push((command.clone(), flag.to_string(), low, high));
        }
        // "`--rounds` 1 to 100" inside the cell.
        for piece in second.split('`').collect::<Vec<_>>().windows(2) {
            let (name, after) = (piece[0], piece[1]);
            if name.starts_with('-') && !name.contains(' ') {
                if let Some((low, high)) = after.strip_prefix(' ').and_then(range_at) {
                    out.push((command.clone(), name.to_string(), low, high));
                }
            }
        }
    }
    out
}

#[test]
fn every_whole_number_range_in_docs_cli_md_is_the_binarys() {
    let claims = claims();
    assert!(claims.len() >= 5, "{claims:?}");
    for (command, flag, low, high) in claims {
        let help = help(&command);
        let entry = entry(&help, &flag).unwrap_or_else(|| panic!("`{command} {flag}` is not in its --help"));
        let said = numbers(&entry);
        assert!(
            said.contains(&low) && said.contains(&high),
            "docs/cli.md says `{command} {flag}` takes {low} to {high}; --help says: {entry}"
        );
    }
}
