//! `numasleuth move` and `undo` of page moves on this (single-node)
//! machine: the dry-run plan of the live victim's .bss and of a symbol,
//! `--apply` with nothing to move, undo of a real page journal, and the
//! refusals: unknown node, unknown symbol, no such process, a dead or
//! reused PID, another boot, a corrupt journal, another user's process.
//! Moving between real nodes is checked in the QEMU two-node guest.

use crate::common;
use crate::victim_build;

use common::{numasleuth, stderr};
use numasleuth_change::{Journal, JournalKey, MachineIdentity, PageMove};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
use serde_json::Value;

fn victim(dir: &std::path::Path) -> victim_build::Victim {
    let binary = victim_build::build(dir, "victim", &[]);
    victim_build::start(&binary, &["--workers", "1", "--seconds", "30"])
}

fn json(args: &[&str]) -> Value {
    let output = numasleuth().args(args).arg("--json").output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn node_of_page(pid: u32, address: u64) -> u32 {
    match numasleuth_kernel::pages::query(pid, &[address]).unwrap()[0] {
        numasleuth_kernel::pages::PageStatus::Node(n) => n,
        other => panic!("page {address:#x} is {other:?}"),
    }
}

#[test]
fn dry_run_plans_the_bss_and_a_symbol() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let pid = victim.pid.to_string();
    let node = node_of_page(victim.pid, victim.nil_root).to_string();
    let doc = json(&["move", &pid, "--section", ".bss", "--to-node", &node]);
    assert_eq!(doc["schema"], "numasleuth.move/1");
    assert_eq!(doc["pid"], victim.pid);
    assert_eq!(doc["comm"], "victim");
    assert!(doc["targets"][0]["what"].as_str().unwrap().starts_with(".bss of "));
    assert!(
        doc["pages_total"].as_u64().unwrap() >= 4,
        "12 KiB of scratch and more: {doc:#}"
    );
    assert_eq!(doc["pages_by_node"][&node], doc["already_there"]);
    assert_eq!(doc["pages_to_move"], 0, "one node: everything is there already");
    assert_eq!(doc["applied"], Value::Null);
    assert!(!doc["numa_maps_before"].as_array().unwrap().is_empty());

    let doc = json(&["move", &pid, "--symbol", "nil_root", "--to-node", &node]);
    assert_eq!(doc["pages_total"], 1);
    assert_eq!(doc["targets"][0]["start"], format!("{:#x}", victim.nil_root));

    // --apply with nothing to move changes nothing and writes no journal.
    let journal = dir.path().join("m.json");
    let output = numasleuth()
        .args([
            "move",
            &pid,
            "--section",
            ".bss",
            "--to-node",
            &node,
            "--apply",
            "--journal",
        ])
        .arg(&journal)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("nothing to move"), "{text}");
    assert!(!journal.exists());
}

