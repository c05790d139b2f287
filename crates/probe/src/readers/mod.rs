//! Who opens the kernel files that take the allocator's locks
//! (`readers`, `probe-latency --readers`, `doctor --measure`, `serve`).
//!
//! Three methods, best first, and the caller is told which one ran:
//! a kprobe on each file's kernel function (exact, no names to read), the
//! open syscalls' tracepoints filtered by name in the kernel (every open,
//! the name read from the sample or the live process), or a scan of
//! `/proc/*/fd` (a sampled view, lower bounds). Collection only: what the
//! opens mean is decided in `analyze::readers`.

mod choose;
pub mod error;
pub mod fdscan;
pub mod kprobe;
pub mod on_thread;
pub mod perf;
pub mod syscall;
pub mod tasks;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use numasleuth_kernel::procfs::{fd, statm};
use numasleuth_kernel::tracefs::open::AT_FDCWD;
use numasleuth_kernel::Root;
use numasleuth_model::readers::{
    LockFile, Method, Open, ReaderProcess, ReadersRaw, Target, TargetProcess, MAX_OPENS_KEPT,
};
use numasleuth_model::stop::Stop;

use self::error::StartError;
use self::fdscan::Scanner;
use self::perf::{Hit, PerfSource};
use self::tasks::Tasks;

/// Longest wait between two reads of the perf rings (they are also read
/// as soon as a sample wakes us), and so the longest a stop request
/// waits.
pub const DRAIN: Duration = Duration::from_millis(20);
/// Processes described individually (readers and targets); more are
/// still counted, and described when the observation ends.
const MAX_DESCRIBED: usize = 4096;
/// Descriptors looked at to find which process's smaps a kprobe hit was.
const MAX_FDS_LOOKED: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Auto,
    Kprobe,
    Tracepoint,
    FdScan,
}

/// The instant times are counted from, with its CLOCK_MONOTONIC reading
/// (perf stamps samples with that clock; `Instant` is the same clock).
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    pub instant: Instant,
    pub monotonic_ns: u64,
}

