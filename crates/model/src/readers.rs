//! Opens of kernel files that take a lock allocation, reclaim or page
//! faults need (`readers`): which files, what a collector saw, and the
//! processes that opened them.
//!
//! Why a model of its own: the same opens are collected three ways (a
//! kprobe, the `sys_enter_openat` tracepoint, a scan of `/proc/*/fd`) and
//! read by four commands (`readers`, `probe-latency`, `doctor --measure`,
//! `serve`); they meet here as plain data. Which lock each file takes is
//! documented, with its kernel-version caveats, in docs/readers.md.

use serde::Serialize;

/// A kernel file whose read takes a lock that the allocator, reclaim or a
/// page fault also takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockFile {
    Slabinfo,
    Pagetypeinfo,
    Smaps,
    SmapsRollup,
    NumaMaps,
    Kpageflags,
    Kpagecount,
}

/// What opening a file of the `/proc/PID/` family was aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", content = "pid", rename_all = "snake_case")]
pub enum Target {
    /// A system-wide file (`/proc/slabinfo`).
    System,
    /// Another process's file: its mmap lock is taken.
    Process(u32),
    /// The opener's own (`/proc/self/smaps`, or its own PID).
    Own,
    /// A per-process file whose process is not known (the kprobe sees the
    /// open, not the path).
    Unknown,
}

impl LockFile {
    pub const ALL: [LockFile; 7] = [
        LockFile::Slabinfo,
        LockFile::Pagetypeinfo,
        LockFile::Smaps,
        LockFile::SmapsRollup,
        LockFile::NumaMaps,
        LockFile::Kpageflags,
        LockFile::Kpagecount,
    ];

    /// The file's name in `/proc` or `/proc/PID`, as `--files` takes it.
    pub fn name(self) -> &'static str {
        match self {
            LockFile::Slabinfo => "slabinfo",
            LockFile::Pagetypeinfo => "pagetypeinfo",
            LockFile::Smaps => "smaps",
            LockFile::SmapsRollup => "smaps_rollup",
            LockFile::NumaMaps => "numa_maps",
            LockFile::Kpageflags => "kpageflags",
            LockFile::Kpagecount => "kpagecount",
        }
    }

    /// How a person reads the path: `/proc/slabinfo`, `/proc/PID/smaps`.
    pub fn path(self) -> String {
        if self.per_process() {
            format!("/proc/PID/{}", self.name())
        } else {
            format!("/proc/{}", self.name())
        }
    }

    /// Whether it is one process's file (`/proc/PID/…`).
    pub fn per_process(self) -> bool {
        matches!(self, LockFile::Smaps | LockFile::SmapsRollup | LockFile::NumaMaps)
    }

    /// The lock it takes and who else needs it, in one line.
    pub fn reason(self) -> &'static str {
        match self {
            LockFile::Slabinfo => {
                "slab_mutex during each read() call, and on SLUB each node's slab list_lock with interrupts off \
                 while its partial slabs are counted: slab allocations that refill from a node's partial list wait"
            }
            LockFile::Pagetypeinfo => {
                "each zone's lock with interrupts off while every free list is counted: every page allocation and \
                 free on that zone that misses the per-CPU lists waits"
            }
            LockFile::Smaps | LockFile::NumaMaps => {
                "the target's mmap lock (read) while its page tables are walked: the target's mmap, munmap, \
                 mprotect and brk wait, and its page faults queue behind them; cost grows with its mapped memory"
            }
            LockFile::SmapsRollup => {
                "the target's mmap lock (read) while all its mappings are walked (since 2020 dropped when a writer \
                 waits): the target's mmap, munmap and brk wait, and its page faults queue behind them; cost grows \
                 with its mapped memory"
            }
            LockFile::Kpageflags | LockFile::Kpagecount => {
                "no allocator lock, but every struct page asked for is read: a walk of all memory costs CPU and \
                 cache in proportion to memory, on the CPU of the reader"
            }
        }
    }

    /// `slabinfo`, `/proc/slabinfo`, `smaps_rollup` or `/proc/PID/smaps`.
    pub fn from_name(text: &str) -> Option<LockFile> {
        let name = text.trim().rsplit('/').next().unwrap_or_default();
        LockFile::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Which lock file an opened path is, and at what. `path` is absolute
    /// or already joined to the opener's directory; `opener` is the
    /// opener's process id. `None`: not one of the files (a
    /// `/home/x/slabinfo`, or a bare relative name it could not place).
    /// The file opened is matched, not the spelling: see [`opened_parts`].
    pub fn classify(path: &str, opener: u32) -> Option<(LockFile, Target)> {
        let parts = opened_parts(path);
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let (&name, dirs) = parts.split_last()?;
        let file = LockFile::ALL.into_iter().find(|f| f.name() == name)?;
        let (&proc_dir, rest) = dirs.split_first()?;
        if proc_dir != "proc" {
            return None;
        }
        if !file.per_process() {
            // /proc/slabinfo, /proc/kpageflags: nothing between.
            return rest.is_empty().then_some((file, Target::System));
        }
        let target = match rest {
            [who] | [who, "task", _] => owner(who, opener)?,
            _ => return None,
        };
        Some((file, target))
    }
}