/// A page inside a mapping that was never touched is "not yet touched";
/// only an address outside every mapping is "unmapped".
#[test]
fn untouched_pages_and_holes_are_named_apart() {
    use numasleuth_kernel::procfs::maps::{parse_line, Backing};
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let pid = victim.pid.to_string();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let maps: Vec<_> = maps.lines().map(|l| parse_line(l).unwrap()).collect();
    // The worker's pthread stack: megabytes of anonymous memory used from
    // the top down, so its lowest page is untouched.
    let stack = maps
        .iter()
        .find(|m| m.perms.write && m.backing == Backing::Anonymous && m.end - m.start >= 1 << 20)
        .expect("a pthread stack mapping");
    let hole = maps
        .windows(2)
        .find(|w| w[0].end < w[1].start)
        .expect("a gap between mappings")[0]
        .end;
    let range = |start: u64| format!("{start:#x}-{:#x}", start + 4096);
    let doc = json(&["move", &pid, "--range", &range(stack.start), "--to-node", "0"]);
    assert_eq!(
        (doc["not_present"].as_u64(), doc["unmapped"].as_u64()),
        (Some(1), Some(0)),
        "{doc:#}"
    );
    // A hole has no pages at all: pages come only from the mappings.
    let output = numasleuth()
        .args(["move", &pid, "--range", &range(hole), "--to-node", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("maps nothing in the pages asked for"),
        "{}",
        stderr(&output)
    );
    let output = numasleuth()
        .args(["move", &pid, "--range", &range(stack.start), "--to-node", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("not yet touched: 1 page"), "{text}");
    assert!(!text.contains("unmapped"), "{text}");
}

#[test]
fn refusals_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let pid = victim.pid.to_string();
    let fail = |args: &[&str]| {
        let output = numasleuth().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        stderr(&output)
    };
    let message = fail(&["move", &pid, "--section", ".bss", "--to-node", "7"]);
    assert!(
        message.contains("--to-node 7: node 7 does not exist (nodes: "),
        "{message}"
    );
    let message = fail(&["move", &pid, "--symbol", "no_such_global", "--to-node", "0"]);
    assert!(message.contains("symbol `no_such_global` not found"), "{message}");
    let message = fail(&["move", &pid, "--section", ".nothing", "--to-node", "0"]);
    assert!(message.contains("section `.nothing` not found"), "{message}");
    let message = fail(&["move", "4194303", "--section", ".bss", "--to-node", "0"]);
    assert!(message.contains("no such process: 4194303"), "{message}");
    let message = fail(&["move", &pid, "--range", "0x3000-0x1000", "--to-node", "0"]);
    assert!(message.contains("START must be below END"), "{message}");
}

/// A sealed journal that moved the page of `nil_root` from `from` to
/// `to` (here both the one node), for process `pid` started at `start`.
fn page_journal(pid: u32, start: u64, address: u64, node: u32, machine: MachineIdentity) -> Journal {
    let moves = vec![PageMove {
        pid,
        pid_start_time: start,
        address: address & !0xfff,
        pages: 1,
        page_bytes: 4096,
        from_node: node,
        to_node: node,
    }];
    Journal::pages(machine, 0, moves)
}

#[test]
fn undo_moves_pages_back_and_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let root = Root::live();
    let start = read_process_stat(&root, victim.pid).unwrap().start_time_ticks.unwrap();
    let node = node_of_page(victim.pid, victim.nil_root);
    let here = MachineIdentity::read(&root);
    let state = dir.path().join("state");
    let key = JournalKey::load_or_create(&state).unwrap();
    let run_undo = |path: &std::path::Path| {
        numasleuth()
            .env("NUMASLEUTH_STATE_DIR", &state)
            .arg("undo")
            .arg(path)
            .output()
            .unwrap()
    };
    let undo = |journal: &Journal, name: &str| {
        let path = dir.path().join(name);
        journal.clone().save(&path, &key).unwrap();
        run_undo(&path)
    };

    let output = undo(
        &page_journal(victim.pid, start, victim.nil_root, node, here.clone()),
        "ok.json",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(&format!("node {node} -> node {node}")), "{text}");
    assert!(
        text.contains("moved back 1 of 1 page(s), verified with move_pages: 1"),
        "{text}"
    );

    let output = undo(
        &page_journal(victim.pid, start + 1, victim.nil_root, node, here.clone()),
        "reused.json",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("now belongs to another process"),
        "{}",
        stderr(&output)
    );

    let output = undo(&page_journal(4_194_303, start, 0x1000, node, here.clone()), "gone.json");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("process 4194303 has exited"),
        "{}",
        stderr(&output)
    );

    let mut other = here.clone();
    other.boot_id = Some("another-boot".into());
    let output = undo(
        &page_journal(victim.pid, start, victim.nil_root, node, other),
        "boot.json",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("another boot"), "{}", stderr(&output));

    let path = dir.path().join("corrupt.json");
    page_journal(victim.pid, start, victim.nil_root, node, here)
        .save(&path, &key)
        .unwrap();
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"pages\": 1", "\"pages\": 9");
    std::fs::write(&path, edited).unwrap();
    let output = run_undo(&path);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("seal does not verify"), "{}", stderr(&output));
}

#[test]
fn another_users_process_cannot_be_moved() {
    common::require_root("it runs numasleuth as another user");
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let range = format!("{:#x}-{:#x}", victim.nil_root, victim.nil_root + 8);
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["move", &victim.pid.to_string(), "--range", &range, "--to-node", "0"])
        .output()
        .expect("setpriv (util-linux) runs");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("permission denied"), "{}", stderr(&output));
}
