//! Where `-o` cannot simply replace a file: a device, a FIFO or a link is
//! written into (never replaced by a regular file), and a file that cannot
//! be written at all costs neither the report on stdout nor the report
//! itself, which is kept in the temporary directory and named.

use crate::common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use common::{numasleuth, stderr};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn topo_to(out: &Path, tmp: &Path) -> std::process::Output {
    numasleuth()
        .env("TMPDIR", tmp)
        .arg("--root")
        .arg(fixture("qemu-three-nodes-nic"))
        .args(["topo", "--format", "json", "-o"])
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn a_device_fifo_and_link_at_the_output_stay_what_they_are() {
    common::require_root("mknod of a device like /dev/null in a temporary directory");
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let c_null = CString::new(null.as_os_str().as_bytes()).unwrap();
    // SAFETY: the path is NUL-terminated and alive for the call.
    let rc = unsafe { libc::mknod(c_null.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());
    let out = topo_to(&null, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device() && meta.rdev() == libc::makedev(1, 3));
    // A link to a report: the report is replaced, the link stays.
    let target = dir.path().join("run7.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.path().join("latest.json");
    std::os::unix::fs::symlink("run7.json", &link).unwrap();
    let out = topo_to(&link, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(doc["schema"], "numasleuth.topo/1");
    // A FIFO: its reader gets the report; it stays a FIFO.
    let fifo = dir.path().join("pipe");
    let c_fifo = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = topo_to(&fifo, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(doc["schema"], "numasleuth.topo/1");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["latest.json", "null", "pipe", "run7.json"]);
}

#[test]
fn a_file_that_cannot_be_written_keeps_stdout_and_a_copy() {
    // Nothing can be created in /proc, not even by root.
    let tmp = tempfile::tempdir().unwrap();
    let out = numasleuth()
        .env("TMPDIR", tmp.path())
        .arg("--root")
        .arg(fixture("qemu-three-nodes-nic"))
        .args(["topo", "-o", "/proc/numasleuth-r.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        stdout.contains("reading snapshot"),
        "the text report is printed: {stdout}"
    );
    let err = stderr(&out);
    assert!(err.contains("cannot write /proc/numasleuth-r.json"), "{err}");
    let copies: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(
        err.contains(&format!("saved as {} instead", copies[0].display())),
        "{err}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&copies[0]).unwrap()).unwrap();
    assert_eq!(doc["schema"], "numasleuth.topo/1");
    assert_eq!(std::fs::metadata(&copies[0]).unwrap().mode() & 0o777, 0o600);
}
