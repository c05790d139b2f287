//! Every number a user can type, fed hostile values: overflow, NaN,
//! infinity, negatives, exponents, empty text and units out of range. Each
//! must end in exit 2 with one line `numasleuth: error: …`, quickly, and
//! never in a panic.
//!
//! The flags are not listed by hand: the test walks `-h` of every command
//! and subcommand and classifies each value name, so a flag added later is
//! covered, and a value name it does not know fails the test until someone
//! says which corpus it gets.

use crate::common;

use std::time::Duration;

use common::numasleuth;

/// Values that must be refused for every flag of a kind. Each is invalid
/// for every parser of that kind (e.g. no `1` for sizes: `watch --len 1`
/// is fine).
fn corpus(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Duration => &[
            "1e23s",
            "1e23",
            "18446744073709551616s",
            "18446744073709551616",
            "9223372036854775807s",
            "340282366920938463463374607431768211456ms",
            "nan",
            "NaN",
            "nans",
            "inf",
            "infs",
            "-inf",
            "-1s",
            "-5",
            "0",
            "0s",
            "0ms",
            "1e-300s",
            "1e400s",
            "8d",
            "169h",
            "10081m",
            "604801s",
            "",
            "s",
            "ms",
            "١s",
        ],
        Kind::Size => &[
            "1e23",
            "1e400K",
            "nan",
            "inf",
            "-inf",
            "-1",
            "-4K",
            "0",
            "3",
            "17T",
            "1P",
            "1E",
            "18446744073709551616",
            "16385G",
            "",
            "K",
            "1..",
            "..1G",
            "1G..4K",
            "4K..1P",
        ],
        Kind::BigCount => &[
            "-1",
            "nan",
            "inf",
            "1e23",
            "1.5",
            "18446744073709551616",
            "1000000000000000001",
            "",
            "0x10",
            "+-1",
        ],
        Kind::Count => &[
            "-1",
            "nan",
            "inf",
            "1e23",
            "1.5",
            "18446744073709551616",
            "4294967296",
            "99999999999",
            "",
            "0x10",
            "+-1",
        ],
        Kind::Id => &[
            "-1",
            "nan",
            "inf",
            "1e3",
            "1.0",
            "4294967296",
            "18446744073709551616",
            "",
            "0x10",
        ],
        // `nan` or `1e3` could be a process's name, and is looked up as one.
        Kind::Pid => &[
            "-1",
            "0",
            "4294967296",
            "18446744073709551616",
            "99999999",
            "",
            "a/b",
            "tab\there",
        ],
        Kind::List => &[
            "nan",
            "1-",
            "-1",
            "0-4294967296",
            "4294967296",
            "5-1",
            "1,,x",
            "",
            "1e23",
            "0-30:0",
            "0-30:",
            "4:2",
            "0-4294967296:2",
            "0-30:2:2",
        ],
        Kind::Address => &[
            "",
            "0x",
            "g",
            "10000000000000000",
            "0x10000000000000000",
            "-1",
            "+10",
            "0x0x10",
            "nan",
        ],
        Kind::Range => &[
            "",
            "-",
            "0-",
            "-1",
            "1-0",
            "5-5",
            "10000000000000000-1",
            "0-10000000000000000",
            "x-y",
            "nan",
            "+1000-2000",
            "0x0x1000-0x2000",
        ],
        Kind::Choice => &["nan", "1e23", "", "-1"],
        Kind::Percent => &[
            "nan", "inf", "", "-5%", "0", "0%", "101%", "1e309", "5%%", "0x5", "five",
        ],
        Kind::Listen => &[
            "",
            "nan",
            "localhost:9464",
            "127.0.0.1",
            "127.0.0.1:65536",
            "127.0.0.1:-1",
            "1.2.3.4.5:80",
            "[::1",
            ":80",
            "127.0.0.1:9464:1",
            "0x7f000001:80",
            "999.0.0.1:80",
        ],
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Duration,
    Size,
    Count,
    /// Counts up to 10^18 (operations, events): 2^32 is a fine value there.
    BigCount,
    Id,
    /// A PID or a process name: what no process can be called either.
    Pid,
    List,
    Address,
    Range,
    Choice,
    /// `5%` or `5`: a share from a small floor to 100%.
    Percent,
    Listen,
}

/// What each value name in `--help` is; `None` for names whose values are
/// free text (paths, symbol names), which this test does not feed.
fn classify(value_name: &str) -> Option<Option<Kind>> {
    Some(Some(match value_name {
        "DURATION" | "INTERVAL" => Kind::Duration,
        "BYTES" | "SIZES" => Kind::Size,
        "N" | "MS" | "K" | "NS,…" | "LINE_SIZE" | "RATE" | "HZ" => Kind::Count,
        "PERCENT" => Kind::Percent,
        "OPS" | "COUNT" => Kind::BigCount,
        "PID" => Kind::Pid,
        "NODE" | "CPU" | "N_TO_NODE" => Kind::Id,
        "LIST" | "COUNTS" => Kind::List,
        "ADDR" => Kind::Address,
        "IP:PORT" => Kind::Listen,
        "START-END" => Kind::Range,
        "MIX" | "PAGES" | "METHOD" | "SAMPLE" | "SEVERITY" | "PLACEMENT" | "LOCK" | "OP" | "FORMAT" | "SHELL" => {
            Kind::Choice
        }
        "PATH" | "FILE" | "NAME" | "JOURNAL" | "BINARY" | "REGEX" | "CMD" | "all|LIST" | "second|op|EVENT"
        | "GOOD.json" | "BAD.json" | "DIR" | "PID|NAME" => return Some(None),
        _ => return None,
    }))
}

