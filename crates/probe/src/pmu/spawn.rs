//! A child that exists but has not yet run its program, so counters can be
//! attached to it before its first instruction.
//!
//! `std::process::Command` cannot do this: `spawn` waits until the child
//! has exec'd (or failed to), so a `pre_exec` hook that waits for us would
//! deadlock. Instead we fork, the child blocks reading a pipe, we open the
//! counters on its pid with `enable_on_exec`, then write one byte; the
//! child execs and the counters start with the program, not with our fork.
//! An exec failure comes back through a second, close-on-exec pipe, the way
//! std reports it.
//!
//! Between fork and exec the child may only make async-signal-safe calls,
//! so the program path, argv and every C string are built before forking.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use super::spawn_error::{ForkError, ResolveError};
use numasleuth_model::stop::Stop;

/// Where a command name is looked up when PATH is unset, as execvp does.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The file `name` runs: itself when it has a slash, else the first
/// executable regular file of that name on `path`.
pub fn resolve(name: &OsStr, path: Option<&OsStr>) -> Result<PathBuf, ResolveError> {
    let shown = || name.to_string_lossy().into_owned();
    if name.is_empty() {
        return Err(ResolveError::Empty);
    }
    if name.as_bytes().contains(&b'/') {
        let candidate = PathBuf::from(name);
        return match std::fs::metadata(&candidate) {
            Ok(meta) if meta.is_dir() => Err(ResolveError::Directory { shown: shown() }),
            Ok(meta) if meta.permissions().mode() & 0o111 == 0 => Err(ResolveError::NotExecutable { shown: shown() }),
            Ok(_) => Ok(candidate),
            Err(error) => Err(ResolveError::Unreadable { shown: shown(), error }),
        };
    }
    let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
    for dir in std::env::split_paths(path) {
        let candidate = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        }
        .join(name);
        if let Ok(meta) = std::fs::metadata(&candidate) {
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
        }
    }
    Err(ResolveError::NotFound { shown: shown() })
}

/// A forked child waiting for [`Stopped::release`]. Dropped unreleased, it
/// is killed and reaped, so an error while attaching leaves nothing behind.
pub struct Stopped {
    pub pid: libc::pid_t,
    go: Option<OwnedFd>,
    exec_error: Option<OwnedFd>,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are open descriptors we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn c_string(bytes: &[u8]) -> Result<CString, ForkError> {
    CString::new(bytes).map_err(|_| ForkError::NulByte)
}

/// Forks a child that will run `program` with `argv` once released. Its
/// stdout goes to our stderr, so our stdout carries only the report. It
/// leads a process group of its own, so that everything it starts can be
/// stopped and killed with it ([`wait_group`]); a terminal would stop a
/// background group that reads it, so a terminal on stdin is replaced by
/// /dev/null (a pipe or file is passed on).
pub fn spawn_stopped(program: &Path, argv: &[OsString]) -> Result<Stopped, ForkError> {
    let path = c_string(program.as_os_str().as_bytes())?;
    let dev_null = c_string(b"/dev/null")?;
    let args: Vec<CString> = argv.iter().map(|a| c_string(a.as_bytes())).collect::<Result<_, _>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    let (go_read, go_write) = pipe().map_err(ForkError::Pipe)?;
    let (error_read, error_write) = pipe().map_err(ForkError::Pipe)?;
    // SAFETY: the child only calls async-signal-safe functions (read,
    // dup2, signal, execv, write, _exit) on data prepared above.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(ForkError::Fork(std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: in the child; see above. The descriptors are open in the
        // child (fork copies them) and the pointers stay valid until exec.
        unsafe { child(&go_read, &error_write, (&path, &dev_null), &arg_ptrs) }
    }
    // Also here, so the group exists before we could signal it (the child
    // does the same; whichever runs first wins, the other is a no-op).
    // SAFETY: setpgid on our own child has no memory effects.
    unsafe { libc::setpgid(pid, pid) };
    drop(go_read);
    drop(error_write);
    Ok(Stopped {
        pid,
        go: Some(go_write),
        exec_error: Some(error_read),
    })
}