/// `path`'s components as the kernel walks them, as far as that can be
/// done from the text: `.` and empty components dropped, `..` taking back
/// the component before it (and nothing at `/`), `/proc/thread-self`
/// being `/proc/self/task/TID` (so its `..` is `/proc/self/task`), and
/// `/proc/PID/root` starting over at `/` (the process's root, taken to be
/// the opener's). So `/proc/self/../slabinfo` is `/proc/slabinfo` and
/// `/proc/self/../4242/smaps_rollup` is 4242's. Other symbolic links
/// cannot be seen in the text: a `..` after one is taken lexically, and a
/// link to a lock file under another name is not recognised here.
fn opened_parts(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        match part {
            ".." => {
                let popped = parts.pop();
                if popped.as_deref() == Some("thread-self") && parts == ["proc"] {
                    parts.extend(["self".to_string(), "task".to_string()]);
                }
            }
            "root" if parts.first().is_some_and(|p| p == "proc") && matches!(parts.len(), 2 | 4) => {
                parts.clear();
            }
            _ => parts.push(part.to_string()),
        }
    }
    parts
}

/// `self`, `thread-self` or a PID, as the directory under /proc names it.
fn owner(who: &str, opener: u32) -> Option<Target> {
    match who {
        "self" | "thread-self" => Some(Target::Own),
        digits => {
            let pid: u32 = digits.parse().ok().filter(|p| *p > 0)?;
            Some(if pid == opener {
                Target::Own
            } else {
                Target::Process(pid)
            })
        }
    }
}

/// How opens were seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Method {
    /// A kprobe on each file's open (or show/read) function through
    /// perf's dynamic kprobe PMU: every open, even of a process that
    /// lives a millisecond.
    Kprobe,
    /// `syscalls:sys_enter_open*` with an in-kernel filter on the file
    /// name, the name read from the opener at sample time.
    Tracepoint { why_not_kprobe: String },
    /// `/proc/*/fd` scanned every `interval_ms`: files held open across a
    /// scan are seen, so counts are lower bounds.
    FdScan { interval_ms: u64, reason: String },
}

impl Method {
    /// `kprobe`, `tracepoint`, `fd-scan`.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Kprobe => "kprobe",
            Method::Tracepoint { .. } => "tracepoint",
            Method::FdScan { .. } => "fd-scan",
        }
    }

    /// Whether every open is seen (a scan sees only those held open).
    pub fn counts_every_open(&self) -> bool {
        !matches!(self, Method::FdScan { .. })
    }
}

/// One open of a lock file, as a collector saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Open {
    /// Seconds after the observation's origin.
    pub t_s: f64,
    pub pid: u32,
    pub tid: u32,
    pub file: LockFile,
    pub target: Target,
}

/// One process in a parent chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ancestor {
    pub pid: u32,
    pub comm: String,
}

/// Who a reading process was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReaderProcess {
    pub pid: u32,
    pub comm: String,
    /// `None` when it exited before its command line could be read.
    pub cmdline: Option<String>,
    /// Parent first, then its parent, up to (not including) init.
    pub parents: Vec<Ancestor>,
}

/// A process whose `/proc/PID/smaps` (or numa_maps) was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetProcess {
    pub pid: u32,
    pub comm: Option<String>,
    /// Resident memory when first seen: what a walk of it costs.
    pub resident_bytes: Option<u64>,
}

/// Everything one observation gathered, raw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadersRaw {
    pub method: Method,
    pub files: Vec<LockFile>,
    pub duration_s: f64,
    /// In time order; at most [`MAX_OPENS_KEPT`].
    pub opens: Vec<Open>,
    /// Opens seen past [`MAX_OPENS_KEPT`]: counted, not kept.
    pub opens_dropped: u64,
    pub processes: Vec<ReaderProcess>,
    pub targets: Vec<TargetProcess>,
    /// Records the kernel dropped (a full ring buffer): counts are then
    /// lower bounds.
    pub lost_records: u64,
    pub notes: Vec<String>,
}

