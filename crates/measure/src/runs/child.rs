//! The side effects of one run: a pipe for the workload's output, a child
//! pinned to its start CPU before it executes a single instruction of the
//! workload, its exit with resource usage (wait4), and widening every
//! thread's affinity from outside.
//!
//! Live only: the thread list comes from `numasleuth_kernel::task` on the
//! live root, because it acts on a process it started itself.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use numasleuth_kernel::{task, Root};
use serde::Serialize;

use std::sync::mpsc::RecvTimeoutError;

use super::output::{LineSink, Output};
use crate::sys;

/// How long the output pipe may stay open after the workload exited: a
/// background grandchild holding it must not hang the whole series.
pub const OUTPUT_GRACE: Duration = Duration::from_secs(1);
/// How often the reader wakes to check for that.
const POLL_MS: libc::c_int = 100;

/// A pipe whose ends are closed on exec (the child gets the write end as
/// its stdout and stderr through dup2, which clears the flag).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`, which has room for two.
    let ret = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Starts `program args` with stdout and stderr on `output`, stdin empty,
/// and its affinity set to `cpu` between fork and exec, so the workload's
/// first touch of its memory happens on that CPU. It leads a process group
/// of its own, so everything it starts can be killed with it
/// (`kill_group`, and [`wait`] at its exit).
pub fn spawn_pinned(program: &OsStr, args: &[&OsStr], cpu: u32, output: OwnedFd) -> io::Result<Child> {
    let mask = sys::mask_with(&[cpu], 0);
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(output.try_clone()?))
        .stderr(Stdio::from(output))
        .process_group(0);
    // SAFETY: the hook runs in the forked child before exec, where only
    // async-signal-safe calls are allowed: it makes one raw syscall on a
    // mask allocated before the fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || sys::set_affinity_raw(0, &mask));
    }
    // `command` (and with it our copies of the pipe's write end) is
    // dropped here, so the reader sees end of file when the child is done.
    command.spawn()
}

// The exit types live in model, where analyze reads them.
pub use numasleuth_model::runs::{Exit, Usage};

fn micros(t: libc::timeval) -> u64 {
    (t.tv_sec.max(0) as u64).saturating_mul(1_000_000) + t.tv_usec.max(0) as u64
}

/// Our child `pid`, leading a process group of its own, until it is
/// reaped. Killing goes through here so that it can never reach a group
/// whose ID was reused: the group is killed only while the leader is
/// unreaped (alive or a zombie, its PID is still taken), and reaping holds
/// the same lock.
pub struct Group {
    pid: u32,
    reaped: Mutex<bool>,
}

impl Group {
    pub fn new(pid: u32) -> Group {
        Group {
            pid,
            reaped: Mutex::new(false),
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// SIGKILL to the workload and whatever it started that did not leave
    /// the group; nothing once the leader is reaped.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// SIGTERM to the group: a request to end, which a workload may use to
    /// clean up.
    pub fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    fn signal(&self, signal: libc::c_int) {
        let reaped = self.reaped.lock().unwrap_or_else(|e| e.into_inner());
        if !*reaped {
            // SAFETY: kill has no memory effects; a negative pid names the
            // group, whose leader is our unreaped child.
            unsafe { libc::kill(-(self.pid as libc::pid_t), signal) };
        }
    }
}

/// Waits until `pid` has exited, without reaping it (`WNOWAIT`).
fn wait_unreaped(pid: u32) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain old data, valid when zeroed.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid writes only into `info`, owned here.
        let ret = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if ret == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Waits for the group's leader to end, with its resource usage. Whatever
/// it left running in its group (a `sleep &` under a shell) is killed
/// before the leader is reaped: a run ends with its command, and nothing of
/// it outlives numasleuth or disturbs the next run.
pub fn wait(group: &Group) -> io::Result<Exit> {
    wait_unreaped(group.pid)?;
    let mut reaped = group.reaped.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: as in `Group::kill`; the leader is a zombie, not yet reaped.
    unsafe { libc::kill(-(group.pid as libc::pid_t), libc::SIGKILL) };
    let exit = reap(group.pid);
    *reaped = true;
    exit
}

/// Reaps `pid` (our child), with its resource usage.
fn reap(pid: u32) -> io::Result<Exit> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: rusage is plain old data, valid when zeroed.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes only into `status` and `usage`, both owned here.
        let ret = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if ret < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        let count = |v: libc::c_long| v.max(0) as u64;
        return Ok(Exit {
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            usage: Usage {
                minor_faults: count(usage.ru_minflt),
                major_faults: count(usage.ru_majflt),
                voluntary_switches: count(usage.ru_nvcsw),
                involuntary_switches: count(usage.ru_nivcsw),
                user_us: micros(usage.ru_utime),
                system_us: micros(usage.ru_stime),
            },
        });
    }
}

