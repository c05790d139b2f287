//! The reaper: a second process that removes `hotpages`' kdamond when
//! the process that started it could not.
//!
//! Why a process: SIGKILL, a second Ctrl-C (which exits at once) or an
//! abort end numasleuth without running any cleanup, and the kdamond, a
//! kernel thread, would sample the target forever. The reaper is started
//! before the kdamond exists, in its own process group (a Ctrl-C at the
//! terminal does not reach it), with a pipe on stdin whose other end only
//! its starter holds. The kernel closes that end however the starter ends;
//! the reaper then reads the claim left behind (see [`crate::damon_claim`])
//! and removes the kdamond if the claim is still there and the kdamond
//! still matches it. After a normal end the claim is already gone and the
//! reaper just exits. A reaper killed too is covered by the next
//! `hotpages`, which reaps before it starts.
//!
//! Both halves are here; which program runs as the reaper, and with which
//! arguments, is the caller's (the CLI starts its own binary's hidden
//! `damon-reaper` command).

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use numasleuth_kernel::Root;
use thiserror::Error;

use crate::damon::DamonError;
use crate::damon_claim;

/// The reaper could not be started (the caller then starts no kdamond).
#[derive(Debug, Error)]
#[error("cannot start the kdamond reaper ({}): {error}", program.display())]
pub struct ReaperError {
    pub program: PathBuf,
    pub error: std::io::Error,
}

/// A running reaper; dropping it closes the pipe and waits for it.
pub struct Reaper {
    stdin: Option<ChildStdin>,
    child: Child,
}

impl Reaper {
    /// Starts `program` with `args` as the reaper: its own process group,
    /// the pipe on stdin, stdout and stderr closed. `Err` says why it could
    /// not be started (the caller refuses to start a kdamond without one).
    pub fn spawn<I, S>(program: &Path, args: I) -> Result<Reaper, ReaperError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|error| ReaperError {
                program: program.to_path_buf(),
                error,
            })?;
        let stdin = child.stdin.take();
        Ok(Reaper { stdin, child })
    }

    /// The reaper's process id (and process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        drop(self.stdin.take());
        // The claim is normally gone by now, so the reaper exits at once.
        let _ = self.child.wait();
    }
}

/// The reaper's side: waits until `starter` (its stdin) reaches EOF or
/// fails, which means the starter ended, then reaps the claim in `claims`.
/// Returns what reaping did, as [`damon_claim::reap`] does.
pub fn wait_then_reap(root: &Root, claims: &Path, mut starter: impl Read) -> Result<Option<String>, DamonError> {
    let mut sink = [0u8; 64];
    // Nothing is ever written; EOF (or an error) means the starter ended.
    while matches!(starter.read(&mut sink), Ok(n) if n > 0) {}
    damon_claim::reap(root, claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_reaper_runs_in_its_own_group_and_ends_when_its_pipe_closes() {
        // `cat` ends at EOF on stdin, as the reaper does.
        let reaper = Reaper::spawn(Path::new("cat"), ["-"]).unwrap();
        let pid = reaper.pid();
        // SAFETY: getpgid only reads another process's group id.
        let group = unsafe { libc::getpgid(pid as libc::pid_t) };
        assert_eq!(group, pid as libc::pid_t);
        let started = Instant::now();
        drop(reaper);
        assert!(started.elapsed() < Duration::from_secs(10));
        // Waited for: not even a zombie is left.
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn a_reaper_that_cannot_start_says_which_program() {
        let why = Reaper::spawn(Path::new("/nonexistent/reaper"), ["x"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            why.starts_with("cannot start the kdamond reaper (/nonexistent/reaper)"),
            "{why}"
        );
    }

    #[test]
    fn the_reaper_reaps_only_after_its_pipe_ends() {
        let claims = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let root = Root::directory(empty.path()).unwrap();
        // No claim: nothing to do, once the input has ended.
        let said = wait_then_reap(&root, claims.path(), &b"ignored bytes"[..]).unwrap();
        assert_eq!(said, None);
        // A claim that is not one is an error, not a panic.
        let claim = claims.path().join(damon_claim::FILE_NAME);
        std::fs::write(&claim, "not json").unwrap();
        std::fs::set_permissions(&claim, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        assert!(wait_then_reap(&root, claims.path(), std::io::empty()).is_err());
    }
}
