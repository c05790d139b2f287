//! Golden test of `readers`: a kprobe observation with a loop of `cat`s
//! (one reader, fifteen PIDs), an agent walking a large process's
//! smaps_rollup, a process named with an escape sequence (shown escaped),
//! a process reading its own smaps (left out), and the finding; text at 80
//! and 200 columns and JSON. `INSTA_UPDATE=always cargo test -p
//! numasleuth-report --test it golden_readers::` rewrites them after a
//! deliberate change.

use crate::common;

use common::golden_all;
use numasleuth_analyze::readers::{finding, summarize};
use numasleuth_model::readers::{Ancestor, LockFile, Method, Open, ReaderProcess, ReadersRaw, Target, TargetProcess};
use numasleuth_report::export::TextJson;
use numasleuth_report::readers_json::{self, ReadersDocument};
use numasleuth_report::readers_text;

fn process(pid: u32, comm: &str, cmdline: Option<&str>, parents: &[(u32, &str)]) -> ReaderProcess {
    ReaderProcess {
        pid,
        comm: comm.into(),
        cmdline: cmdline.map(str::to_string),
        parents: parents
            .iter()
            .map(|(pid, comm)| Ancestor {
                pid: *pid,
                comm: comm.to_string(),
            })
            .collect(),
    }
}

/// Ten `cat`s in a row, then five with other processes started between
/// them: PIDs 5 apart, which must not read as `1015-1035:5`.
fn cat_pid(i: u32) -> u32 {
    if i < 10 {
        1000 + i
    } else {
        1010 + 5 * (i - 9)
    }
}

fn raw() -> ReadersRaw {
    let open = |t_s: f64, pid: u32, file: LockFile, target: Target| Open {
        t_s,
        pid,
        tid: pid,
        file,
        target,
    };
    let mut opens: Vec<Open> = (0..15u32)
        .map(|i| open(0.2 + 0.2 * f64::from(i), cat_pid(i), LockFile::Slabinfo, Target::System))
        .collect();
    opens.extend([
        open(0.5, 50, LockFile::SmapsRollup, Target::Process(60)),
        open(2.5, 50, LockFile::SmapsRollup, Target::Process(60)),
        open(1.0, 51, LockFile::Pagetypeinfo, Target::System),
        open(1.1, 52, LockFile::Smaps, Target::Own),
    ]);
    opens.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut processes: Vec<ReaderProcess> = (0..15)
        .map(|i| {
            process(
                cat_pid(i),
                "cat",
                Some("cat /proc/slabinfo"),
                &[(760, "sh"), (700, "cron")],
            )
        })
        .collect();
    processes.push(process(
        50,
        "node-agent",
        Some("/usr/bin/node-agent --interval 2s"),
        &[],
    ));
    processes.push(process(51, "evil\u{1b}[2J", None, &[(760, "sh"), (700, "cron")]));
    ReadersRaw {
        method: Method::Kprobe,
        files: LockFile::ALL.to_vec(),
        duration_s: 3.0,
        opens,
        opens_dropped: 0,
        processes,
        targets: vec![TargetProcess {
            pid: 60,
            comm: Some("postgres".into()),
            resident_bytes: Some(8 << 30),
        }],
        lost_records: 0,
        notes: vec![],
    }
}

#[test]
fn readers() {
    let raw = raw();
    let summary = summarize(&raw);
    let findings: Vec<_> = finding(&summary).into_iter().collect();
    let document = ReadersDocument::new(&summary, &raw.opens, &findings);
    let report = TextJson::new(readers_json::document(&document), |_| {
        readers_text::render(&summary, &findings)
    });
    golden_all("readers", &report);
}
