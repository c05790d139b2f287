//! One guest at a time on this machine, across threads and processes.
//!
//! Why: a TCG guest with four vCPUs already saturates a 2-core host. Running
//! guests side by side (cargo test uses threads, nextest uses processes)
//! only makes each one slower and brings them nearer the timeout. A
//! directory is created atomically by mkdir(2), which works as a lock across
//! processes without extra crates; the owner's pid inside lets a later run
//! break the lock of a test process that was killed.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::Duration;

static IN_PROCESS: Mutex<()> = Mutex::new(());

/// Held while a guest runs; released on drop.
pub struct GuestLock {
    dir: PathBuf,
    _thread: MutexGuard<'static, ()>,
}

impl GuestLock {
    pub fn acquire() -> Result<GuestLock, String> {
        // A panicking test poisons the mutex; the next guest may still run.
        let thread = IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = std::env::temp_dir().join("numasleuth-testbed.lock");
        let mut warned = false;
        loop {
            match fs::create_dir(&dir) {
                Ok(()) => {
                    let pid = std::process::id().to_string();
                    fs::write(dir.join("pid"), pid).map_err(|e| format!("writing {}/pid: {e}", dir.display()))?;
                    return Ok(GuestLock { dir, _thread: thread });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if owner_is_gone(&dir) {
                        let _ = fs::remove_dir_all(&dir);
                        continue;
                    }
                    if !warned {
                        crate::env::report(&format!("[testbed] waiting for another QEMU guest ({})", dir.display()));
                        warned = true;
                    }
                    sleep(Duration::from_millis(250));
                }
                Err(e) => return Err(format!("creating lock {}: {e}", dir.display())),
            }
        }
    }
}

impl Drop for GuestLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// True when the pid file names a process that no longer exists. A lock
/// directory without a pid file may be half-created by its owner right now,
/// so it counts as held unless it is old.
fn owner_is_gone(dir: &Path) -> bool {
    match fs::read_to_string(dir.join("pid")) {
        Ok(pid) => !Path::new("/proc").join(pid.trim()).exists(),
        Err(_) => fs::metadata(dir)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(10)),
    }
}
