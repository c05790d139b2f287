//! An unpacked snapshot is removed when the process is killed by SIGINT or
//! SIGTERM, not only when its `Root` is dropped; an ignored SIGINT stays
//! ignored. The test runs itself as the victim: with `CHILD` set it opens
//! the archive under the parent's TMPDIR, says where, and waits to die.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use numasleuth_kernel::{snapshot, Root};

const CHILD: &str = "NUMASLEUTH_SIGNAL_TEST_ARCHIVE";
const IGNORE_SIGINT: &str = "NUMASLEUTH_SIGNAL_TEST_IGNORE_INT";

fn main() {
    match std::env::var_os(CHILD) {
        Some(archive) => victim(Path::new(&archive)),
        None => {
            let work = tempfile::tempdir().unwrap();
            let archive = make_archive(work.path());
            killed_by(&archive, work.path(), libc::SIGINT, false);
            killed_by(&archive, work.path(), libc::SIGTERM, false);
            killed_by(&archive, work.path(), libc::SIGTERM, true);
            println!("signal_cleanup: 3 passed");
        }
    }
}

fn victim(archive: &Path) {
    // Either way explicitly: a test run started in the background of a
    // non-interactive shell inherits SIGINT ignored.
    let disposition = if std::env::var_os(IGNORE_SIGINT).is_some() {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: setting a signal's disposition, before any other thread
    // exists.
    unsafe { libc::signal(libc::SIGINT, disposition) };
    let root = snapshot::open(archive).unwrap();
    println!("{}", root.base().display());
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn make_archive(work: &Path) -> PathBuf {
    let tree = work.join("tree");
    std::fs::create_dir_all(tree.join("sys/devices/system/node")).unwrap();
    std::fs::write(tree.join("sys/devices/system/node/online"), "0\n").unwrap();
    let (root, recording) = Root::directory(&tree).unwrap().recording();
    root.read("sys/devices/system/node/online").unwrap();
    let archive = work.join("snap.tar.gz");
    snapshot::write(&recording.lock().unwrap(), "{}", &archive).unwrap();
    archive
}

fn spawn(archive: &Path, tmp: &Path, ignore_sigint: bool) -> (Child, PathBuf) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(CHILD, archive).env("TMPDIR", tmp).stdout(Stdio::piped());
    if ignore_sigint {
        command.env(IGNORE_SIGINT, "1");
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let unpacked = PathBuf::from(line.trim());
    assert!(
        unpacked.starts_with(tmp),
        "{} is not under {}",
        unpacked.display(),
        tmp.display()
    );
    assert!(unpacked.join("sys/devices/system/node/online").is_file());
    (child, unpacked)
}

fn killed_by(archive: &Path, work: &Path, signal: libc::c_int, after_ignored_sigint: bool) {
    let tmp = tempfile::tempdir_in(work).unwrap();
    let (mut child, unpacked) = spawn(archive, tmp.path(), after_ignored_sigint);
    let pid = child.id() as libc::pid_t;
    if after_ignored_sigint {
        // SAFETY: signalling our own child, which is still running.
        unsafe { libc::kill(pid, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(300));
        assert!(child.try_wait().unwrap().is_none(), "an ignored SIGINT killed it");
        assert!(unpacked.exists(), "an ignored SIGINT removed the snapshot");
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, signal) };
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the child did not die of signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind after signal {signal}: {left:?}");
}
