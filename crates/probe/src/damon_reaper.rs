//! The reaper: a second numasleuth process that removes `hotpages`'
//! kdamond when `hotpages` itself could not.
//!
//! Why a process: SIGKILL, a second Ctrl-C (which exits at once) or an
//! abort end numasleuth without running any cleanup, and the kdamond, a
//! kernel thread, would sample the target forever. The reaper is started
//! before the kdamond exists, in its own process group (a Ctrl-C at the
//! terminal does not reach it), with a pipe on stdin whose other end only
//! numasleuth holds. The kernel closes that end however numasleuth ends;
//! the reaper then reads the claim numasleuth left (see
//! `numasleuth_probe::damon_claim`) and removes the kdamond if the claim is
//! still there and the kdamond still matches it. After a normal end the
//! claim is already gone and the reaper just exits. A reaper killed too is
//! covered by the next `hotpages`, which reaps before it starts.

use std::io::Read;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};

use numasleuth_kernel::Root;
use numasleuth_probe::damon_claim;

use super::hotpages_args::DamonReaperArgs;

/// A running reaper; dropping it closes the pipe and waits for it.
pub struct Reaper {
    stdin: Option<ChildStdin>,
    child: Child,
}

/// Starts the reaper for claims in `claims`; `Err` says why it could not
/// be started (the caller refuses to start a kdamond without one).
pub fn spawn(claims: &Path) -> Result<Reaper, String> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find numasleuth's own binary: {e}"))?;
    let mut child = Command::new(&exe)
        .arg("damon-reaper")
        .arg("--claims")
        .arg(claims)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the kdamond reaper ({}): {e}", exe.display()))?;
    let stdin = child.stdin.take();
    Ok(Reaper { stdin, child })
}

impl Drop for Reaper {
    fn drop(&mut self) {
        drop(self.stdin.take());
        // The claim is normally gone by now, so the reaper exits at once.
        let _ = self.child.wait();
    }
}

/// The reaper itself: waits for the pipe to close, then reaps.
pub fn run(root: &Root, args: &DamonReaperArgs) -> anyhow::Result<ExitCode> {
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin().lock();
    // Nothing is ever written; EOF (or an error) means numasleuth ended.
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    damon_claim::reap(root, &args.claims)?;
    Ok(ExitCode::SUCCESS)
}