/// Opens kept in one observation (about 40 bytes each).
pub const MAX_OPENS_KEPT: usize = 200_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_classified_with_their_target() {
        let cases = [
            ("/proc/slabinfo", Some((LockFile::Slabinfo, Target::System))),
            ("/proc//./pagetypeinfo", Some((LockFile::Pagetypeinfo, Target::System))),
            ("/proc/kpageflags", Some((LockFile::Kpageflags, Target::System))),
            ("/proc/1234/smaps", Some((LockFile::Smaps, Target::Process(1234)))),
            (
                "/proc/1234/task/1240/numa_maps",
                Some((LockFile::NumaMaps, Target::Process(1234))),
            ),
            ("/proc/self/smaps_rollup", Some((LockFile::SmapsRollup, Target::Own))),
            ("/proc/thread-self/smaps", Some((LockFile::Smaps, Target::Own))),
            ("/proc/77/smaps", Some((LockFile::Smaps, Target::Own))),
            ("/proc/1/slabinfo", None),
            ("/proc/slabinfo/x", None),
            ("/home/u/slabinfo", None),
            ("slabinfo", None),
            ("/proc/smaps", None),
            ("/proc/0/smaps", None),
            ("/proc/abc/smaps", None),
            ("/proc/1/task/2/3/smaps", None),
            ("/proc/meminfo", None),
            ("", None),
            ("/", None),
            // The same files spelled another way (issue 36).
            ("/proc/self/../slabinfo", Some((LockFile::Slabinfo, Target::System))),
            (
                "/proc/../proc/./pagetypeinfo",
                Some((LockFile::Pagetypeinfo, Target::System)),
            ),
            ("/../../proc/slabinfo", Some((LockFile::Slabinfo, Target::System))),
            (
                "/proc/self/../4242/smaps_rollup",
                Some((LockFile::SmapsRollup, Target::Process(4242))),
            ),
            (
                "/proc/4242/task/../smaps",
                Some((LockFile::Smaps, Target::Process(4242))),
            ),
            ("/proc/self/task/../smaps", Some((LockFile::Smaps, Target::Own))),
            ("/proc/thread-self/../../smaps", Some((LockFile::Smaps, Target::Own))),
            (
                "/proc/thread-self/../../../9/numa_maps",
                Some((LockFile::NumaMaps, Target::Process(9))),
            ),
            ("/proc/1/root/proc/slabinfo", Some((LockFile::Slabinfo, Target::System))),
            (
                "/proc/self/root/proc/5/smaps",
                Some((LockFile::Smaps, Target::Process(5))),
            ),
            (
                "/proc/1/task/1/root/../proc/kpageflags",
                Some((LockFile::Kpageflags, Target::System)),
            ),
            (
                "/home/u/../../proc/slabinfo",
                Some((LockFile::Slabinfo, Target::System)),
            ),
            // Still not the files.
            ("/proc/slabinfo/..", None),
            ("/proc/self/../slabinfo/../meminfo", None),
            ("/proc/thread-self/../smaps", None),
            ("/proc/self/fd/../slabinfo", None),
            ("/home/root/proc/slabinfo", None),
            ("/proc/root/slabinfo", None),
            ("/home/thread-self/../task/1/smaps", None),
        ];
        for (path, want) in cases {
            assert_eq!(LockFile::classify(path, 77), want, "{path}");
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_none() {
        for file in LockFile::ALL {
            assert_eq!(LockFile::from_name(file.name()), Some(file));
            assert_eq!(LockFile::from_name(&file.path()), Some(file));
            assert!(!file.reason().is_empty());
        }
        assert_eq!(LockFile::from_name("meminfo"), None);
        assert_eq!(LockFile::from_name(""), None);
        assert_eq!(LockFile::Smaps.path(), "/proc/PID/smaps");
    }

    #[test]
    fn json_names() {
        let open = Open {
            t_s: 1.5,
            pid: 4,
            tid: 5,
            file: LockFile::SmapsRollup,
            target: Target::Process(9),
        };
        let json = serde_json::to_value(&open).unwrap();
        assert_eq!(json["file"], "smaps_rollup");
        assert_eq!(json["target"]["kind"], "process");
        assert_eq!(json["target"]["pid"], 9);
        let m = serde_json::to_value(Method::FdScan {
            interval_ms: 100,
            reason: "r".into(),
        })
        .unwrap();
        assert_eq!(m["kind"], "fd-scan");
    }
}
