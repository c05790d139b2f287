//! Whatever signal ends numasleuth, nothing it made for itself outlives it:
//! not an unpacked `--root` archive in the temporary directory (SIGHUP and
//! SIGQUIT used to leave hundreds of MB), not a `.NAME.XXXX.tmp` beside a
//! report (a second Ctrl-C while the files were written left one).

use crate::common;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use numasleuth_kernel::test_support::dir_names as names;

/// numasleuth with every ending signal at its default (the test runner may
/// ignore some) and no core file, in its own process group.
fn start(dir: &Path, tmp: &Path, args: &[&std::ffi::OsStr]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_numasleuth"));
    // SAFETY: between fork and exec the closure only calls signal(2) and
    // setrlimit(2), both async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(signal, libc::SIG_DFL);
            }
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    command
        .args(args)
        .env("TMPDIR", tmp)
        .current_dir(dir)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start numasleuth")
}

/// A snapshot fixture with 60,000 more empty files: seconds to unpack
/// here, so a signal lands in the middle.
fn slow_archive(dir: &Path) -> PathBuf {
    let tree = dir.join("tree");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/qemu-two-nodes");
    let copied = Command::new("cp").arg("-a").arg(&fixture).arg(&tree).status().unwrap();
    assert!(copied.success());
    let many = tree.join("sys/numasleuth-padding");
    std::fs::create_dir(&many).unwrap();
    for i in 0..60_000 {
        std::fs::write(many.join(i.to_string()), "").unwrap();
    }
    let archive = dir.join("slow.tar.gz");
    let tar = Command::new("tar")
        .arg("czf")
        .arg(&archive)
        .arg("-C")
        .arg(&tree)
        .arg(".")
        .status()
        .expect("tar is installed");
    assert!(tar.success());
    archive
}

#[test]
fn a_signal_while_an_archive_unpacks_leaves_no_tree() {
    let dir = tempfile::tempdir().unwrap();
    let archive = slow_archive(dir.path());
    for signal in [libc::SIGHUP, libc::SIGQUIT, libc::SIGINT, libc::SIGTERM] {
        let tmp = tempfile::tempdir().unwrap();
        let args = ["--root".as_ref(), archive.as_os_str(), "topo".as_ref()];
        let child = start(dir.path(), tmp.path(), &args);
        let waited = Instant::now();
        // The tree appears once the archive was checked; signal then.
        while names(tmp.path()).is_empty() {
            assert!(waited.elapsed() < Duration::from_secs(120), "never unpacked");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20));
        // SAFETY: a signal to our own unwaited child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = child.wait_with_output().unwrap();
        // Ended by the signal itself, or (interrupted between entries)
        // by the error that says so: never a finished report.
        let said = common::stderr(&out);
        assert!(
            out.status.signal() == Some(signal) || said.contains("interrupted"),
            "signal {signal}: {:?} {said}",
            out.status
        );
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "signal {signal}");
    }
}

#[test]
fn a_second_ctrl_c_while_files_are_written_leaves_no_temporary_file() {
    // The files are written right after the first Ctrl-C; the second comes
    // 10 ms later, in the middle of them, and exits at once. A few rounds,
    // as the moment the second lands varies.
    for round in 0..12 {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "memwatch",
            "--interval",
            "100ms",
            "-o",
            "m.json",
            "-o",
            "m.svg",
            "-o",
            "m.txt",
        ]
        .map(std::ffi::OsStr::new);
        let child = start(dir.path(), dir.path(), &args);
        std::thread::sleep(Duration::from_millis(400 + 15 * round));
        for _ in 0..2 {
            // SAFETY: a signal to our own unwaited child.
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = child.wait_with_output().unwrap();
        let left: Vec<String> = names(dir.path()).into_iter().filter(|n| n.ends_with(".tmp")).collect();
        assert!(left.is_empty(), "round {round}: {left:?} {:?}", out.status);
    }
}
