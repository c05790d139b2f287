//! At most N guests at a time on this machine, across threads and processes.
//!
//! Why a limit: a TCG guest with four vCPUs uses about 1.1 to 1.7 of this
//! 2-core host's CPUs (it waits on its own timers and on the host), so two
//! side by side fill the machine (two guests took 28.5 s together against
//! 35.4 s one after the other), while more only make each one slower and
//! bring them nearer the timeout. The default is one;
//! [`crate::env::ENV_GUEST_SLOTS`] raises it (scripts/test-all uses two).
//!
//! Each slot is a directory, created atomically by mkdir(2), which works as
//! a lock across processes without extra crates; the owner's pid inside
//! lets a later run break the lock of a test process that was killed.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::thread::sleep;
use std::time::Duration;

/// Slots this process holds, so its own threads wait on a condition
/// variable rather than polling the directories.
static HELD: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// Held while a guest runs; released on drop.
pub struct GuestLock {
    dir: PathBuf,
}

impl GuestLock {
    /// Waits for one of `slots` slots (at least one).
    pub fn acquire(slots: usize) -> Result<GuestLock, String> {
        let slots = slots.max(1);
        {
            // A panicking test poisons the mutex; the next guest may still run.
            let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
            while *held >= slots {
                held = FREED.wait(held).unwrap_or_else(|p| p.into_inner());
            }
            *held += 1;
        }
        take_a_slot(slots).inspect_err(|_| release_in_process())
    }
}

fn take_a_slot(slots: usize) -> Result<GuestLock, String> {
    let mut warned = false;
    loop {
        for slot in 0..slots {
            let dir = slot_dir(slot);
            match fs::create_dir(&dir) {
                Ok(()) => {
                    let pid = std::process::id().to_string();
                    if let Err(e) = fs::write(dir.join("pid"), pid) {
                        let _ = fs::remove_dir_all(&dir);
                        return Err(format!("writing {}/pid: {e}", dir.display()));
                    }
                    return Ok(GuestLock { dir });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if owner_is_gone(&dir) {
                        let _ = fs::remove_dir_all(&dir);
                    }
                }
                Err(e) => return Err(format!("creating lock {}: {e}", dir.display())),
            }
        }
        if !warned {
            let first = slot_dir(0);
            crate::env::report(&format!(
                "[testbed] waiting for another QEMU guest ({})",
                first.display()
            ));
            warned = true;
        }
        sleep(Duration::from_millis(250));
    }
}

/// Slot 0 keeps the name a one-slot run always had, so a run with one slot
/// and a run with two still exclude each other there.
fn slot_dir(slot: usize) -> PathBuf {
    let name = match slot {
        0 => "numasleuth-testbed.lock".to_string(),
        n => format!("numasleuth-testbed.lock.{n}"),
    };
    std::env::temp_dir().join(name)
}

fn release_in_process() {
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    *held = held.saturating_sub(1);
    FREED.notify_one();
}

impl Drop for GuestLock {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
        release_in_process();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Four threads asking for two slots: never more than two inside at
    /// once, and all four get in. Fails if the in-process count leaked or
    /// the directories were not taken in turn.
    #[test]
    fn two_slots_admit_two_at_a_time() {
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (inside, most) = (inside.clone(), most.clone());
                std::thread::spawn(move || {
                    let _lock = GuestLock::acquire(2).expect("a slot");
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    sleep(Duration::from_millis(100));
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let most = most.load(Ordering::SeqCst);
        assert!((1..=2).contains(&most), "{most} guests inside at once");
        assert_eq!(*HELD.lock().unwrap(), 0, "slots leaked");
    }
}