/// The child's side: wait for the go byte, then exec. Never returns.
///
/// # Safety
/// Must be called only in a freshly forked child, with `argv` a
/// NULL-terminated array of pointers into live C strings.
unsafe fn child(
    go: &OwnedFd,
    error: &OwnedFd,
    (path, dev_null): (&CString, &CString),
    argv: &[*const libc::c_char],
) -> ! {
    let mut byte = 0u8;
    // Zero bytes means the parent closed the pipe without releasing us
    // (it failed or died): do not run the program uncounted.
    let got = loop {
        let n = libc::read(go.as_raw_fd(), (&mut byte as *mut u8).cast(), 1);
        if n >= 0 || *libc::__errno_location() != libc::EINTR {
            break n;
        }
    };
    if got != 1 {
        libc::_exit(127);
    }
    libc::setpgid(0, 0);
    if libc::isatty(0) == 1 {
        let null = libc::open(dev_null.as_ptr(), libc::O_RDONLY);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::close(null);
        }
    }
    libc::dup2(2, 1);
    // Rust ignores SIGPIPE; the program must get the default, as std's
    // Command gives it.
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    libc::execv(path.as_ptr(), argv.as_ptr());
    let errno = *libc::__errno_location();
    let bytes = errno.to_ne_bytes();
    libc::write(error.as_raw_fd(), bytes.as_ptr().cast(), bytes.len());
    libc::_exit(127)
}