/// One thing a command takes a value for: `--flag` or a positional.
#[derive(Debug)]
struct Slot {
    command: Vec<String>,
    flag: Option<String>,
    value_name: String,
}

fn help(command: &[String]) -> String {
    let output = numasleuth().args(command).arg("-h").output().unwrap();
    assert!(output.status.success(), "{command:?} -h");
    String::from_utf8(output.stdout).unwrap()
}

fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // An entry starts at most 6 columns in (`      --flag`); a wrapped
        // description continues deeper.
        .filter(|l| l.len() - l.trim_start().len() <= 6)
        .collect()
}

/// Every value slot of `command` and of its subcommands, from their help.
fn slots(command: Vec<String>, out: &mut Vec<Slot>) {
    let text = help(&command);
    for line in section(&text, "Options:") {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| w.starts_with("--")) else {
            continue;
        };
        if let Some(value) = words.get(at + 1).filter(|w| w.starts_with('<')) {
            out.push(Slot {
                command: command.clone(),
                flag: Some(words[at].to_string()),
                value_name: value.trim_matches(|c| c == '<' || c == '>').to_string(),
            });
        }
    }
    for line in section(&text, "Arguments:") {
        let name = line.split_whitespace().next().unwrap_or("");
        out.push(Slot {
            command: command.clone(),
            flag: None,
            value_name: name
                .trim_end_matches("...")
                .trim_matches(|c| "<>[]".contains(c))
                .to_string(),
        });
    }
    for line in section(&text, "Commands:") {
        let name = line.split_whitespace().next().unwrap_or("help");
        if name != "help" {
            let mut sub = command.clone();
            sub.push(name.to_string());
            slots(sub, out);
        }
    }
}

/// Runs one hostile value and checks the refusal.
fn refuse(args: &[String]) {
    let output = numasleuth()
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?} was not refused: {stderr}");
    assert!(stderr.starts_with("numasleuth: error: "), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: not one line: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{args:?}: {stderr}"
    );
    assert!(output.stdout.is_empty(), "{args:?} printed to stdout");
}

#[test]
fn every_number_flag_refuses_hostile_values() {
    let mut all = Vec::new();
    slots(Vec::new(), &mut all);
    let mut fed = 0;
    let mut kinds_seen = std::collections::BTreeSet::new();
    for slot in &all {
        let Some(kind) = classify(&slot.value_name) else {
            panic!(
                "{:?} {:?} takes <{}>, which this test does not know: add it to `classify`",
                slot.command, slot.flag, slot.value_name
            );
        };
        let Some(kind) = kind else { continue };
        kinds_seen.insert(format!("{kind:?}"));
        for (i, value) in corpus(kind).iter().enumerate() {
            let mut args = slot.command.clone();
            match &slot.flag {
                Some(flag) => {
                    args.push(format!("{flag}={value}"));
                    refuse(&args);
                    // The spaced form too, where the value cannot be
                    // mistaken for a flag.
                    if i < 3 && !value.starts_with('-') && !value.is_empty() {
                        args.pop();
                        args.extend([flag.clone(), value.to_string()]);
                        refuse(&args);
                    }
                }
                None => {
                    args.extend(["--".to_string(), value.to_string()]);
                    refuse(&args);
                }
            }
            fed += 1;
        }
    }
    // The walk found the flags this issue is about, not an empty help.
    for flag in [
        "--duration",
        "--interval",
        "--size",
        "--sizes",
        "--threads",
        "--thread-sweep",
        "--cpus",
        "--nodes",
        "--delays",
        "--sample-ms",
        "--len",
        "--listen",
    ] {
        assert!(
            all.iter().any(|s| s.flag.as_deref() == Some(flag)),
            "{flag} not found in any help"
        );
    }
    assert_eq!(kinds_seen.len(), 12, "{kinds_seen:?}");
    assert!(fed > 300, "only {fed} values fed");
}

/// PID 0 means "this process" to move_pages and perf; above PID_MAX_LIMIT
/// no process can exist.
#[test]
fn positional_pids_out_of_range_are_refused() {
    for command in ["inspect", "watch", "move"] {
        for pid in ["0", "4194305", "4294967295"] {
            refuse(&[command.to_string(), "--".into(), pid.into()]);
        }
    }
}

/// clap's own refusals speak with numasleuth's prefix; help and version
/// stay answers on stdout.
#[test]
fn usage_errors_have_the_prefix_and_help_is_not_an_error() {
    for args in [
        &["--bogus"][..],
        &["topo", "--bogus"],
        &["topo", "extra"],
        &["move", "1", "--range", "1000-2000"],
        &["watch", "1"],
        &["nosuch"],
        &["lab"],
        &[],
        &["--root"],
    ] {
        let output = numasleuth().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("numasleuth: error: "), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("\nerror:"),
            "{args:?}: clap's own prefix left: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    for args in [
        &["--help"][..],
        &["-h"],
        &["--version"],
        &["-V"],
        &["doctor", "--help"],
        &["help", "move"],
    ] {
        let output = numasleuth().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(!output.stdout.is_empty() && output.stderr.is_empty(), "{args:?}");
    }
}
