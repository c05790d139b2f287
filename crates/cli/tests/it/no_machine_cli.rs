//! No machine, no clean bill: a tree that names no CPU, or whose node
//! directory holds no node, is refused in one line by every command that
//! reads a machine; a tree with CPUs but without files every kernel has
//! lists the checks that could not run as unreadable, and `--fail-on`
//! fails on them as on a partial check.

use std::fs;
use std::path::Path;

use crate::common::{numasleuth, stderr};

fn run(root: &Path, args: &[&str]) -> std::process::Output {
    numasleuth().arg("--root").arg(root).args(args).output().unwrap()
}

fn dirs(root: &Path, dirs: &[&str]) {
    for dir in dirs {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
}

/// What a case is, the directories and files it makes, what the error says.
type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn a_tree_with_no_cpu_or_no_node_is_refused_in_one_line() {
    let cases: [Case; 4] = [
        ("empty proc and sys", &["proc", "sys"], &[], "no CPU can be read"),
        (
            "cpu directory without a CPU",
            &["proc", "sys/devices/system/cpu"],
            &[("proc/meminfo", "MemTotal: 1024 kB\n")],
            "no CPU can be read",
        ),
        (
            "every CPU file unreadable",
            &["sys/devices/system/cpu/online"],
            &[("proc/meminfo", "MemTotal: 1024 kB\n")],
            "no CPU can be read",
        ),
        (
            "a node directory with no node",
            &["proc", "sys/devices/system/node"],
            &[("sys/devices/system/cpu/online", "0-1\n")],
            "the node directory holds no node",
        ),
    ];
    for (what, made, files, says) in cases {
        let tree = tempfile::tempdir().unwrap();
        dirs(tree.path(), made);
        for (path, text) in files {
            fs::create_dir_all(tree.path().join(path).parent().unwrap()).unwrap();
            fs::write(tree.path().join(path), text).unwrap();
        }
        for args in [
            &["doctor", "--fail-on", "info"][..],
            &["topo"],
            &["irq"],
            &["doctor", "--json"],
        ] {
            let out = run(tree.path(), args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{what}, {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{what}, {args:?}: {err}");
            assert!(
                err.contains(says) && err.contains("does not describe a machine"),
                "{what}: {err}"
            );
            assert!(out.stdout.is_empty(), "{what}, {args:?}");
        }
    }
}

/// CPUs, and nothing else: the checks that read files every kernel has
/// are listed as unreadable, and no `--fail-on` level passes.
#[test]
fn a_partly_readable_tree_is_not_a_clean_bill() {
    let tree = tempfile::tempdir().unwrap();
    dirs(
        tree.path(),
        &["proc", "sys/devices/system/cpu/cpu0", "sys/devices/system/cpu/cpu1"],
    );
    fs::write(tree.path().join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
    for level in ["info", "warning", "critical"] {
        let out = run(tree.path(), &["doctor", "--fail-on", level]);
        assert_eq!(out.status.code(), Some(1), "--fail-on {level}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("could not read all their inputs"),
            "{}",
            stderr(&out)
        );
    }
    let out = run(tree.path(), &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let incomplete = doc["checks_incomplete"].to_string();
    for check in [
        "zone-watermark-pressure",
        "irq-off-node",
        "min-free-kbytes",
        "irqbalance-running",
    ] {
        assert!(incomplete.contains(check), "{check} not incomplete: {doc:#}");
    }
    let text = String::from_utf8(run(tree.path(), &["doctor"]).stdout).unwrap();
    // Wrapped at 100 columns: a phrase may continue on the next line.
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!text.contains("every check that ran is clean"), "{text}");
    assert!(
        text.contains("not in this tree, though every Linux kernel has it"),
        "{text}"
    );
}
