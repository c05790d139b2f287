//! Removing what numasleuth wrote for itself when a signal ends the process.
//!
//! A `TempDir` or a temporary file is removed when it is dropped, but a
//! signal ends the process without running destructors, which would leave a
//! copy of someone's /proc and /sys (an unpacked `--root` archive) or a
//! half-written `.r.json.XXXX.tmp` beside the reports after every
//! interrupted run. So such paths are registered here ([`Registered`]), and
//! the first registration takes SIGINT, SIGTERM, SIGHUP and SIGQUIT: on one
//! of them every registered path is removed and the process then dies of
//! the same signal, as if no handler were there (130 for ^C, a core for
//! SIGQUIT where the system keeps them).
//!
//! The handler (signal-hook's) only writes to a pipe; a thread does the
//! removing, outside signal context. Work that adds files to a registered
//! path holds [`busy`] while it does: a signal first stops it (it checks
//! [`interrupted`] between entries) and only then removes, so nothing is
//! created behind the removal. A signal that was ignored (`nohup`, a
//! background job's SIGINT) stays ignored.
//!
//! A program whose commands report on Ctrl-C (numasleuth's stop mechanism)
//! takes some signals over with [`hand_over`]: this module then neither
//! removes anything nor ends the process on those, and the program calls
//! [`remove_all`] before it exits on one. The others still clean up here.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;

/// The signals that end the process and so must clean up first.
const ENDING: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

/// Paths to remove if a signal ends the process.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Held by work that adds files to a registered path.
static BUSY: Mutex<()> = Mutex::new(());
/// Set once an ending signal arrived, so work in progress stops early.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Bit `n` set: signal `n` belongs to the program (see [`hand_over`]).
static HANDED_OVER: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

/// `signal` is the program's from now on: it no longer removes anything or
/// ends the process from here (the program stops gracefully and drops what
/// it registered), and the program calls [`remove_all`] if it must exit at
/// once on it.
pub fn hand_over(signal: i32) {
    if (0..64).contains(&signal) {
        HANDED_OVER.fetch_or(1 << signal, Ordering::Relaxed);
    }
}

fn handed_over(signal: i32) -> bool {
    (0..64).contains(&signal) && HANDED_OVER.load(Ordering::Relaxed) & (1 << signal) != 0
}

/// Removes every registered path still there, for a program about to exit
/// without running destructors. Not for signal context.
pub fn remove_all() {
    for path in lock().clone() {
        remove(&path);
    }
}

fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => drop(std::fs::remove_dir_all(path)),
        Ok(_) => drop(std::fs::remove_file(path)),
        Err(_) => {}
    }
}

/// Whether `signal` is set to be ignored now (by `nohup`, or a shell for a
/// background job): such a signal is left alone. Asked of the kernel's
/// `SigIgn` in this process's status rather than with `sigaction`, so every
/// disposition this program sets goes through signal-hook. Where the file
/// cannot be read (no /proc) the signal counts as not ignored: the
/// handler then cleans up where the default action would have ended the
/// process anyway.
pub fn ignored(signal: i32) -> bool {
    crate::procfs::status::read_ignored_signals(&crate::Root::live(), "proc/self")
        .ok()
        .flatten()
        .is_some_and(|mask| mask.contains(signal))
}

/// Takes the ending signals now, before anything is registered, so even the
/// first path is covered from the moment it exists.
pub fn install() {
    INSTALL.call_once(|| {
        let wanted: Vec<i32> = ENDING.into_iter().filter(|s| !ignored(*s)).collect();
        // Without a handler the default action stays; drops still remove.
        if let Ok(signals) = Signals::new(wanted) {
            let _ = std::thread::Builder::new()
                .name("numasleuth-cleanup".into())
                .spawn(move || wait_and_clean(signals));
        }
    });
}

/// A path removed on drop's behalf if a signal ends the process first.
/// Dropping it only unregisters: the owner removes or keeps the path.
#[derive(Debug)]
pub struct Registered {
    path: PathBuf,
}

impl Registered {
    pub fn new(path: &Path) -> Self {
        install();
        lock().push(path.to_path_buf());
        Registered {
            path: path.to_path_buf(),
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut live = lock();
        if let Some(i) = live.iter().position(|p| *p == self.path) {
            live.swap_remove(i);
        }
    }
}

/// Held while adding files to a registered path: a signal waits for it to
/// be dropped (after the work saw [`interrupted`]) before removing.
pub fn busy() -> MutexGuard<'static, ()> {
    BUSY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether an ending signal arrived: stop adding files.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

fn lock() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a valid list; keep using it.
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

fn wait_and_clean(mut signals: Signals) {
    let Some(signal) = signals.forever().find(|s| !handed_over(*s)) else {
        return;
    };
    INTERRUPTED.store(true, Ordering::Relaxed);
    // Work adding files stops at its next entry and lets go of this.
    drop(busy());
    remove_all();
    // Dies of the same signal: the default action, restored and raised.
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    // A default action that does not end the process cannot happen for
    // these four; exit as a shell would report the signal all the same.
    std::process::exit(128 + signal);
}
