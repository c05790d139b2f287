//! Who a reading process is: its name, command line and parent chain.
//!
//! The processes `readers` is after often live a millisecond (`cat`, `ss`
//! run from a monitoring loop), so by the time a sample is read the
//! process may be gone. Two sources are combined: perf's task records
//! (`PERF_RECORD_FORK` names the parent of every new process,
//! `PERF_RECORD_COMM` its name after `exec`), which cost nothing and
//! survive the process; and `/proc/PID/{stat,cmdline}` read the moment a
//! process is first seen, which gives the command line while it lives.

use std::collections::HashMap;

use numasleuth_kernel::procfs::{cmdline, process::read_process_stat};
use numasleuth_kernel::Root;
use numasleuth_model::readers::{Ancestor, ReaderProcess};

/// Processes remembered at once (a whole machine's worth).
pub const MAX_TASKS: usize = 65_536;
/// Ancestors listed above a reader.
pub const MAX_PARENTS: usize = 8;

#[derive(Debug, Clone, Default)]
struct Known {
    comm: Option<String>,
    /// `comm` came from an exec record or from `/proc`, not inherited
    /// from the parent at fork (the child may not have exec'd yet, or its
    /// exec record may still be in another CPU's ring).
    named: bool,
    /// From the fork record: the process that started it, even if it
    /// was later reparented.
    forked_by: Option<u32>,
    /// From `stat` when it was read.
    ppid: Option<u32>,
    cmdline: Option<String>,
    /// `/proc/PID` was read (successfully or not): not tried again.
    looked: bool,
    /// When its exit record says it ended: a fork of the same PID stamped
    /// later is a new process (PID reuse). One stamped earlier is this
    /// process's own fork, drained late from another CPU's ring.
    exited_ns: Option<u64>,
}

pub struct Tasks {
    root: Root,
    known: HashMap<u32, Known>,
}

impl Tasks {
    pub fn new(root: Root) -> Tasks {
        Tasks {
            root,
            known: HashMap::new(),
        }
    }

    /// A long watch (`serve`) sees every fork of the machine: when the map
    /// is full it starts over, so memory stays bounded and new processes
    /// are still named (older ones are read from /proc again if asked).
    fn entry(&mut self, pid: u32) -> &mut Known {
        if !self.known.contains_key(&pid) && self.known.len() >= MAX_TASKS {
            self.known.clear();
        }
        self.known.entry(pid).or_default()
    }

    /// `PERF_RECORD_COMM`: a process's name after `exec` or a rename. A
    /// thread's own rename (`tid != pid`) is not the process's name.
    pub fn on_comm(&mut self, pid: u32, tid: u32, comm: &[u8]) {
        if pid != tid {
            return;
        }
        let end = comm.iter().position(|b| *b == 0).unwrap_or(comm.len()).min(64);
        let name = String::from_utf8_lossy(&comm[..end]).into_owned();
        let known = self.entry(pid);
        known.comm = Some(name);
        known.named = true;
        // An exec replaced the command line read before it.
        if known.looked {
            known.looked = false;
            known.cmdline = None;
        }
    }

    /// `PERF_RECORD_FORK` at `time_ns`: a new process (`pid == tid`)
    /// started by `ppid`; it carries its parent's name until it execs.
    /// Records of different CPUs arrive in different rings, so the child's
    /// exec and even exit records may come first: a live entry keeps the
    /// name it has, and so does one that exited after this fork.
    pub fn on_fork(&mut self, pid: u32, ppid: u32, tid: u32, time_ns: u64) {
        if pid != tid {
            return;
        }
        let parent_comm = self.known.get(&ppid).and_then(|k| k.comm.clone());
        let known = self.entry(pid);
        if known.exited_ns.is_some_and(|exited| time_ns > exited) {
            *known = Known::default();
        }
        known.forked_by = Some(ppid);
        if known.comm.is_none() {
            known.comm = parent_comm;
        }
    }

    /// `PERF_RECORD_EXIT` of a process (`pid == tid`) at `time_ns`.
    pub fn on_exit(&mut self, pid: u32, tid: u32, time_ns: u64) {
        if pid == tid {
            if let Some(known) = self.known.get_mut(&pid) {
                known.exited_ns = Some(time_ns);
            }
        }
    }

    /// Reads `/proc/PID` now, once per process: called when a process is
    /// first seen reading, while it most likely still lives.
    pub fn look(&mut self, pid: u32) {
        if self.known.get(&pid).is_some_and(|k| k.looked) {
            return;
        }
        let stat = read_process_stat(&self.root, pid).ok();
        let line = cmdline::read(&self.root, pid).ok().flatten();
        let known = self.entry(pid);
        known.looked = true;
        if let Some(stat) = stat {
            known.comm = Some(stat.comm);
            known.named = true;
            known.ppid = stat.ppid;
        }
        if line.is_some() {
            known.cmdline = line;
        }
    }

    /// Whether `pid`'s name is known for sure (read from `/proc` now if
    /// it was never looked at).
    pub fn named(&mut self, pid: u32) -> bool {
        self.look(pid);
        self.known.get(&pid).is_some_and(|k| k.named)
    }

    /// The name, from what was seen or from `/proc` now.
    pub fn comm(&mut self, pid: u32) -> String {
        self.look(pid);
        self.known
            .get(&pid)
            .and_then(|k| k.comm.clone())
            .unwrap_or_else(|| "?".to_string())
    }

    /// The name of `pid` if an exec record or `/proc` gave it (never an
    /// inherited one), without reading `/proc`.
    pub fn certain_name(&self, pid: u32) -> Option<&str> {
        self.known.get(&pid).filter(|k| k.named).and_then(|k| k.comm.as_deref())
    }

