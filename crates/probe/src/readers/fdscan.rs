//! The last resort: every `interval`, list each process's open files
//! (`/proc/*/fd`) and note lock files that are newly open.
//!
//! Why it is only a fallback: a process that opens, reads and closes
//! between two scans is never seen, and one that keeps the file open is
//! counted once. It is a sampled view, with lower bounds, as `migrations`'
//! polled method is. It needs no perf at all, only root to read other
//! users' fd directories.

use std::collections::HashSet;

use numasleuth_kernel::procfs::fd;
use numasleuth_kernel::Root;
use numasleuth_model::readers::{LockFile, Open, Target};

/// Processes scanned per pass, and descriptors per process: bounded work
/// however many a hostile or huge machine has.
pub const MAX_PROCESSES: usize = 65_536;
pub const MAX_FDS_PER_PROCESS: usize = 65_536;

pub struct Scanner {
    root: Root,
    files: Vec<LockFile>,
    self_pid: u32,
    /// (pid, fd, target) open at the last pass.
    held: HashSet<(u32, u32, String)>,
    pub passes: u64,
    /// Processes whose fd directory could not be read (no permission).
    pub unreadable: u64,
}

impl Scanner {
    pub fn new(root: Root, files: &[LockFile]) -> Scanner {
        Scanner {
            root,
            files: files.to_vec(),
            self_pid: std::process::id(),
            held: HashSet::new(),
            passes: 0,
            unreadable: 0,
        }
    }

    /// One pass at `t_s`: an open for every lock file open now that was
    /// not open (on that descriptor) at the previous pass.
    pub fn scan(&mut self, t_s: f64) -> Vec<Open> {
        self.passes += 1;
        let mut now = HashSet::new();
        let mut found = Vec::new();
        let pids = self.root.list("proc").ok().flatten().unwrap_or_default();
        for pid in pids.iter().filter_map(|p| p.parse::<u32>().ok()).take(MAX_PROCESSES) {
            if pid == self.self_pid {
                continue;
            }
            let open = match fd::read_open(&self.root, pid, MAX_FDS_PER_PROCESS) {
                Ok(Some(open)) => open,
                Ok(None) => continue,
                Err(e) if e.is_not_found() => continue,
                Err(_) => {
                    self.unreadable += 1;
                    continue;
                }
            };
            for (number, target) in open {
                let Some((file, aimed)) = self.classify(&target, pid) else {
                    continue;
                };
                let key = (pid, number, target);
                if !self.held.contains(&key) {
                    found.push(Open {
                        t_s,
                        pid,
                        tid: pid,
                        file,
                        target: aimed,
                    });
                }
                now.insert(key);
            }
        }
        self.held = now;
        found
    }

    fn classify(&self, target: &str, pid: u32) -> Option<(LockFile, Target)> {
        LockFile::classify(target, pid).filter(|(file, _)| self.files.contains(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn newly_open_lock_files_are_reported_once_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let fds = dir.path().join("proc/10/fd");
        std::fs::create_dir_all(&fds).unwrap();
        symlink("/proc/slabinfo", fds.join("3")).unwrap();
        symlink("/proc/meminfo", fds.join("4")).unwrap();
        symlink("/proc/20/smaps", fds.join("5")).unwrap();
        symlink("/proc/pagetypeinfo", fds.join("6")).unwrap();
        let root = Root::directory(dir.path()).unwrap();
        let mut scanner = Scanner::new(root, &[LockFile::Slabinfo, LockFile::Smaps]);
        let first = scanner.scan(0.1);
        let seen: Vec<(LockFile, Target)> = first.iter().map(|o| (o.file, o.target)).collect();
        assert_eq!(
            seen,
            [
                (LockFile::Slabinfo, Target::System),
                (LockFile::Smaps, Target::Process(20))
            ]
        );
        assert!(scanner.scan(0.2).is_empty(), "still held: not a new open");
        std::fs::remove_file(fds.join("3")).unwrap();
        assert!(scanner.scan(0.3).is_empty());
        symlink("/proc/slabinfo", fds.join("3")).unwrap();
        let again = scanner.scan(0.4);
        assert_eq!((again.len(), again[0].t_s), (1, 0.4), "opened again");
        assert_eq!(scanner.passes, 4);
    }
}
