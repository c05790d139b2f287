//! `-p NAME` for every command that takes `-p`: the commands are found by
//! walking `-h`, not listed by hand, so one that gains `-p` later is
//! covered (and fails here until it is given the arguments it needs to
//! get past argument parsing). `hotpages -p NAME` once skipped name
//! resolution and ran on PID 0 ("no such process: 0").
//!
//! Each command runs twice: with a name nobody has, it must say so (which
//! proves the name is looked up, and that the arguments passed parsing);
//! with the name of a running process, it may still fail for its own
//! reasons (root, DAMON, a PMU), but never because the name did not
//! become that process.

use std::time::Duration;

use crate::common::numasleuth;
use crate::process_name_cli::{named_sleeper, stop};

/// What a command needs besides `-p` to get past argument parsing, kept
/// short and harmless (no `--apply`, short durations). `DIR` is replaced
/// by a fresh temporary directory.
fn extra_args(command: &str) -> Option<&'static [&'static str]> {
    Some(match command {
        "snapshot" => &["-o", "DIR/snap.tar.gz"],
        "doctor" => &["--quick", "--json"],
        "inspect" | "lines" => &["--json"],
        "watch" => &["--addr", "1000", "--duration", "10ms", "--json"],
        "move" => &["--to-node", "0", "--section", ".bss", "--json"],
        "pmu" => &["--duration", "10ms", "--json"],
        "bisect" => &["--metric-cmd", "echo 1", "--section", ".bss", "--json"],
        "serve" => &["--textfile", "DIR", "--once"],
        "top" => &[],
        "migrations" => &["--duration", "100ms", "--json"],
        "hotlines" => &["--duration", "100ms", "--json"],
        "hotpages" => &["--duration", "1s", "--json"],
        _ => return None,
    })
}

fn help(command: &[String]) -> String {
    let output = numasleuth().args(command).arg("-h").output().unwrap();
    assert!(output.status.success(), "{command:?} -h");
    String::from_utf8(output.stdout).unwrap()
}

/// Every command and subcommand whose options include `-p, --pid`.
fn commands_taking_p(command: Vec<String>, out: &mut Vec<Vec<String>>) {
    let text = help(&command);
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().any(|l| l.trim_start().starts_with("-p, --pid")) {
        out.push(command.clone());
    }
    let subcommands = lines
        .iter()
        .skip_while(|l| **l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty());
    // A command's line starts two spaces in; its wrapped description's
    // continuation lines start further in.
    for line in subcommands.filter(|l| !l.starts_with("   ")) {
        let name = line.split_whitespace().next().unwrap_or("help");
        if name != "help" {
            let mut sub = command.clone();
            sub.push(name.to_string());
            commands_taking_p(sub, out);
        }
    }
}

/// Runs `command -p name` with its extra arguments; exit code and stderr.
/// One that runs past the limit is killed: it got past the name.
fn run(command: &[String], name: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().to_str().unwrap();
    let leaf = command.last().unwrap();
    let extra = extra_args(leaf)
        .unwrap_or_else(|| panic!("`{command:?}` takes -p; add the arguments it needs to `extra_args`"));
    let extra: Vec<String> = extra.iter().map(|a| a.replace("DIR", at)).collect();
    let output = numasleuth()
        .args(command)
        .args(["-p", name])
        .args(&extra)
        // hotpages keeps its kdamond claims here instead of /run/numasleuth,
        // which a root run would leave behind, readable by root only.
        .env("NUMASLEUTH_DAMON_CLAIMS", dir.path().join("claims"))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_command_taking_p_resolves_a_name() {
    let mut commands = Vec::new();
    commands_taking_p(Vec::new(), &mut commands);
    let names: Vec<&str> = commands.iter().map(|c| c.last().unwrap().as_str()).collect();
    // The walk must find the commands known to take -p, or it proves nothing.
    for known in ["hotpages", "inspect", "snapshot", "doctor", "migrations"] {
        assert!(names.contains(&known), "{known} not found among {names:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let name = format!("nsl-pname-{}", std::process::id() % 100_000);
    let child = named_sleeper(dir.path(), &name);
    let nobody = format!("nsl-nobody-{}", std::process::id() % 100_000);
    for command in &commands {
        let (code, err) = run(command, &nobody);
        assert_eq!(code, Some(2), "{command:?} -p {nobody}: {err}");
        assert!(
            err.contains(&format!("no process is named `{nobody}`")),
            "{command:?} -p {nobody} did not look the name up: {err}"
        );
        let (_, err) = run(command, &name);
        for wrong in [
            "no such process",
            "no process is named",
            "/proc/0/",
            "names 2 processes",
        ] {
            assert!(!err.contains(wrong), "{command:?} -p {name}: {err}");
        }
    }
    stop(child);
}
