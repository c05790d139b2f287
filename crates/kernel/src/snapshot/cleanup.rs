//! Removing unpacked snapshots when the process is interrupted.
//!
//! A `TempDir` is removed when it is dropped, but Ctrl-C or a `kill` ends
//! the process without running destructors, which would leave a copy of
//! someone's /proc and /sys in the temporary directory after every
//! interrupted run. So live unpack directories are registered here, and the
//! first unpack installs SIGINT and SIGTERM handlers that remove them and
//! then die of the same signal, as if no handler were there.
//!
//! Removing a tree is not async-signal-safe, so the handler only writes the
//! signal's number to a pipe; a thread waiting on the pipe does the work.
//! A signal that was ignored (a background job's SIGINT) stays ignored, and
//! a handler someone else installed is left alone: then they own cleanup.
//! A program whose commands report on Ctrl-C (numasleuth's shared stop
//! mechanism) takes signals over with [`hand_over`]: this module then
//! neither removes anything nor kills the process on a signal, and the
//! program calls [`remove_unpacked`] before it exits on one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, Once};

/// Directories to remove if the process is interrupted.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The write end of the pipe the handler signals on; -1 until installed.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Set once a signal arrived, so an unpack in progress stops early.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Set by [`hand_over`]: signals belong to the program now.
static HANDED_OVER: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Signals are the program's from now on: a signal no longer removes the
/// unpacked directories or ends the process from here (the program stops
/// gracefully, and directories go when their `Root` is dropped), and the
/// program calls [`remove_unpacked`] if it must exit at once.
pub fn hand_over() {
    HANDED_OVER.store(true, Ordering::Relaxed);
}

/// Removes every unpacked directory still open, for a program about to
/// exit without running destructors. Not for signal context.
pub fn remove_unpacked() {
    for path in lock().clone() {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// An unpacked snapshot's directory: removed on drop and on SIGINT/SIGTERM.
#[derive(Debug)]
pub(crate) struct Unpacked {
    dir: tempfile::TempDir,
}

impl Unpacked {
    pub fn new(dir: tempfile::TempDir) -> Self {
        INSTALL.call_once(install);
        lock().push(dir.path().to_path_buf());
        Unpacked { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        lock().retain(|p| p != self.dir.path());
        // The TempDir field removes the directory after this.
    }
}

pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a valid list; keep using it.
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the buffer is a local byte.
    // If the pipe is full a signal is already pending there, so a failed
    // write loses nothing.
    unsafe {
        libc::write(fd, (&byte as *const u8).cast(), 1);
    }
}

fn install() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return; // No cleanup on signals; drops still remove directories.
    }
    PIPE_WRITE.store(fds[1], Ordering::Relaxed);
    let read_end = fds[0];
    let spawned = std::thread::Builder::new()
        .name("numasleuth-cleanup".into())
        .spawn(move || wait_and_clean(read_end));
    if spawned.is_err() {
        return;
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is given valid pointers to zeroed (then filled)
        // structs; the handler only calls async-signal-safe functions.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 || old.sa_sigaction != libc::SIG_DFL {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

fn wait_and_clean(read_end: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into a local; read_end is our pipe.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 && HANDED_OVER.load(Ordering::Relaxed) {
            continue;
        }
        if n == 1 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return;
    }
    INTERRUPTED.store(true, Ordering::Relaxed);
    let signal = libc::c_int::from(byte);
    // An unpack in progress may still be adding files; it stops at its next
    // entry, so a few tries are enough to catch up with it.
    for _ in 0..50 {
        let live = lock().clone();
        let left: Vec<_> = live
            .iter()
            .filter(|p| std::fs::remove_dir_all(p).is_err() && p.exists())
            .collect();
        if left.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: restoring the default action and re-raising makes the process
    // end by this signal, with the status a shell expects (130 for ^C).
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