impl Origin {
    pub fn now() -> Origin {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec for the call.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        Origin {
            instant: Instant::now(),
            monotonic_ns: (ts.tv_sec as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(ts.tv_nsec as u64),
        }
    }

    fn seconds(&self, t_ns: u64) -> f64 {
        (t_ns as i128 - self.monotonic_ns as i128) as f64 / 1e9
    }
}

#[derive(Debug, Clone)]
pub struct Setup {
    pub files: Vec<LockFile>,
    pub cpus: Vec<u32>,
    pub choice: Choice,
    pub scan_interval: Duration,
}

pub(crate) enum Source {
    Perf(PerfSource),
    Scan { scanner: Scanner, last: Option<Instant> },
}

pub struct Session {
    root: Root,
    files: Vec<LockFile>,
    method: Method,
    source: Source,
    tasks: Tasks,
    origin: Origin,
    scan_interval: Duration,
    self_pid: u32,
    reads: kprobe::Reads,
    readers: BTreeMap<u32, ReaderProcess>,
    targets: BTreeMap<u32, TargetProcess>,
    /// Opens whose name could not be read back (freed, or the opener
    /// exited first): counted as the file their event's filter names.
    pub unnamed: u64,
    /// Relative names whose directory could not be found.
    pub unplaced: u64,
    /// Samples whose process is not named yet, with the polls they waited:
    /// its exec record may still be on its way in another CPU's ring.
    pending: Vec<(Hit, u8)>,
}

/// Polls a sample waits for its process's exec record before it is taken
/// with whatever name is known.
const NAME_WAIT_POLLS: u8 = 5;

impl Session {
    /// Starts the best method `setup.choice` allows; the error is one line
    /// naming what is missing for each method tried.
    pub fn start(root: &Root, setup: &Setup, origin: Origin) -> Result<Session, StartError> {
        let (method, source) = choose::pick(root, setup)?;
        Ok(Session {
            root: root.clone(),
            files: setup.files.clone(),
            method,
            source,
            tasks: Tasks::new(root.clone()),
            origin,
            scan_interval: setup.scan_interval,
            self_pid: std::process::id(),
            reads: kprobe::Reads::default(),
            readers: BTreeMap::new(),
            targets: BTreeMap::new(),
            unnamed: 0,
            unplaced: 0,
            pending: Vec::new(),
        })
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    pub fn files(&self) -> &[LockFile] {
        &self.files
    }

    pub fn lost_records(&self) -> u64 {
        match &self.source {
            Source::Perf(p) => p.lost_records,
            Source::Scan { .. } => 0,
        }
    }

    /// The name of a reading process, for per-command counts (`serve`):
    /// fork and exec records keep it right when a PID is reused.
    pub fn comm(&mut self, pid: u32) -> String {
        self.tasks.comm(pid)
    }

    /// The samples still waiting for their process's name, resolved with
    /// what is known: for the end of a watch.
    pub fn flush(&mut self) -> Vec<Open> {
        let waiting = std::mem::take(&mut self.pending);
        let opens: Vec<Open> = waiting.into_iter().filter_map(|(hit, _)| self.resolve(hit)).collect();
        for open in &opens {
            self.describe(open);
        }
        opens
    }

    /// Waits for the next records (perf) or the time to the next scan,
    /// at most `timeout`.
    pub fn wait(&self, timeout: Duration) {
        match &self.source {
            Source::Perf(perf) => perf.wait(timeout),
            Source::Scan { last, .. } => {
                let due = last.map_or(Duration::ZERO, |l| self.scan_interval.saturating_sub(l.elapsed()));
                std::thread::sleep(due.min(timeout));
            }
        }
    }

    /// The opens seen since the last call (perf: what the rings hold; scan:
    /// a pass, if one is due).
    pub fn poll(&mut self) -> Vec<Open> {
        let mut opens = Vec::new();
        match &mut self.source {
            Source::Perf(perf) => {
                let mut hits = Vec::new();
                perf.drain(&mut self.tasks, &mut hits);
                let mut waiting = std::mem::take(&mut self.pending);
                waiting.extend(hits.into_iter().map(|h| (h, 0)));
                for (hit, waited) in waiting {
                    if waited < NAME_WAIT_POLLS && !self.tasks.named(hit.pid) {
                        self.pending.push((hit, waited + 1));
                    } else if let Some(open) = self.resolve(hit) {
                        opens.push(open);
                    }
                }
            }
            Source::Scan { scanner, last } => {
                if last.is_none_or(|l| l.elapsed() >= self.scan_interval) {
                    *last = Some(Instant::now());
                    opens = scanner.scan(self.origin.instant.elapsed().as_secs_f64());
                }
            }
        }
        for open in &opens {
            self.describe(open);
        }
        opens
    }

    /// One sample as an open, or `None` (ours, a later call of the same
    /// read, a file of the same name outside /proc).
    fn resolve(&mut self, hit: Hit) -> Option<Open> {
        if hit.pid == self.self_pid || hit.pid == 0 {
            return None;
        }
        let file = hit.file;
        let target = match hit.name {
            None => {
                if !self.reads.starts_open(hit.tid, file, hit.t_ns) {
                    return None;
                }
                self.unnamed_target(hit.pid, file)
            }
            Some(name) => {
                let text = name.text.or_else(|| syscall::read_user_string(hit.pid, name.pointer));
                // Read back late, the memory may hold something else now.
                match text.filter(|t| t.ends_with(file.name())) {
                    Some(text) => match self.place(hit.pid, &text, name.dfd) {
                        Some(path) => match LockFile::classify(&path, hit.pid) {
                            Some((seen, target)) if seen == file => target,
                            _ => return None,
                        },
                        None => {
                            self.unplaced += 1;
                            self.unnamed_target(hit.pid, file)
                        }
                    },
                    None => {
                        self.unnamed += 1;
                        self.unnamed_target(hit.pid, file)
                    }
                }
            }
        };
        Some(Open {
            t_s: self.origin.seconds(hit.t_ns),
            pid: hit.pid,
            tid: hit.tid,
            file,
            target,
        })
    }

    /// The target of an open whose path is not known: the whole system,
    /// or for `/proc/PID/…` whatever the opener holds now.
    fn unnamed_target(&self, pid: u32, file: LockFile) -> Target {
        if file.per_process() {
            self.held_target(pid, file)
        } else {
            Target::System
        }
    }

    /// An absolute path for `name`: relative ones joined to the opener's
    /// working directory or to the directory fd it gave.
    fn place(&self, pid: u32, name: &str, dfd: i64) -> Option<String> {
        if name.starts_with('/') {
            return Some(name.to_string());
        }
        let link = if dfd == AT_FDCWD {
            format!("proc/{pid}/cwd")
        } else {
            format!("proc/{pid}/fd/{dfd}")
        };
        match fd::link_target(&self.root, &link) {
            Ok(Some(dir)) if dir.starts_with('/') => Some(fd::join(&dir, name)),
            _ => None,
        }
    }

    /// The process whose `file` the opener holds, seen in its fds (the
    /// kprobe does not see the path).
    fn held_target(&self, pid: u32, file: LockFile) -> Target {
        let Ok(Some(open)) = fd::read_open(&self.root, pid, MAX_FDS_LOOKED) else {
            return Target::Unknown;
        };
        open.values()
            .filter_map(|path| LockFile::classify(path, pid))
            .find(|(f, _)| *f == file)
            .map_or(Target::Unknown, |(_, target)| target)
    }

    /// Reads who the opener (and the target) is, the first time each is
    /// seen, while they most likely still live.
    fn describe(&mut self, open: &Open) {
        if !self.readers.contains_key(&open.pid) && self.readers.len() < MAX_DESCRIBED {
            let reader = self.tasks.reader(open.pid);
            self.readers.insert(open.pid, reader);
        }
        if let Target::Process(pid) = open.target {
            if !self.targets.contains_key(&pid) && self.targets.len() < MAX_DESCRIBED {
                let target = self.target(pid);
                self.targets.insert(pid, target);
            }
        }
    }

    fn target(&mut self, pid: u32) -> TargetProcess {
        let page_bytes = numasleuth_kernel::pages::page_size_bytes();
        TargetProcess {
            pid,
            comm: Some(self.tasks.comm(pid)).filter(|c| c != "?"),
            resident_bytes: statm::read(&self.root, pid)
                .ok()
                .map(|s| s.resident_pages.saturating_mul(page_bytes)),
        }
    }

    /// The raw observation: `opens` as kept, every reader and target
    /// described, and what limited the view.
    pub fn finish(mut self, opens: Vec<Open>, opens_dropped: u64, duration_s: f64) -> ReadersRaw {
        for open in &opens {
            if !self.readers.contains_key(&open.pid) {
                let reader = self.tasks.reader(open.pid);
                self.readers.insert(open.pid, reader);
            }
            if let Target::Process(pid) = open.target {
                if !self.targets.contains_key(&pid) {
                    let target = self.target(pid);
                    self.targets.insert(pid, target);
                }
            }
        }
        for reader in self.readers.values_mut() {
            self.tasks.rename(reader);
        }
        let notes = self.notes(opens_dropped);
        let lost_records = self.lost_records();
        ReadersRaw {
            method: self.method.clone(),
            files: self.files.clone(),
            duration_s,
            opens,
            opens_dropped,
            processes: self.readers.into_values().collect(),
            targets: self.targets.into_values().collect(),
            lost_records,
            notes,
        }
    }

    fn notes(&self, opens_dropped: u64) -> Vec<String> {
        let mut notes = Vec::new();
        if self.lost_records() > 0 {
            notes.push(format!(
                "{} perf records lost (a full ring buffer): counts are lower bounds",
                self.lost_records()
            ));
        }
        if self.unnamed > 0 {
            notes.push(format!(
                "{} opens' names could not be read back (the string was freed or the process exited): the file \
                 is known from the event that fired; for /proc/PID files, whose process it was is not",
                self.unnamed
            ));
        }
        if self.unplaced > 0 {
            notes.push(format!(
                "{} relative opens could not be placed (the opener's directory was gone): counted as the file \
                 their name matched",
                self.unplaced
            ));
        }
        if opens_dropped > 0 {
            notes.push(format!(
                "{opens_dropped} opens past the first {MAX_OPENS_KEPT} were counted, not kept"
            ));
        }
        if let Source::Scan { scanner, .. } = &self.source {
            if scanner.unreadable > 0 {
                notes.push(format!(
                    "{} process fd directories could not be read (permission): their opens are not seen",
                    scanner.unreadable
                ));
            }
        }
        notes
    }
}

/// Watches for `duration` (or until `stop`), then describes what it saw.
pub fn observe(root: &Root, setup: &Setup, duration: Duration, stop: &Stop) -> Result<ReadersRaw, StartError> {
    Ok(Session::start(root, setup, Origin::now())?.record(duration, stop))
}

impl Session {
    /// Collects until `duration` after the origin has passed or `stop` is
    /// requested, then describes what it saw.
    pub fn record(mut self, duration: Duration, stop: &Stop) -> ReadersRaw {
        let deadline = self.origin.instant + duration;
        let (mut opens, mut dropped) = (Vec::new(), 0u64);
        loop {
            let ended = stop.requested() || Instant::now() >= deadline;
            if ended {
                // The last polls read the rings to the end.
                if let Source::Perf(perf) = &mut self.source {
                    perf.stop();
                }
            }
            let mut seen = self.poll();
            if ended {
                seen.extend(self.poll());
                seen.extend(self.flush());
            }
            for open in seen {
                if opens.len() < MAX_OPENS_KEPT {
                    opens.push(open);
                } else {
                    dropped += 1;
                }
            }
            if ended {
                break;
            }
            self.wait(DRAIN.min(deadline.saturating_duration_since(Instant::now())));
        }
        opens.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        let duration_s = self.origin.instant.elapsed().as_secs_f64();
        self.finish(opens, dropped, duration_s)
    }
}
