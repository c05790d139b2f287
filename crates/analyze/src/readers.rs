//! Who read the kernel files that take the allocator's locks, and how
//! often: the last step of the zone-reclaim incident, where the stalls
//! came from a monitor reading /proc/slabinfo.
//!
//! A reader is a program run by one parent: a loop that runs `cat
//! /proc/slabinfo` every 200 ms is one reader with a new PID each time,
//! so opens are grouped by (command name, parent), never by PID alone.
//! A process reading its own smaps takes only its own lock and is left
//! out (counted).

use std::collections::BTreeMap;

use numasleuth_model::readers::{Ancestor, LockFile, Method, Open, ReaderProcess, ReadersRaw, Target, TargetProcess};
use serde::Serialize;

use crate::findings::{incident, Evidence, Finding, Severity};

/// PIDs listed per reader; the count says how many there were.
pub const MAX_PIDS_LISTED: usize = 16;
/// Open times listed per reader (the first ones).
pub const MAX_TIMES_LISTED: usize = 100;
/// Readers described in the finding's evidence.
const MAX_EVIDENCE: usize = 8;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetReads {
    pub pid: u32,
    pub comm: Option<String>,
    pub resident_bytes: Option<u64>,
    pub opens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReads {
    pub file: LockFile,
    pub opens: u64,
    /// For `/proc/PID/…` files: whose, when known.
    pub targets: Vec<TargetReads>,
    /// Opens of a per-process file whose process is not known.
    pub unknown_target_opens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reader {
    pub comm: String,
    /// The first process's command line.
    pub cmdline: Option<String>,
    /// The first process's parent chain.
    pub parents: Vec<Ancestor>,
    /// Distinct processes (a loop starts a new one each time).
    pub processes: u64,
    /// The first [`MAX_PIDS_LISTED`].
    pub pids: Vec<u32>,
    pub opens: u64,
    pub opens_per_s: f64,
    pub first_s: f64,
    pub last_s: f64,
    /// Median time between two opens, with two or more.
    pub median_interval_s: Option<f64>,
    pub files: Vec<FileReads>,
    /// The first [`MAX_TIMES_LISTED`] open times.
    pub times_s: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub method: Method,
    pub files: Vec<LockFile>,
    pub duration_s: f64,
    /// Most opens first.
    pub readers: Vec<Reader>,
    pub opens: u64,
    /// Reads of a process's own smaps/numa_maps, left out.
    pub own_reads_left_out: u64,
    pub notes: Vec<String>,
}

/// Groups the opens into readers.
pub fn summarize(raw: &ReadersRaw) -> Summary {
    let who: BTreeMap<u32, &ReaderProcess> = raw.processes.iter().map(|p| (p.pid, p)).collect();
    let whose: BTreeMap<u32, &TargetProcess> = raw.targets.iter().map(|t| (t.pid, t)).collect();
    let mut groups: BTreeMap<(String, Option<u32>), Vec<&Open>> = BTreeMap::new();
    let mut own = 0u64;
    for open in &raw.opens {
        if open.target == Target::Own {
            own += 1;
            continue;
        }
        let process = who.get(&open.pid);
        let comm = process.map_or_else(|| "?".to_string(), |p| p.comm.clone());
        let parent = process.and_then(|p| p.parents.first()).map(|a| a.pid);
        groups.entry((comm, parent)).or_default().push(open);
    }
    let mut readers: Vec<Reader> = groups
        .into_values()
        .map(|opens| reader(&opens, &who, &whose, raw.duration_s))
        .collect();
    readers.sort_by(|a, b| b.opens.cmp(&a.opens).then_with(|| a.comm.cmp(&b.comm)));
    let mut notes = raw.notes.clone();
    if own > 0 {
        notes.push(format!(
            "{own} reads of a process's own smaps or numa_maps left out (its own lock only)"
        ));
    }
    Summary {
        method: raw.method.clone(),
        files: raw.files.clone(),
        duration_s: raw.duration_s,
        opens: readers.iter().map(|r| r.opens).sum(),
        readers,
        own_reads_left_out: own,
        notes,
    }
}

fn reader(
    opens: &[&Open],
    who: &BTreeMap<u32, &ReaderProcess>,
    whose: &BTreeMap<u32, &TargetProcess>,
    duration_s: f64,
) -> Reader {
    let first = who.get(&opens[0].pid);
    let mut pids: Vec<u32> = Vec::new();
    for open in opens {
        if !pids.contains(&open.pid) {
            pids.push(open.pid);
        }
    }
    let times: Vec<f64> = opens.iter().map(|o| o.t_s).collect();
    let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    Reader {
        comm: first.map_or_else(|| "?".to_string(), |p| p.comm.clone()),
        cmdline: opens
            .iter()
            .find_map(|o| who.get(&o.pid).and_then(|p| p.cmdline.clone())),
        parents: first.map(|p| p.parents.clone()).unwrap_or_default(),
        processes: pids.len() as u64,
        pids: pids.into_iter().take(MAX_PIDS_LISTED).collect(),
        opens: opens.len() as u64,
        opens_per_s: if duration_s > 0.0 {
            opens.len() as f64 / duration_s
        } else {
            0.0
        },
        first_s: times[0],
        last_s: times[times.len() - 1],
        median_interval_s: (!gaps.is_empty()).then(|| gaps[gaps.len() / 2]),
        files: per_file(opens, whose),
        times_s: times.into_iter().take(MAX_TIMES_LISTED).collect(),
    }
}

fn per_file(opens: &[&Open], whose: &BTreeMap<u32, &TargetProcess>) -> Vec<FileReads> {
    let mut by_file: BTreeMap<LockFile, FileReads> = BTreeMap::new();
    for open in opens {
        let entry = by_file.entry(open.file).or_insert_with(|| FileReads {
            file: open.file,
            opens: 0,
            targets: Vec::new(),
            unknown_target_opens: 0,
        });
        entry.opens += 1;
        match open.target {
            Target::Process(pid) => match entry.targets.iter_mut().find(|t| t.pid == pid) {
                Some(t) => t.opens += 1,
                None => entry.targets.push(TargetReads {
                    pid,
                    comm: whose.get(&pid).and_then(|t| t.comm.clone()),
                    resident_bytes: whose.get(&pid).and_then(|t| t.resident_bytes),
                    opens: 1,
                }),
            },
            Target::Unknown => entry.unknown_target_opens += 1,
            Target::System | Target::Own => {}
        }
    }
    let mut files: Vec<FileReads> = by_file.into_values().collect();
    for f in &mut files {
        f.targets.sort_by(|a, b| b.opens.cmp(&a.opens).then(a.pid.cmp(&b.pid)));
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.opens));
    files
}

/// `ss` (child of `node-agent` 200): how a reader is named in one line.
pub fn name_with_parent(reader: &Reader) -> String {
    match reader.parents.first() {
        Some(parent) => format!("`{}` (child of `{}` {})", reader.comm, parent.comm, parent.pid),
        None => format!("`{}`", reader.comm),
    }
}

/// Where the opens were counted, for evidence.
pub fn source(method: &Method) -> String {
    match method {
        Method::Kprobe => "kprobe:slabinfo_open,pagetypeinfo_show,pid_smaps_open,…".to_string(),
        Method::Tracepoint { .. } => "tracepoint:syscalls:sys_enter_open*".to_string(),
        Method::FdScan { .. } => "/proc/*/fd".to_string(),
    }
}

/// `lock-taking-reader`: processes that read the lock-taking files during
/// the window; nothing when none did.
pub fn finding(summary: &Summary) -> Option<Finding> {
    if summary.readers.is_empty() {
        return None;
    }
    let source = source(&summary.method);
    let mut evidence: Vec<Evidence> = summary
        .readers
        .iter()
        .take(MAX_EVIDENCE)
        .map(|r| reader_evidence(r, &source, summary.duration_s))
        .collect();
    let lower = if summary.method.counts_every_open() {
        ""
    } else {
        " (a sampled view: lower bounds)"
    };
    evidence.push(
        Evidence::new(source, format!("seen by the {} method{lower}", summary.method.name()))
            .with("readers", summary.readers.len())
            .with("opens", summary.opens)
            .with("duration_s", summary.duration_s),
    );
    let files: Vec<LockFile> = {
        let mut all: Vec<LockFile> = summary
            .readers
            .iter()
            .flat_map(|r| r.files.iter().map(|f| f.file))
            .collect();
        all.sort();
        all.dedup();
        all
    };
    Some(Finding {
        id: "lock-taking-reader",
        severity: Severity::Warning,
        confidence: None,
        title: format!(
            "{} process(es) read kernel files that take the allocator's locks ({} opens in {:.1} s): {}",
            summary.readers.len(),
            summary.opens,
            summary.duration_s,
            files.iter().map(|f| f.path()).collect::<Vec<_>>().join(", ")
        ),
        evidence,
        remedy: remedy(&files),
        incident: Some(incident::ZONE_RECLAIM),
        explains: Vec::new(),
    })
}

fn reader_evidence(r: &Reader, source: &str, duration_s: f64) -> Evidence {
    let files: Vec<String> = r
        .files
        .iter()
        .map(|f| format!("{} ×{}", f.file.path(), f.opens))
        .collect();
    let pids = if r.processes > 1 {
        format!(" by {} processes (a new one each time)", r.processes)
    } else {
        format!(" (PID {})", r.pids[0])
    };
    let text = format!(
        "{}{} opened {} in {duration_s:.1} s ({:.1}/s){pids}",
        name_with_parent(r),
        r.cmdline.as_deref().map_or(String::new(), |c| format!(" [{c}]")),
        files.join(", "),
        r.opens_per_s,
    );
    Evidence::new(source, text)
        .with("pid", r.pids[0])
        .with_some("parent_pid", r.parents.first().map(|a| a.pid))
        .with("opens", r.opens)
        .with("opens_per_s", r.opens_per_s)
        .with("processes", r.processes)
        .with_some("median_interval_s", r.median_interval_s)
}

/// Stop the readers, or point them at a file that takes no such lock.
fn remedy(files: &[LockFile]) -> String {
    let mut ways = vec!["stop the reader or make it read less often".to_string()];
    if files.contains(&LockFile::Slabinfo) {
        ways.push(
            "for slab totals read `/proc/meminfo` (Slab, SReclaimable, SUnreclaim) or each node's \
             `/sys/devices/system/node/nodeN/meminfo` instead of /proc/slabinfo; for socket counts read \
             `/proc/net/sockstat` instead of running `ss -s` where it reads slabinfo"
                .to_string(),
        );
    }
    if files.contains(&LockFile::Pagetypeinfo) {
        ways.push(
            "for free pages per order read `/proc/buddyinfo` instead of /proc/pagetypeinfo (it holds the zone lock \
             only to copy each order's count, not to walk every free list)"
                .to_string(),
        );
    }
    if files.iter().any(|f| f.per_process()) {
        ways.push(
            "for a process's memory read `/proc/PID/status` (VmRSS, RssAnon) or `statm` instead of walking its \
             smaps/numa_maps, or read it less often on large processes"
                .to_string(),
        );
    }
    if files.contains(&LockFile::Kpageflags) || files.contains(&LockFile::Kpagecount) {
        ways.push("walk /proc/kpageflags and kpagecount for the pages of interest only, not all of memory".to_string());
    }
    ways.join("; ")
}

#[cfg(test)]
#[path = "readers_tests.rs"]
mod tests;
