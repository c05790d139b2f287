//! No hostile byte reaches a terminal. A tree is built (in the test; no
//! committed fixture) from a real capture plus one live process, with ESC,
//! BEL, CSI, OSC, C1 CSI and U+202E put into every string file numasleuth
//! reads, two ways: appended to every line of every file (most become
//! malformed, so the warnings and errors that quote them are exercised),
//! and put into the fields that are text (model name, comm, cmdline, mapped
//! paths, interrupt names, hostname), so the reports show them. Device and
//! root directory names carry them too. Every `--root` command runs on both
//! trees in every format, and so do `pmu diff`, `undo`, `lines` and `runs`
//! on hostile inputs of their own; none of those characters may appear in
//! stdout or stderr, and the escaped form must (the test reads what it
//! should).

use crate::common::numasleuth;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

/// OSC (retitle), BEL, CSI (clear screen), C1 CSI, DEL and a bidi override.
const PAYLOAD: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{7f}\u{202e}";
/// How the payload's start reads once escaped.
const ESCAPED: &str = "\\x1b]0;pwned\\x07";

/// What must never reach a terminal: C0 controls but newline and tab, DEL,
/// C1 controls, and the characters that reorder text. Written out here, not
/// taken from the code under test.
fn forbidden(c: char) -> bool {
    let code = c as u32;
    (code < 0x20 && c != '\n' && c != '\t')
        || (0x7f..=0x9f).contains(&code)
        || matches!(code, 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069)
}

fn assert_clean(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        if let Some((at, c)) = text.char_indices().find(|(_, c)| forbidden(*c)) {
            let from = text[..at].char_indices().rev().nth(60).map_or(0, |(i, _)| i);
            panic!("{what}: {stream} holds U+{:04X} after {:?}", c as u32, &text[from..at]);
        }
    }
}

fn text_of(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&source).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&source, &target);
        } else {
            fs::copy(&source, &target).unwrap();
        }
    }
}

/// A live process's files, as a snapshot would hold them.
fn copy_process(pid: u32, root: &Path) {
    let files = [
        "stat",
        "status",
        "comm",
        "cmdline",
        "maps",
        "numa_maps",
        "cgroup",
        "cpuset",
        "sched",
    ];
    let into = root.join(format!("proc/{pid}"));
    for name in files {
        if let Ok(bytes) = fs::read(format!("/proc/{pid}/{name}")) {
            fs::create_dir_all(&into).unwrap();
            fs::write(into.join(name), bytes).unwrap();
        }
    }
    for task in fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let tid = task.unwrap().file_name();
        let dir = into.join("task").join(&tid);
        fs::create_dir_all(&dir).unwrap();
        for name in ["stat", "status", "comm", "sched"] {
            if let Ok(bytes) = fs::read(format!("/proc/{pid}/task/{}/{name}", tid.to_string_lossy())) {
                fs::write(dir.join(name), bytes).unwrap();
            }
        }
    }
}

