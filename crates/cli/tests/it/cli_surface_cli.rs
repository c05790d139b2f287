//! One vocabulary across commands: every command that takes a process
//! takes `-p, --pid`; a duration always carries its unit; a number where a
//! file was expected points at `-p`. Found by walking `-h`, so a new
//! command is checked without being listed here.

use crate::common;

use common::{exit_2_stderr, numasleuth};

fn help(command: &[&str]) -> String {
    let output = numasleuth().args(command).arg("-h").output().unwrap();
    assert!(output.status.success(), "{command:?} -h");
    String::from_utf8(output.stdout).unwrap()
}

/// Every command and subcommand, as argument lists.
fn commands() -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(command) = queue.pop() {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let text = help(&args);
        let subcommands: Vec<String> = text
            .lines()
            .skip_while(|l| *l != "Commands:")
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            // A wrapped description continues on a deeper indent.
            .filter(|l| !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .filter(|name| name != "help")
            .collect();
        for name in subcommands {
            let mut sub = command.clone();
            sub.push(name);
            queue.push(sub);
        }
        if !command.is_empty() {
            found.push(command);
        }
    }
    found
}

#[test]
fn every_command_that_takes_a_process_takes_dash_p() {
    let mut with_pid = 0;
    for command in commands() {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let text = help(&args);
        if !text.contains("<PID") {
            continue;
        }
        with_pid += 1;
        assert!(
            text.contains("-p, --pid <PID"),
            "{command:?} takes a PID but not -p/--pid:\n{text}"
        );
    }
    assert!(with_pid >= 7, "only {with_pid} commands take a PID");
}

#[test]
fn every_command_with_a_report_writes_files_with_dash_o_and_format() {
    let mut with_report = Vec::new();
    for command in commands() {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let text = help(&args);
        if !text.contains("      --json") {
            continue;
        }
        with_report.push(command.join(" "));
        assert!(
            text.contains("-o, --output <FILE>") && text.contains("--format <FORMAT>"),
            "{command:?} has --json but not -o/--output and --format:\n{text}"
        );
    }
    // The commands named in the issue, each found by the walk.
    for name in [
        "topo",
        "doctor",
        "irq",
        "memwatch",
        "mem",
        "mem latency",
        "mem bandwidth",
        "mem loaded",
        "c2c",
        "lab false-sharing",
        "lab locks",
        "lab remote-global",
        "inspect",
        "lines",
        "watch",
        "move",
        "pmu",
        "pmu diff",
        "runs",
        "bisect",
        "probe-latency",
        "hotlines",
        "migrations",
    ] {
        assert!(
            with_report.iter().any(|c| c == name),
            "{name} has no --json: {with_report:?}"
        );
    }
}

#[test]
fn a_positional_pid_and_dash_p_name_the_same_process() {
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let by_flag = numasleuth().args(["inspect", "-p", &pid, "--json"]).output().unwrap();
    let by_position = numasleuth().args(["inspect", &pid, "--json"]).output().unwrap();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    for output in [&by_flag, &by_position] {
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(doc["pid"].to_string(), pid);
    }
    let err = exit_2_stderr(&["inspect", &pid, "-p", &pid]);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_duration_without_its_unit_is_refused_with_the_form_to_use() {
    for args in [
        vec!["watch", "1", "--symbol", "x", "--duration", "500"],
        vec!["memwatch", "--interval", "1"],
        vec!["pmu", "-p", "1", "--duration", "2"],
        vec!["runs", "-n", "4", "--settle", "500", "--", "true"],
    ] {
        let err = exit_2_stderr(&args);
        assert!(err.contains("has no unit: write"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn sample_ms_takes_a_unit_too() {
    // Refused for its range, not its form: the unit was understood.
    let err = exit_2_stderr(&["lab", "locks", "--sample-ms", "61s"]);
    assert!(err.contains("from 1ms to 60s"), "{err}");
    let err = exit_2_stderr(&["lab", "locks", "--sample-ms", "0"]);
    assert!(err.contains("from 1 to 60000"), "{err}");
}

#[test]
fn a_number_given_as_a_binary_points_at_dash_p() {
    let err = exit_2_stderr(&["lines", "4194303"]);
    assert!(err.contains("use `numasleuth lines -p 4194303`"), "{err}");
}

#[test]
fn doctor_with_a_pid_that_does_not_exist_is_an_error() {
    let err = exit_2_stderr(&["doctor", "-p", "4194303"]);
    assert!(err.contains("no such process: 4194303"), "{err}");
}

#[test]
fn inspect_fits_a_screen_by_default_and_lists_every_section_on_request() {
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id().to_string();
    // Inspected the moment it is spawned, the child may still be in exec,
    // before the dynamic loader has mapped libc (a loaded CI machine saw
    // just its stack); wait until it has.
    let loaded = (0..1000).any(|_| {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        maps.contains("libc") || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            false
        }
    });
    assert!(loaded, "sleep did not map libc within 10 s");
    let text = |extra: &[&str]| {
        let out = numasleuth().arg("inspect").arg(&pid).args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let (concise, detail) = (text(&[]), text(&["--sections"]));
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(concise.lines().count() <= 40, "{concise}");
    assert!(
        concise.contains("writable static data by object") && concise.contains("libc"),
        "{concise}"
    );
    // The summary and findings come before the per-object listing.
    let findings_at = concise.find("No findings").or_else(|| concise.find("  [")).unwrap();
    assert!(
        findings_at < concise.find("writable static data by object").unwrap(),
        "{concise}"
    );
    // Every section of libc, page by page, only on request.
    assert!(
        detail.contains("writable static sections (") && detail.contains(".got"),
        "{detail}"
    );
    assert!(detail.lines().count() > concise.lines().count());
}

#[test]
fn cpu_and_node_lists_take_numactl_style_short_flags() {
    let mut seen = 0;
    for command in commands() {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        let text = help(&args);
        if text.contains("--cpus <LIST>") {
            seen += 1;
            assert!(text.contains("-C, --cpus <LIST>"), "{command:?}:\n{text}");
        }
        if text.contains("--nodes <LIST>") {
            seen += 1;
            assert!(text.contains("-N, --nodes <LIST>"), "{command:?}:\n{text}");
        }
    }
    assert!(seen >= 2, "only {seen} CPU/node list flags found");
}

#[test]
fn tables_wrap_to_columns_and_pipes_get_one_line_per_row() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/qemu-three-nodes-nic");
    let topo = |columns: Option<&str>| {
        let mut command = numasleuth();
        command.args(["--root", fixture, "topo"]);
        match columns {
            Some(c) => command.env("COLUMNS", c),
            None => command.env_remove("COLUMNS"),
        };
        let out = command.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let narrow = topo(Some("60"));
    let table: Vec<&str> = narrow
        .lines()
        .skip_while(|l| !l.starts_with("NODE"))
        .take_while(|l| !l.is_empty())
        .collect();
    // Four rows, and the note wrapped onto a fifth line rather than cut.
    assert_eq!(table.len(), 5, "{narrow}");
    assert!(table.iter().all(|l| l.chars().count() <= 60), "{narrow}");
    assert!(
        table[3].ends_with("memory only (no") && table[4].trim() == "CPUs)",
        "{narrow}"
    );
    assert!(!narrow.contains('…'), "{narrow}");
    // Piped without COLUMNS: one line per row.
    let whole = topo(None);
    assert!(whole.contains("memory only (no CPUs)"), "{whole}");
}