/// What widening the threads' affinity did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Release {
    pub after_ms: u64,
    pub threads_widened: u32,
    /// Threads that could not be widened, with the reason (most often one
    /// that exited meanwhile).
    pub failed: Vec<String>,
}

/// Sets every thread of `pid` to `cpus`. Threads created while we work
/// inherit the old mask from their creator, so the task list is read
/// again until a pass finds no new thread (at most a few passes).
pub fn widen_threads(pid: u32, cpus: &[u32], after: Duration) -> Release {
    let mask = sys::mask_with(cpus, 0);
    let mut release = Release {
        after_ms: after.as_millis() as u64,
        ..Release::default()
    };
    let mut done: Vec<u32> = Vec::new();
    // The workload is a child of ours on this machine: its threads are the
    // live system's.
    let root = Root::live();
    for _pass in 0..4 {
        let Ok(Some(listed)) = task::thread_ids(&root, pid) else {
            break;
        };
        let tids: Vec<u32> = listed.into_iter().filter(|tid| !done.contains(tid)).collect();
        if tids.is_empty() {
            break;
        }
        for tid in tids {
            done.push(tid);
            match sys::set_affinity_raw(tid, &mask) {
                Ok(()) => release.threads_widened += 1,
                Err(e) => release.failed.push(format!("thread {tid}: {e}")),
            }
        }
    }
    release
}

/// Reads `fd` into `sink` until end of file, or until the output has
/// stayed open [`OUTPUT_GRACE`] past the workload's exit (`exited_at`).
/// Returns why it stopped early, if it did.
pub fn read_output(fd: &OwnedFd, sink: &mut LineSink<'_>, exited_at: &OnceLock<Instant>) -> Option<String> {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        if exited_at.get().is_some_and(|t| t.elapsed() > OUTPUT_GRACE) {
            return Some(format!(
                "output still open {} ms after the workload exited (a background child holds it); stopped reading",
                OUTPUT_GRACE.as_millis()
            ));
        }
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, owned here, for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, POLL_MS) };
        if ready == 0 {
            continue;
        }
        if ready < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Some(format!("reading the output failed: {error}"));
        }
        // SAFETY: the kernel writes at most `buffer.len()` bytes into `buffer`.
        let n = unsafe { libc::read(fd.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
        match n {
            0 => return None,
            n if n > 0 => sink.feed(&buffer[..n as usize]),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Some(format!("reading the output failed: {error}"));
                }
            }
        }
    }
}

/// What [`supervise`] saw: the wait's result with the instant of the
/// exit (`None` if the waiting thread ended without an answer), and the
/// bounded output.
pub type Supervised = (Option<(io::Result<Exit>, Instant)>, Output);

/// Reads the child's output and waits for its exit, each on a thread of
/// its own, while `next_wait` runs on this one: it is called once at the
/// start (`false`) and again each time its wait ran out (`true`), and
/// returns how long to wait for the exit before that, or `None` for as
/// long as it takes. `runs` releases and samples there, `bisect`'s metric
/// command checks its timeout and Ctrl-C.
///
/// A thread the system refuses to start (a task limit, no memory) ends
/// the workload: its group is killed and reaped here, and the error says
/// why, so nothing is left running unwatched and nothing panics.
pub fn supervise(
    group: &Group,
    read: &OwnedFd,
    matches: &(dyn Fn(&str) -> bool + Sync),
    mut next_wait: impl FnMut(bool) -> Option<Duration>,
) -> io::Result<Supervised> {
    let exited_at = OnceLock::new();
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new().spawn_scoped(scope, || {
            let mut sink = LineSink::new(matches);
            let note = read_output(read, &mut sink, &exited_at);
            sink.finish(note)
        });
        let reader = reader.map_err(|e| end_unwatched(group, e))?;
        let (tx, rx) = std::sync::mpsc::channel();
        let exited = &exited_at;
        let waiter = std::thread::Builder::new().spawn_scoped(scope, move || {
            let result = wait(group);
            let end = Instant::now();
            let _ = exited.set(end);
            let _ = tx.send((result, end));
        });
        // The reader sees end of file once the killed group is gone.
        waiter.map_err(|e| end_unwatched(group, e))?;
        let mut limit = next_wait(false);
        let waited = loop {
            let received = match limit {
                Some(limit) => rx.recv_timeout(limit),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match received {
                Ok(done) => break Some(done),
                Err(RecvTimeoutError::Disconnected) => break None,
                Err(RecvTimeoutError::Timeout) => limit = next_wait(true),
            }
        };
        Ok((waited, reader.join().unwrap_or_default()))
    })
}

/// Kills and reaps a group that no thread could be started to watch, and
/// says so.
fn end_unwatched(group: &Group, error: io::Error) -> io::Error {
    group.kill();
    let _ = wait(group);
    io::Error::new(error.kind(), format!("cannot start a thread to watch it: {error}"))
}
