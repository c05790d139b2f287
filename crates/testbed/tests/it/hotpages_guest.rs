//! `hotpages` (DAMON) in the two-node 6.12 guest, sharing the victim's boot
//! (`victim_guest.rs` runs these commands after its own on 6.12, when
//! `undo` has put the victim's .bss back on node 1 while its workers run on
//! node 0):
//! - the victim: the page holding `nil_root` comes first, remote, named, and
//!   nothing moves (vmstat's migration counters and inspect's .bss nodes are
//!   the same before and after); no kdamond is left;
//! - a local control (the victim started on node 0): no hot remote region;
//! - `tests/victim/hotcold.c`: of a hot and a cold 64 MiB region, the hot
//!   regions found lie in the hot one;
//! - numasleuth killed with SIGKILL mid-run: the reaper removes its
//!   kdamond; stopped with SIGTERM: it reports what it gathered and
//!   removes it;
//! - a kdamond set up by something else (paddr, on): hotpages refuses in
//!   one line (exit 2) and the kdamond runs on unchanged;
//! - `doctor --pid --measure` raises `hot-remote-memory`.

use std::path::{Path, PathBuf};

use numasleuth_testbed::check::{command_json, Checks, Outcome};
use numasleuth_testbed::doc::{array, finding, victim_bss};
use numasleuth_testbed::program;
use serde_json::Value;

const VICTIM: &str = "$(cat /tmp/victim.pid)";
const ADMIN: &str = "/sys/kernel/mm/damon/admin/kdamonds";
/// Prints `nr=N threads=M claim=FILES`: the kdamonds sysfs has, kdamond
/// kernel threads running, and claims left in /run/numasleuth.
const DAMON_STATE: &str = "echo nr=$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds) \
    threads=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c ^kdamond) claim=$(ls /run/numasleuth 2>/dev/null)";

/// The static hotcold program for the guest.
pub fn hotcold() -> PathBuf {
    program::build_static(
        "qemu guest two-nodes-victim-6.12 (hotpages)",
        "hotcold.c",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("hotcold-static"),
        &[],
    )
}

fn sh(name: &str, cmd: String) -> (String, String) {
    (name.to_string(), format!("sh -c '{cmd}'"))
}

/// Starts `CMD` in the background, waits for its `pid=` line in
/// /tmp/NAME.out and writes the pid to /tmp/NAME.pid.
fn start(name: &str, cmd: &str) -> (String, String) {
    sh(
        &format!("{name}-start"),
        format!(
            "{cmd} > /tmp/{name}.out 2>&1 & n=0; until grep -q pid= /tmp/{name}.out; do n=$((n+1)); \
             [ $n -lt 300 ] || exit 1; usleep 100000; done; \
             sed -n \"s/.*pid=\\([0-9]*\\).*/\\1/p\" /tmp/{name}.out > /tmp/{name}.pid; cat /tmp/{name}.out"
        ),
    )
}

/// Polls (at most 30 s) until no kdamond is left, then prints DAMON_STATE.
const UNTIL_NONE: &str = "n=0; until [ $(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds) = 0 ]; \
    do n=$((n+1)); [ $n -lt 300 ] || break; usleep 100000; done";

pub fn commands() -> Vec<(String, String)> {
    let vmstat = "grep -E \"^(pgmigrate_success|numa_pages_migrated) \" /proc/vmstat".to_string();
    let mut c = vec![
        sh("damon-before", DAMON_STATE.into()),
        sh("vmstat-before", vmstat.clone()),
        sh(
            "hotpages",
            format!("numasleuth hotpages -p {VICTIM} --duration 8s --json"),
        ),
        sh("vmstat-after", vmstat),
        sh("damon-after", DAMON_STATE.into()),
        sh("inspect-after-hotpages", format!("numasleuth inspect {VICTIM} --json")),
        // SIGKILL mid-run: only the reaper can remove the kdamond.
        sh(
            "killed",
            format!(
                "numasleuth hotpages -p {VICTIM} --duration 60s --json > /tmp/k.json 2>/tmp/k.err & p=$!; \
                 n=0; until grep -q \"kdamond_pid.:[0-9]\" /run/numasleuth/damon-kdamond.json 2>/dev/null; \
                 do n=$((n+1)); [ $n -lt 300 ] || break; usleep 100000; done; sleep 1; {DAMON_STATE}; \
                 kill -9 $p; {UNTIL_NONE}; {DAMON_STATE}"
            ),
        ),
        // SIGTERM mid-run: a report of what it gathered, and no kdamond.
        sh(
            "terminated",
            format!(
                "numasleuth hotpages -p {VICTIM} --duration 60s --json > /tmp/t.json & p=$!; sleep 4; \
                 kill -TERM $p; wait $p; echo rc=$?; {DAMON_STATE}"
            ),
        ),
        sh("terminated-json", "cat /tmp/t.json".into()),
        sh(
            "doctor-measure",
            format!("numasleuth doctor --pid {VICTIM} --measure --json"),
        ),
    ];
    c.push(start("local", "/victim --workers 2 --start-cpu 0 --worker-cpus 0-1"));
    c.push(sh(
        "control",
        "numasleuth hotpages -p $(cat /tmp/local.pid) --duration 8s --json".into(),
    ));
    c.push(sh("local-stop", "kill $(cat /tmp/local.pid)".into()));
    c.push(start("hotcold", "/hotcold --cpu 1"));
    c.push(sh(
        "hotcold",
        "numasleuth hotpages -p $(cat /tmp/hotcold.pid) --duration 8s --json".into(),
    ));
    c.push(sh("hotcold-stop", "kill $(cat /tmp/hotcold.pid)".into()));
    c.extend(foreign_kdamond());
    c
}