    /// Replaces names in `reader` that were only inherited (or unknown)
    /// when it was described by ones known for sure now: an exec record
    /// can arrive after the sample that needed it, from another CPU's ring.
    pub fn rename(&self, reader: &mut ReaderProcess) {
        if let Some(name) = self.certain_name(reader.pid) {
            name.clone_into(&mut reader.comm);
        }
        for parent in &mut reader.parents {
            if let Some(name) = self.certain_name(parent.pid) {
                name.clone_into(&mut parent.comm);
            }
        }
    }

    fn parent_of(&mut self, pid: u32) -> Option<u32> {
        self.look(pid);
        let known = self.known.get(&pid)?;
        known.forked_by.or(known.ppid)
    }

    /// Everything known of `pid`, with its parents up to (not including)
    /// init; a parent chain that loops (PID reuse) stops where it does.
    pub fn reader(&mut self, pid: u32) -> ReaderProcess {
        let comm = self.comm(pid);
        let cmdline = self.known.get(&pid).and_then(|k| k.cmdline.clone());
        let mut parents: Vec<Ancestor> = Vec::new();
        let mut at = pid;
        while parents.len() < MAX_PARENTS {
            let Some(parent) = self.parent_of(at).filter(|p| *p > 1) else {
                break;
            };
            if parent == pid || parents.iter().any(|a| a.pid == parent) {
                break;
            }
            parents.push(Ancestor {
                pid: parent,
                comm: self.comm(parent),
            });
            at = parent;
        }
        ReaderProcess {
            pid,
            comm,
            cmdline,
            parents,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let root = Root::directory(dir.path()).unwrap();
        (dir, root)
    }

    fn stat(pid: u32, comm: &str, ppid: u32) -> String {
        format!("{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0")
    }

    #[test]
    fn a_live_process_and_its_parents_from_proc() {
        let (_dir, root) = tree(&[
            ("proc/300/stat", &stat(300, "ss", 200)),
            ("proc/300/cmdline", "ss\0-s\0"),
            ("proc/200/stat", &stat(200, "node-agent", 100)),
            ("proc/100/stat", &stat(100, "bash", 1)),
        ]);
        let mut tasks = Tasks::new(root);
        let reader = tasks.reader(300);
        assert_eq!((reader.comm.as_str(), reader.cmdline.as_deref()), ("ss", Some("ss -s")));
        let chain: Vec<(u32, &str)> = reader.parents.iter().map(|a| (a.pid, a.comm.as_str())).collect();
        assert_eq!(chain, [(200, "node-agent"), (100, "bash")]);
    }

    #[test]
    fn an_exited_process_is_named_from_its_fork_and_comm_records() {
        let (_dir, root) = tree(&[("proc/50/stat", &stat(50, "sh", 1))]);
        let mut tasks = Tasks::new(root);
        tasks.look(50);
        // The exec's record, from another CPU's ring, before the fork's.
        tasks.on_comm(51, 51, b"cat\0\0\0");
        tasks.on_fork(51, 50, 51, 100);
        tasks.on_fork(50, 50, 52, 110); // a thread of 50: not a process
        tasks.on_comm(50, 53, b"worker"); // a thread renaming itself
        let reader = tasks.reader(51);
        assert!(tasks.named(51));
        assert_eq!((reader.comm.as_str(), reader.cmdline), ("cat", None));
        assert_eq!(
            reader.parents,
            [Ancestor {
                pid: 50,
                comm: "sh".into()
            }]
        );
        assert_eq!(tasks.comm(50), "sh");
        assert_eq!(tasks.comm(9999), "?");
        // PID 51 exits and is reused by a child of 50 that has not exec'd:
        // its parent's name, but not for sure.
        tasks.on_exit(51, 51, 200);
        tasks.on_fork(51, 50, 51, 300);
        assert_eq!(tasks.comm(51), "sh");
        assert!(!tasks.named(51));
    }

    #[test]
    fn an_exec_record_arriving_after_the_description_renames_the_reader() {
        let (_dir, root) = tree(&[]);
        let mut tasks = Tasks::new(root);
        tasks.on_comm(60, 60, b"sh");
        tasks.on_fork(61, 60, 61, 100);
        let mut reader = tasks.reader(61);
        assert_eq!(reader.comm, "sh", "inherited at fork, gone from /proc");
        tasks.on_comm(61, 61, b"cat");
        tasks.rename(&mut reader);
        assert_eq!(reader.comm, "cat");
        assert_eq!(reader.parents[0].comm, "sh");
    }

    /// A `cat` on CPU 1 execs, reads and exits; its fork record, on the
    /// shell's CPU 0, is drained after all that: it is the same process,
    /// and keeps the name its exec gave it.
    #[test]
    fn a_fork_drained_after_the_exit_it_preceded_keeps_the_exec_name() {
        let (_dir, root) = tree(&[]);
        let mut tasks = Tasks::new(root);
        tasks.on_comm(70, 70, b"sh");
        tasks.on_comm(71, 71, b"cat");
        tasks.on_exit(71, 71, 2_000);
        tasks.on_fork(71, 70, 71, 1_000);
        assert!(tasks.named(71));
        assert_eq!(tasks.reader(71).comm, "cat");
    }

    #[test]
    fn a_parent_loop_from_pid_reuse_stops() {
        let (_dir, root) = tree(&[("proc/7/stat", &stat(7, "a", 8)), ("proc/8/stat", &stat(8, "b", 7))]);
        let mut tasks = Tasks::new(root);
        let reader = tasks.reader(7);
        assert_eq!(reader.parents.len(), 1);
        let (_dir, root) = tree(&[("proc/9/stat", &stat(9, "self-parent", 9))]);
        assert!(Tasks::new(root).reader(9).parents.is_empty());
    }
}