impl Stopped {
    /// Lets the child exec. `Err` carries exec's errno when the program
    /// could not start (the child is reaped then).
    pub fn release(mut self) -> Result<libc::pid_t, std::io::Error> {
        let go = self.go.take().expect("released once");
        let byte = [1u8];
        // SAFETY: go is an open pipe write end; byte is a valid 1-byte buffer.
        let written = unsafe { libc::write(go.as_raw_fd(), byte.as_ptr().cast(), 1) };
        if written != 1 {
            return Err(std::io::Error::last_os_error());
        }
        drop(go);
        let error = self.exec_error.take().expect("released once");
        let mut bytes = [0u8; 4];
        let mut got = 0usize;
        while got < bytes.len() {
            // SAFETY: reading into the unfilled tail of a 4-byte buffer.
            let n = unsafe { libc::read(error.as_raw_fd(), bytes[got..].as_mut_ptr().cast(), bytes.len() - got) };
            match n {
                0 => break,
                n if n > 0 => got += n as usize,
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => continue,
                _ => return Err(std::io::Error::last_os_error()),
            }
        }
        let pid = self.pid;
        if got == 0 {
            // The close-on-exec write end closed: the program is running.
            self.pid = 0;
            return Ok(pid);
        }
        // Drop reaps the child, which exits 127 after reporting.
        Err(std::io::Error::from_raw_os_error(i32::from_ne_bytes(bytes)))
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        if self.pid > 0 {
            // SAFETY: pid is our own unreaped child.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// How long a command stopped with Ctrl-C has to end before its group is
/// killed: enough to print a result and exit, as a command that handles
/// SIGINT does.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How often the wait looks at the child and at the stop request.
const WAIT_POLL: Duration = Duration::from_millis(20);

/// Whether `pid` (our child) has exited; it is left unreaped (`WNOWAIT`),
/// so its PID, and with it its group's ID, stays taken.
fn exited_unreaped(pid: libc::pid_t) -> std::io::Result<bool> {
    loop {
        // SAFETY: siginfo_t is plain old data, valid when zeroed.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT | libc::WNOHANG;
        // SAFETY: waitid writes only into `info`, owned here.
        if unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) } == 0 {
            // SAFETY: waitid filled `info`; si_pid is 0 when nothing exited.
            return Ok(unsafe { info.si_pid() } == pid);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Waits for `pid`, our child leading its own process group, to end. A stop
/// request (Ctrl-C reaches numasleuth, not the group) is passed on as
/// SIGINT, and the group is killed if it is still there `STOP_GRACE`
/// later. When the command ends, whatever it left running in its group is
/// killed before it is reaped, so nothing it started outlives the count.
pub fn wait_group(pid: libc::pid_t, stop: &Stop) -> std::io::Result<Ended> {
    let mut interrupted_at: Option<Instant> = None;
    while !exited_unreaped(pid)? {
        match interrupted_at {
            None if stop.requested() => {
                // SAFETY: our unreaped child leads the group, so its ID
                // cannot name another; kill has no memory effects.
                unsafe { libc::kill(-pid, libc::SIGINT) };
                interrupted_at = Some(Instant::now());
            }
            // SAFETY: as above.
            Some(at) if at.elapsed() > STOP_GRACE => unsafe {
                libc::kill(-pid, libc::SIGKILL);
            },
            _ => {}
        }
        std::thread::sleep(WAIT_POLL);
    }
    // SAFETY: as above; the leader is a zombie, not yet reaped.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    wait(pid)
}

/// Reaps `pid` (our child).
pub fn wait(pid: libc::pid_t) -> std::io::Result<Ended> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int for waitpid to fill.
        let got = unsafe { libc::waitpid(pid, &mut status, 0) };
        if got == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    Ok(if libc::WIFEXITED(status) {
        Ended {
            exit_code: Some(libc::WEXITSTATUS(status)),
            signal: None,
        }
    } else {
        Ended {
            exit_code: None,
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_found_on_path_or_refused_clearly() {
        let found = resolve(OsStr::new("sh"), Some(OsStr::new("/nonexistent:/bin:/usr/bin"))).unwrap();
        assert!(found.ends_with("sh"), "{found:?}");
        let missing = resolve(OsStr::new("numasleuth-no-such-command"), None).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "command `numasleuth-no-such-command` not found in PATH"
        );
        assert!(matches!(
            resolve(OsStr::new("/"), None),
            Err(ResolveError::Directory { shown }) if shown == "/"
        ));
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(resolve(plain.as_os_str(), None)
            .unwrap_err()
            .to_string()
            .contains("not executable"));
        assert!(resolve(OsStr::new("./no/such"), None)
            .unwrap_err()
            .to_string()
            .contains("No such file"));
        assert!(resolve(OsStr::new(""), None).is_err());
    }

    #[test]
    fn a_released_child_runs_and_its_status_comes_back() {
        let program = resolve(OsStr::new("sh"), None).unwrap();
        let argv: Vec<OsString> = ["sh", "-c", "exit 7"].iter().map(OsString::from).collect();
        let pid = spawn_stopped(&program, &argv).unwrap().release().unwrap();
        assert_eq!(
            wait(pid).unwrap(),
            Ended {
                exit_code: Some(7),
                signal: None
            }
        );
    }

    #[test]
    fn an_exec_failure_comes_back_as_its_errno() {
        let dir = tempfile::tempdir().unwrap();
        // Executable bits but not a program the kernel can run.
        let fake = dir.path().join("fake");
        std::fs::write(&fake, [0u8; 16]).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        // ETXTBSY while another test's child, forked as `fake` was being
        // written and stopped before its exec, still holds the write
        // descriptor (CI, stop 37): that child lets go when its test ends.
        let mut error = None;
        for _ in 0..200 {
            let e = spawn_stopped(&fake, &[OsString::from("fake")])
                .unwrap()
                .release()
                .unwrap_err();
            if e.raw_os_error() != Some(libc::ETXTBSY) {
                error = Some(e);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let error = error.expect("ETXTBSY for 2 s: something keeps the fake program open for writing");
        assert_eq!(error.raw_os_error(), Some(libc::ENOEXEC), "{error}");
    }

    #[test]
    fn an_unreleased_child_is_killed_and_reaped() {
        let program = resolve(OsStr::new("sleep"), None).unwrap();
        let stopped = spawn_stopped(&program, &[OsString::from("sleep"), OsString::from("100")]).unwrap();
        let pid = stopped.pid;
        drop(stopped);
        // SAFETY: signal 0 only checks that the pid exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "child {pid} survived its drop");
    }
}