/// A kdamond as another tool would set one up (paddr, on); hotpages must
/// refuse and leave it exactly as it was.
fn foreign_kdamond() -> Vec<(String, String)> {
    let k = format!("{ADMIN}/0");
    // 1 MiB to 256 MiB of physical memory: node 0's RAM in this guest.
    let r = format!("{k}/contexts/0/targets/0/regions");
    vec![
        sh(
            "foreign-setup",
            format!(
                "echo 1 > {ADMIN}/nr_kdamonds && echo 1 > {k}/contexts/nr_contexts && \
                 echo paddr > {k}/contexts/0/operations && echo 1 > {k}/contexts/0/targets/nr_targets && \
                 echo 1 > {r}/nr_regions && echo 1048576 > {r}/0/start && echo 268435456 > {r}/0/end && \
                 echo on > {k}/state && cat {k}/state {k}/pid"
            ),
        ),
        sh(
            "foreign-hotpages",
            format!("numasleuth hotpages -p {VICTIM} --duration 2s"),
        ),
        sh(
            "foreign-after",
            format!("cat {k}/state {k}/pid {k}/contexts/0/operations {ADMIN}/nr_kdamonds"),
        ),
        sh(
            "foreign-teardown",
            format!("echo off > {k}/state && echo 0 > {ADMIN}/nr_kdamonds"),
        ),
    ]
}

fn text<'a>(o: &'a Outcome, name: &str) -> &'a str {
    o.run.transcript.sections.get(name).map_or("", |s| s.text.as_str())
}

fn range(region: &Value) -> Option<(u64, u64)> {
    let hex = |k: &str| u64::from_str_radix(region[k].as_str()?.trim_start_matches("0x"), 16).ok();
    Some((hex("start")?, hex("end")?))
}

/// The victim's `nil_root` address from its start line.
fn nil_root(o: &Outcome) -> Option<u64> {
    let line = text(o, "victim");
    let word = line.split_whitespace().find_map(|w| w.strip_prefix("nil_root=0x"))?;
    u64::from_str_radix(word, 16).ok()
}

pub fn expect(o: &Outcome, c: &mut Checks) {
    let sections = &o.run.transcript.sections;
    c.eq(
        "no kdamond before",
        text(o, "damon-before").trim(),
        "nr=0 threads=0 claim=",
    );
    c.eq(
        "no kdamond left after hotpages",
        text(o, "damon-after").trim(),
        "nr=0 threads=0 claim=",
    );
    c.eq(
        "hotpages moved nothing (vmstat)",
        text(o, "vmstat-after"),
        text(o, "vmstat-before"),
    );
    if let Some(inspect) = command_json(c, sections, "inspect-after-hotpages") {
        let nodes = victim_bss(&inspect, "pages_by_node").0;
        c.check(
            nodes.get("1").is_some_and(|&p| p > 0) && !nodes.contains_key("0"),
            || format!("victim .bss after hotpages: {nodes:?}"),
        );
    }
    if let Some(doc) = command_json(c, sections, "hotpages") {
        expect_victim(c, &doc, nil_root(o));
    }
    expect_ends(o, c);
    if let Some(doc) = command_json(c, sections, "doctor-measure") {
        c.check(finding(&doc, "hot-remote-memory").is_some(), || {
            format!("doctor --pid --measure: no hot-remote-memory: {}", doc["findings"])
        });
    }
    if let Some(doc) = command_json(c, sections, "control") {
        c.check(finding(&doc, "hot-remote-memory").is_none(), || {
            format!("local control raised hot-remote-memory: {}", doc["findings"])
        });
        let remote: Vec<&Value> = array(&doc, "regions").iter().filter(|r| r["remote"] == true).collect();
        c.check(remote.is_empty(), || {
            format!("local control has remote regions: {remote:?}")
        });
    }
    if let Some(doc) = command_json(c, sections, "hotcold") {
        expect_hotcold(c, &doc, text(o, "hotcold-start"));
    }
    expect_foreign(o, c);
}