fn regular_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            regular_files(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// The payload after every line of every file.
fn poison_every_line(root: &Path) {
    let mut files = Vec::new();
    regular_files(root, &mut files);
    for file in files {
        let text = String::from_utf8_lossy(&fs::read(&file).unwrap()).into_owned();
        let poisoned: String = if text.is_empty() {
            PAYLOAD.to_string()
        } else {
            text.split_inclusive('\n')
                .map(|line| match line.strip_suffix('\n') {
                    Some(body) => format!("{body}{PAYLOAD}\n"),
                    None => format!("{line}{PAYLOAD}"),
                })
                .collect()
        };
        fs::write(&file, poisoned).unwrap();
    }
}

/// The payload in the fields that are text, leaving numbers readable.
fn poison_strings(root: &Path, pid: u32) {
    let edit = |path: &str, f: &dyn Fn(&str) -> String| {
        let at = root.join(path);
        if let Ok(text) = fs::read_to_string(&at) {
            fs::write(&at, f(&text)).unwrap();
        }
    };
    let after_colon = |keys: &'static [&'static str]| {
        move |text: &str| -> String {
            text.lines()
                .map(|l| match keys.iter().any(|k| l.starts_with(k)) {
                    true => format!("{l}{PAYLOAD}\n"),
                    false => format!("{l}\n"),
                })
                .collect()
        }
    };
    edit("proc/cpuinfo", &after_colon(&["model name", "vendor_id", "flags"]));
    edit(&format!("proc/{pid}/status"), &after_colon(&["Name:"]));
    edit(&format!("proc/{pid}/comm"), &|_| format!("sl{PAYLOAD}\n"));
    edit(&format!("proc/{pid}/cmdline"), &|t| format!("{t}{PAYLOAD}\0"));
    edit(&format!("proc/{pid}/stat"), &|t| {
        t.replacen("(sleep)", &format!("(sl{PAYLOAD})"), 1)
    });
    // Mapped paths: the text after the last field of a maps line.
    edit(&format!("proc/{pid}/maps"), &|t| {
        t.lines()
            .map(|l| {
                if l.contains('/') {
                    format!("{l}{PAYLOAD}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    });
    edit(&format!("proc/{pid}/numa_maps"), &|t| {
        t.replace("file=/", &format!("file=/{PAYLOAD}"))
    });
    // Interrupt names end their line.
    edit("proc/interrupts", &|t| {
        t.lines()
            .map(|l| {
                if l.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
                    format!("{l}{PAYLOAD}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    });
    fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
    fs::write(root.join("proc/sys/kernel/hostname"), format!("host{PAYLOAD}\n")).unwrap();
    fs::write(root.join("proc/sys/kernel/osrelease"), format!("6.1{PAYLOAD}\n")).unwrap();
    for comm in fs::read_dir(root.join("proc")).unwrap().flatten() {
        let path = comm.path().join("comm");
        if path.is_file() && !path.starts_with(root.join(format!("proc/{pid}"))) {
            fs::write(&path, format!("k{PAYLOAD}\n")).unwrap();
        }
    }
    // A network device whose name is the payload, beside eth0.
    let eth0 = root.join("sys/class/net/eth0");
    if let Ok(target) = fs::read_link(&eth0) {
        std::os::unix::fs::symlink(target, root.join(format!("sys/class/net/e{PAYLOAD}"))).unwrap();
    }
}

/// Both trees, under directories whose own names carry the payload.
fn hostile_trees(pid: u32) -> (tempfile::TempDir, [PathBuf; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/qemu-three-nodes-nic");
    let trees = [
        dir.path().join(format!("lines{PAYLOAD}")),
        dir.path().join(format!("strings{PAYLOAD}")),
    ];
    for tree in &trees {
        copy_tree(&fixture, tree);
        copy_process(pid, tree);
    }
    poison_every_line(&trees[0]);
    poison_strings(&trees[1], pid);
    (dir, trees)
}

fn run(root: Option<&Path>, args: &[&str]) -> Output {
    let mut command = numasleuth();
    if let Some(root) = root {
        command.arg("--root").arg(root);
    }
    command
        .args(args)
        .env("COLUMNS", "200")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

#[test]
fn no_root_command_prints_a_hostile_byte() {
    let mut sleeper = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let pid = sleeper.id();
    let (dir, trees) = hostile_trees(pid);
    let pid_text = pid.to_string();
    let commands: [&[&str]; 7] = [
        &["topo"],
        &["doctor"],
        &["irq"],
        &["irq", "--fix"],
        &["inspect", "-p", &pid_text],
        &["doctor", "-p", &pid_text],
        &["memwatch", "--duration", "1s", "--interval", "500ms"],
    ];
    let mut seen = String::new();
    for tree in &trees {
        for command in commands {
            for format in ["text", "json", "csv", "html", "svg"] {
                let args = [command, &["--format", format]].concat();
                let out = run(Some(tree), &args);
                assert_clean(&format!("{args:?} on {tree:?}"), &out);
                seen.push_str(&text_of(&out));
            }
        }
        let snapshot = dir.path().join(format!("snap-{}", seen.len()));
        let out = run(Some(tree), &["snapshot", "-o", snapshot.to_str().unwrap()]);
        assert_clean("snapshot", &out);
        let textfile = dir.path().join(format!("prom-{}", seen.len()));
        fs::create_dir(&textfile).unwrap();
        let out = run(
            Some(tree),
            &["serve", "--once", "--textfile", textfile.to_str().unwrap()],
        );
        assert_clean("serve --textfile", &out);
        // What `cat numasleuth.prom` (or `curl /metrics`) would show.
        let prom = fs::read(textfile.join("numasleuth.prom")).unwrap();
        assert_clean(
            "numasleuth.prom",
            &Output {
                status: out.status,
                stdout: prom,
                stderr: Vec::new(),
            },
        );
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    // The payload was read and shown, escaped: the model name, the comm.
    assert!(seen.contains(ESCAPED), "no escaped payload in any output");
    assert!(
        seen.contains(&format!("sl{ESCAPED}")),
        "the hostile comm was never shown"
    );
}

/// A JSON string holding the payload, written with JSON escapes (raw
/// controls are not valid JSON): serde gives back the raw characters.
fn json_payload() -> String {
    serde_json::to_string(PAYLOAD).unwrap()
}

#[test]
fn pmu_diff_undo_lines_and_runs_print_no_hostile_byte() {
    let dir = tempfile::tempdir().unwrap();
    let name = json_payload();
    let run_file = |file: &str, value: f64, extra: &str| {
        let path = dir.path().join(format!("{file}{PAYLOAD}.json"));
        let events = format!(
            r#"[{{"name": "task-clock", "pmu": "software", "scaled_value": {value}}},
                {{"name": {name}, "pmu": {name}, "scaled_value": {value}}}{extra}]"#
        );
        let text = format!(r#"{{"schema": "numasleuth.pmu/1", "duration_s": 1.0, "events": {events}}}"#);
        fs::write(&path, text).unwrap();
        path
    };
    let good = run_file("good", 1000.0, "");
    let bad = run_file(
        "bad",
        5000.0,
        &format!(r#", {{"name": {name}, "pmu": "x", "scaled_value": 7}}"#),
    );
    let twice = run_file(
        "twice",
        1000.0,
        &format!(r#", {{"name": {name}, "pmu": {name}, "scaled_value": 1}}"#),
    );
    let mut seen = String::new();
    for (a, b) in [(&good, &bad), (&good, &twice)] {
        for format in [&["--json"][..], &[]] {
            let out = run(
                None,
                &[&["pmu", "diff", a.to_str().unwrap(), b.to_str().unwrap()][..], format].concat(),
            );
            assert_clean("pmu diff", &out);
            seen.push_str(&text_of(&out));
        }
    }
    assert!(seen.contains(ESCAPED) || seen.contains("\\u001b]0;pwned"), "{seen}");

    // undo: a journal field named with the payload, in a file so named.
    let journal = dir.path().join(format!("j{PAYLOAD}.json"));
    fs::write(&journal, format!(r#"{{"schema": "numasleuth.journal/2", {name}: 1}}"#)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&journal, fs::Permissions::from_mode(0o600)).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
    let out = numasleuth()
        .env("NUMASLEUTH_STATE_DIR", dir.path().join("state"))
        .arg("undo")
        .arg(&journal)
        .output()
        .unwrap();
    assert_clean("undo", &out);
    assert!(
        text_of(&out).contains(&format!("unknown field `{ESCAPED}")),
        "{}",
        text_of(&out)
    );

    // lines: an ELF whose symbol name is the payload (same length as the
    // name it replaces, in the string table).
    let elf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-app.elf");
    let mut bytes = fs::read(elf).unwrap();
    let name = b"hot_and_cold";
    let at = bytes.windows(name.len()).position(|w| w == name).unwrap();
    let hostile = "\u{1b}]0;\u{7}\u{202e}\u{1b}[2J".as_bytes();
    assert_eq!(hostile.len(), name.len());
    bytes[at..at + name.len()].copy_from_slice(hostile);
    let patched = dir.path().join("app.elf");
    fs::write(&patched, bytes).unwrap();
    for format in ["text", "json"] {
        let out = run(None, &["lines", patched.to_str().unwrap(), "--format", format]);
        assert_clean("lines", &out);
        assert!(
            text_of(&out).contains("\\x1b]0;") || text_of(&out).contains("\\u001b]0;"),
            "{}",
            text_of(&out)
        );
    }

    // runs: a workload printing the payload, shown with --verbose.
    let script = "printf '\\033]0;pwned\\007\\342\\200\\256 value 1\\n'";
    let out = run(
        None,
        &[
            "runs",
            "-n",
            "2",
            "--verbose",
            "--metric",
            "value",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert_clean("runs --verbose", &out);
    // A --root path and a bad value, as typed.
    let out = run(Some(&dir.path().join(format!("no{PAYLOAD}"))), &["topo"]);
    assert_clean("a missing --root", &out);
    let out = run(None, &["c2c", "--cpus", PAYLOAD]);
    assert_clean("a bad --cpus", &out);
}
