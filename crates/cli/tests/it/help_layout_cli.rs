//! `--help` fits the terminal it is read in, and each command's `--root`
//! line says what `--root` does there; a command that refuses `--root`
//! (it measures or watches the live system) does not advertise it.
//! Found by walking `-h`, so a new command is checked without being listed.

use crate::common;

use common::numasleuth;

fn help_at(command: &[String], flag: &str, columns: &str) -> String {
    let output = numasleuth()
        .args(command)
        .arg(flag)
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    assert!(output.status.success(), "{command:?} {flag}");
    String::from_utf8(output.stdout).unwrap()
}

/// Every command and subcommand, as argument lists (the top level first).
fn commands() -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(command) = queue.pop() {
        let text = help_at(&command, "-h", "1000");
        for line in text.lines().skip_while(|l| *l != "Commands:").skip(1) {
            let Some(name) = line.strip_prefix("  ").and_then(|l| l.split_whitespace().next()) else {
                break;
            };
            if name != "help" && !line.starts_with("   ") {
                let mut sub = command.clone();
                sub.push(name.to_string());
                queue.push(sub);
            }
        }
        found.push(command);
    }
    found
}

#[test]
fn help_at_80_columns_fits_and_breaks_no_word() {
    let all = commands();
    assert!(all.len() > 30, "only {} commands found", all.len());
    for command in &all {
        for flag in ["-h", "--help"] {
            let narrow = help_at(command, flag, "80");
            for line in narrow.lines() {
                assert!(
                    line.chars().count() <= 80,
                    "{command:?} {flag}: a line of {} columns:\n{line}",
                    line.chars().count()
                );
            }
            // A word broken at the edge shows as two words that the wide
            // help (100 columns, clap's most) does not have.
            let wide = help_at(command, flag, "1000");
            let words = |text: &str| {
                let mut words: Vec<String> = text.split_whitespace().map(String::from).collect();
                words.sort();
                words
            };
            assert_eq!(
                words(&narrow),
                words(&wide),
                "{command:?} {flag} at 80 columns:\n{narrow}"
            );
        }
    }
}

/// Commands that act on the live system only; each refuses `--root`.
const REFUSING: &[&str] = &[
    "mem",
    "c2c",
    "lab",
    "watch",
    "move",
    "pmu",
    "probe-latency",
    "top",
    "migrations",
    "readers",
    "hotlines",
    "hotpages",
];

#[test]
fn only_commands_that_take_root_advertise_it() {
    for command in commands() {
        let text = help_at(&command, "--help", "80");
        let refuses = command.first().is_some_and(|c| REFUSING.contains(&c.as_str()));
        assert_eq!(
            text.contains("--root"),
            !refuses && command.first().is_none_or(|c| c != "completions" && c != "man"),
            "{command:?}:\n{text}"
        );
        // Each command's own line, not the top level's list of commands.
        if !command.is_empty() {
            assert!(!text.contains("Used by topo"), "{command:?}:\n{text}");
        }
    }
}

#[test]
fn a_command_that_hides_root_still_refuses_it_in_one_line() {
    let tree = common::tree_with(&[]);
    let root = tree.path().to_str().unwrap();
    for command in [&["mem"][..], &["c2c"], &["probe-latency"], &["lab", "false-sharing"]] {
        for placement in ["before", "after"] {
            let mut args: Vec<&str> = Vec::new();
            if placement == "before" {
                args.extend(["--root", root]);
            }
            args.extend(command);
            if placement == "after" {
                args.extend(["--root", root]);
            }
            let stderr = common::exit_2_stderr(&args);
            assert!(
                stderr.contains("--root") && !stderr.contains("unexpected"),
                "{args:?}: {stderr}"
            );
            assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        }
    }
}