fn expect_victim(c: &mut Checks, doc: &Value, nil_root: Option<u64>) {
    c.eq("hotpages schema", doc["schema"].as_str(), Some("numasleuth.hotpages/1"));
    c.eq(
        "hotpages damon.aggr_us",
        doc["damon"]["aggr_us"].as_u64(),
        Some(100_000),
    );
    let regions = array(doc, "regions");
    let Some(first) = regions.first() else {
        c.fail(format!("hotpages found no hot region: {doc}"));
        return;
    };
    let holds = match (range(first), nil_root) {
        (Some((s, e)), Some(a)) => s <= a && a < e,
        _ => false,
    };
    c.check(holds, || {
        format!("first region {first} does not hold nil_root at {nil_root:x?}")
    });
    c.eq("first region remote", first["remote"].as_bool(), Some(true));
    c.check(first["nodes"]["1"].as_u64() > Some(0), || {
        format!("first region not on node 1: {first}")
    });
    c.check(array(first, "symbols").iter().any(|s| s == "nil_root"), || {
        format!("first region does not name nil_root: {first}")
    });
    c.eq("first region section", first["section"].as_str(), Some(".bss"));
    c.check(finding(doc, "hot-remote-memory").is_some(), || {
        format!("hotpages raised no hot-remote-memory: {}", doc["findings"])
    });
}

/// SIGKILL leaves the kdamond to the reaper; SIGTERM ends with a report.
fn expect_ends(o: &Outcome, c: &mut Checks) {
    let killed: Vec<&str> = text(o, "killed").lines().collect();
    c.eq(
        "kill -9: kdamond running before, none after (reaper)",
        killed,
        vec!["nr=1 threads=1 claim=damon-kdamond.json", "nr=0 threads=0 claim="],
    );
    let terminated = text(o, "terminated");
    c.check(
        terminated.contains("rc=0") && terminated.contains("nr=0 threads=0 claim="),
        || format!("SIGTERM: {terminated:?}"),
    );
    if let Some(doc) = command_json(c, &o.run.transcript.sections, "terminated-json") {
        c.eq("SIGTERM: stopped_early", doc["stopped_early"].as_bool(), Some(true));
        c.check(doc["damon"]["snapshots"].as_u64() >= Some(1), || {
            format!("SIGTERM: no snapshot reported: {}", doc["damon"])
        });
    }
}

fn expect_hotcold(c: &mut Checks, doc: &Value, start_line: &str) {
    let field = |key: &str| -> Option<(u64, u64)> {
        let word = start_line.split_whitespace().find_map(|w| w.strip_prefix(key))?;
        let (a, b) = word.split_once('-')?;
        let hex = |t: &str| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok();
        Some((hex(a)?, hex(b)?))
    };
    let (Some(hot), Some(cold)) = (field("hot="), field("cold=")) else {
        c.fail(format!("hotcold printed no ranges: {start_line:?}"));
        return;
    };
    let overlap = |r: (u64, u64), s: (u64, u64)| r.1.min(s.1).saturating_sub(r.0.max(s.0));
    let regions: Vec<(u64, u64)> = array(doc, "regions").iter().filter_map(range).collect();
    let in_hot: u64 = regions.iter().map(|&r| overlap(r, hot)).sum();
    let in_cold: u64 = regions.iter().map(|&r| overlap(r, cold)).sum();
    c.check(regions.first().is_some_and(|&r| overlap(r, hot) > 0), || {
        format!("hotcold: hottest region not in the hot range {hot:x?}: {regions:x?}")
    });
    c.check(in_hot >= (hot.1 - hot.0) / 2, || {
        format!(
            "hotcold: hot regions cover {in_hot} of the hot range's {} bytes",
            hot.1 - hot.0
        )
    });
    c.check(in_cold <= (cold.1 - cold.0) / 10, || {
        format!("hotcold: hot regions cover {in_cold} bytes of the cold range {cold:x?}")
    });
}

fn expect_foreign(o: &Outcome, c: &mut Checks) {
    let sections = &o.run.transcript.sections;
    let before: Vec<&str> = text(o, "foreign-setup").lines().collect();
    c.check(before.first() == Some(&"on"), || {
        format!("foreign kdamond did not start: {before:?}")
    });
    match sections.get("foreign-hotpages") {
        Some(s) => c.eq("hotpages beside a foreign kdamond: exit", s.rc, 2),
        None => c.fail("foreign-hotpages printed no result"),
    }
    let stderr = text(o, "foreign-hotpages.stderr");
    c.check(
        stderr.lines().count() == 1 && stderr.contains("cannot get a kdamond of its own"),
        || format!("hotpages beside a foreign kdamond: {stderr:?}"),
    );
    let after: Vec<&str> = text(o, "foreign-after").lines().collect();
    c.eq(
        "foreign kdamond unchanged",
        after,
        vec![
            before.first().copied().unwrap_or("?"),
            before.get(1).copied().unwrap_or("?"),
            "paddr",
            "1",
        ],
    );
}
