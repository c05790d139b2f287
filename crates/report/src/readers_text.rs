//! `readers` as text: one block per reader (most opens first) with its
//! parent chain, command line, files and rate; then why each file read
//! matters, the finding, and what limited the view.

use std::fmt::Write;

use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::readers::{Reader, Summary};
use numasleuth_model::readers::Method;
use numasleuth_parse::error::escape;

use crate::format::optional_bytes;

/// Readers shown; the JSON has every one.
const MAX_READERS: usize = 30;
/// Targets shown per file.
const MAX_TARGETS: usize = 5;

pub fn how(method: &Method) -> String {
    match method {
        Method::Kprobe => "kprobes on each file's kernel function (every open, even of short-lived processes)".into(),
        Method::Tracepoint { why_not_kprobe } => format!(
            "the syscalls:sys_enter_open* tracepoints with an in-kernel name filter (every open; for a process that \
             exits at once the command line, and whose smaps it read, may be unknown; no kprobe: {why_not_kprobe})"
        ),
        Method::FdScan { interval_ms, reason } => format!(
            "a SAMPLED view: /proc/*/fd scanned every {interval_ms} ms (files opened and closed between scans are \
             missed: lower bounds; perf not used: {reason})"
        ),
    }
}

/// `cat ← sh 760 ← bash 700`.
fn chain(r: &Reader) -> String {
    let mut out = escape(&r.comm);
    for a in &r.parents {
        let _ = write!(out, " ← {} {}", escape(&a.comm), a.pid);
    }
    out
}

fn reader_block(out: &mut String, r: &Reader) {
    let every = r
        .median_interval_s
        .map_or(String::new(), |s| format!(", about every {s:.2} s"));
    let pids = if r.processes == 1 {
        format!("PID {}", r.pids[0])
    } else {
        let more = if r.processes as usize > r.pids.len() {
            ", …"
        } else {
            ""
        };
        // In the order they ran; runs of consecutive PIDs as ranges.
        format!(
            "{} processes (PIDs {}{more})",
            r.processes,
            numasleuth_parse::consecutive_runs(&r.pids)
        )
    };
    let _ = writeln!(out, "\n{}", chain(r));
    let _ = writeln!(
        out,
        "    {} open(s), {:.1}/s{every}, t={:.2}–{:.2} s; {pids}",
        r.opens, r.opens_per_s, r.first_s, r.last_s
    );
    if let Some(cmdline) = &r.cmdline {
        let _ = writeln!(out, "    command: {}", escape(cmdline));
    }
    for f in &r.files {
        let _ = write!(out, "    {} ×{}", f.file.path(), f.opens);
        let targets: Vec<String> = f
            .targets
            .iter()
            .take(MAX_TARGETS)
            .map(|t| {
                let name = t.comm.as_deref().map_or("?".to_string(), escape);
                format!(
                    "{name} {} ({} resident) ×{}",
                    t.pid,
                    optional_bytes(t.resident_bytes),
                    t.opens
                )
            })
            .collect();
        if !targets.is_empty() {
            let _ = write!(out, " of {}", targets.join(", "));
        }
        if f.targets.len() > MAX_TARGETS {
            let _ = write!(out, ", … {} more processes", f.targets.len() - MAX_TARGETS);
        }
        if f.unknown_target_opens > 0 {
            let _ = write!(out, " ({} of a process not known)", f.unknown_target_opens);
        }
        out.push('\n');
    }
}

pub fn render(summary: &Summary, findings: &[Finding]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "readers of lock-taking kernel files over {:.1} s, seen by {}",
        summary.duration_s,
        how(&summary.method)
    );
    let watched: Vec<String> = summary.files.iter().map(|f| f.path()).collect();
    let _ = writeln!(out, "watched: {}", watched.join(", "));
    if summary.readers.is_empty() {
        let _ = writeln!(out, "\nno process opened them");
    }
    for r in summary.readers.iter().take(MAX_READERS) {
        reader_block(&mut out, r);
    }
    if summary.readers.len() > MAX_READERS {
        let _ = writeln!(
            out,
            "\n… and {} more readers (see --json)",
            summary.readers.len() - MAX_READERS
        );
    }
    let mut read: Vec<_> = summary
        .readers
        .iter()
        .flat_map(|r| r.files.iter().map(|f| f.file))
        .collect();
    read.sort();
    read.dedup();
    if !read.is_empty() {
        let _ = writeln!(out, "\nwhat each read takes:");
        for file in read {
            let _ = writeln!(out, "  {}: {}", file.path(), file.reason());
        }
    }
    for f in findings {
        let _ = writeln!(out, "\n[{}] {}: {}", f.severity.as_str(), f.id, f.title);
        let _ = writeln!(out, "    remedy: {}", f.remedy);
    }
    for note in &summary.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}
