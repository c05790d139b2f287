//! `-p NAME` wherever a PID is taken: one match is that process, none or
//! several are one line and exit 2 (several listed with their command
//! lines), a name longer than the kernel's 15-byte `comm` still matches,
//! and in a snapshot the name is looked up in the snapshot's /proc.

use std::path::Path;
use std::process::{Child, Command};

use crate::common::{json, numasleuth, stderr, two_node_files, write_tree};

/// `sleep` under another name, so its `comm` is `name` (cut to 15 bytes).
pub fn named_sleeper(dir: &Path, name: &str) -> Child {
    let program = dir.join(name);
    if !program.exists() {
        std::fs::copy("/bin/sleep", &program).expect("copy /bin/sleep");
    }
    let child = Command::new(&program).arg("30").spawn().expect("start the sleeper");
    // exec has happened once comm shows the new name.
    let comm = format!("/proc/{}/comm", child.id());
    let want: String = name.chars().take(15).collect();
    for _ in 0..200 {
        if std::fs::read_to_string(&comm).is_ok_and(|c| c.trim_end() == want) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child
}

pub fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn one_process_of_that_name_is_that_process() {
    let dir = tempfile::tempdir().unwrap();
    let child = named_sleeper(dir.path(), "nsl-one-name");
    let doc = json(&["inspect", "-p", "nsl-one-name", "--json"]);
    assert_eq!(doc["pid"], child.id(), "{doc:#}");
    // The bare form and another command take names too.
    let doc = json(&["inspect", "nsl-one-name", "--json"]);
    assert_eq!(doc["pid"], child.id(), "{doc:#}");
    let doc = json(&["migrations", "-p", "nsl-one-name", "--duration", "100ms", "--json"]);
    assert_eq!(doc["pid"], child.id(), "{doc:#}");
    stop(child);
}

#[test]
fn a_name_longer_than_comm_matches_its_first_15_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let child = named_sleeper(dir.path(), "nsl-a-rather-long-program-name");
    let doc = json(&["inspect", "-p", "nsl-a-rather-long-program-name", "--json"]);
    assert_eq!(doc["pid"], child.id(), "{doc:#}");
    stop(child);
}

#[test]
fn several_or_none_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        named_sleeper(dir.path(), "nsl-twin"),
        named_sleeper(dir.path(), "nsl-twin"),
    );
    let out = numasleuth().args(["inspect", "-p", "nsl-twin"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let (low, high) = (a.id().min(b.id()), a.id().max(b.id()));
    assert!(
        err.starts_with(&format!("numasleuth: error: `nsl-twin` names 2 processes: {low} (")),
        "{err}"
    );
    assert!(
        err.contains(&format!(", {high} (")) && err.contains("nsl-twin 30)"),
        "{err}"
    );
    assert!(err.trim_end().ends_with("give one with -p PID"), "{err}");
    stop(a);
    stop(b);

    let out = numasleuth()
        .args(["doctor", "-p", "nsl-nobody-has-this"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("numasleuth: error: no process is named `nsl-nobody-has-this`"),
        "{err}"
    );
}

#[test]
fn a_snapshot_is_searched_by_name_in_its_own_proc() {
    let mut files = two_node_files();
    let stat =
        "4242 (app) S 1 4242 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0\n";
    files.push(("proc/4242/comm".into(), "app\n".into()));
    files.push(("proc/4242/stat".into(), stat.into()));
    files.push(("proc/4242/task/4242/stat".into(), stat.into()));
    let tree = tempfile::tempdir().unwrap();
    write_tree(tree.path(), &files);
    let root = tree.path().to_str().unwrap();
    // doctor -p reads the process it found: 4242, from the tree.
    let out = numasleuth()
        .args(["--root", root, "doctor", "-p", "app", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let text = doc.to_string();
    assert!(text.contains("4242"), "{}: {text}", stderr(&out));
    let out = numasleuth()
        .args(["--root", root, "doctor", "-p", "db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Issue 36: in a snapshot, the name is not in it, and it says what is.
    assert!(
        stderr(&out).contains("`db` is not in this snapshot; it holds: 4242"),
        "{}",
        stderr(&out)
    );
}

/// `snapshot -p NAME` goes through the same resolver as every other `-p`:
/// a name longer than `comm` matches its first 15 bytes, a zombie of that
/// name is not a match, and the snapshot is never its own match. (It once
/// had rules of its own and failed all three.)
#[test]
fn snapshot_resolves_names_like_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let wrote = |args: &[&str]| {
        let out = numasleuth().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        stderr(&out)
    };
    // 26 characters: what `inspect -p` finds, snapshot finds.
    let long = "nsl-snapshot-long-name-x26";
    assert_eq!(long.len(), 26);
    let child = named_sleeper(dir.path(), long);
    let doc = json(&["inspect", "-p", long, "--json"]);
    assert_eq!(doc["pid"], child.id(), "{doc:#}");
    let out = dir.path().join("long.tar.gz");
    let err = wrote(&["snapshot", "-p", long, "-o", out.to_str().unwrap()]);
    assert!(err.contains(&format!("processes {}", child.id())), "{err}");
    stop(child);

    // A zombie of the name beside a live one: the live one is captured.
    let mut zombie = named_sleeper(dir.path(), "nsl-snap-zomb");
    zombie.kill().unwrap();
    let zombie_stat = format!("/proc/{}/stat", zombie.id());
    let is_zombie = || {
        std::fs::read_to_string(&zombie_stat)
            .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
    };
    for _ in 0..200 {
        if is_zombie() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(is_zombie(), "the killed child did not become a zombie");
    let live = named_sleeper(dir.path(), "nsl-snap-zomb");
    let out = dir.path().join("zombie.tar.gz");
    let err = wrote(&["snapshot", "-p", "nsl-snap-zomb", "-o", out.to_str().unwrap()]);
    assert!(err.contains(&format!("processes {}", live.id())), "{err}");
    let _ = zombie.wait();
    stop(live);

    // The snapshot itself, under a name of its own, is not a match. A link,
    // not a copy: `comm` is the name exec was given, and a copy just
    // written can be "text file busy" while another test forks.
    let own = dir.path().join("nsl-snap-self");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("numasleuth"), &own).unwrap();
    let out = std::process::Command::new(&own)
        .args(["snapshot", "-p", "nsl-snap-self", "-o"])
        .arg(dir.path().join("self.tar.gz"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no process is named `nsl-snap-self`"),
        "{}",
        stderr(&out)
    );
}
