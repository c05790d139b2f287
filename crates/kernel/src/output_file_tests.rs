//! Each kind of file `-o` may name. Device nodes and foreign owners need
//! root (mknod, lchown); CI runs as root, and elsewhere those tests fail
//! saying so rather than pass untested.

use super::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, FileTypeExt, MetadataExt};

fn c(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

use crate::test_support::dir_names as names;

/// A character device like /dev/null's (1:3), made where the test owns it.
fn null_device(at: &Path) {
    // SAFETY: the path is NUL-terminated and alive for the call.
    let rc = unsafe { libc::mknod(c(at).as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(rc, 0, "mknod needs root: {}", io::Error::last_os_error());
}

#[test]
fn a_character_device_is_written_into_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    null_device(&null);
    write_output(&null, b"{\"report\":1}\n", 0o666).unwrap();
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device(), "{meta:?}");
    assert_eq!(meta.rdev(), libc::makedev(1, 3));
    assert_eq!(names(dir.path()), ["null"]);
}

#[test]
fn a_fifo_is_written_into_for_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    crate::untrusted::mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    write_output(&fifo, b"report\n", 0o666).unwrap();
    assert_eq!(reader.join().unwrap(), "report\n");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(dir.path()), ["pipe"]);
}

#[test]
fn a_link_to_a_file_replaces_the_target_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    let target = dir.path().join("runs/7.json");
    std::fs::write(&target, "a much longer old report").unwrap();
    let link = dir.path().join("latest.json");
    symlink("runs/7.json", &link).unwrap();
    write_output(&link, b"new", 0o666).unwrap();
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("runs/7.json"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    assert_eq!(names(dir.path()), ["latest.json", "runs"]);
    assert_eq!(names(&dir.path().join("runs")), ["7.json"]);
}

#[test]
fn a_link_to_a_device_or_fifo_writes_into_it() {
    // What /dev/stdout is: a link to the stream the shell opened.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    crate::untrusted::mkfifo(&fifo);
    let link = dir.path().join("stdout");
    symlink(&fifo, &link).unwrap();
    let reader = std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap());
    write_output(&link, b"through\n", 0o666).unwrap();
    assert_eq!(reader.join().unwrap(), "through\n");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
}

#[test]
fn a_dangling_link_and_special_kinds_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let dangling = dir.path().join("dangling.json");
    symlink("nowhere.json", &dangling).unwrap();
    let err = write_output(&dangling, b"x", 0o666).unwrap_err();
    assert!(err.to_string().contains("symbolic link to nothing"), "{err}");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let err = write_output(&sub, b"x", 0o666).unwrap_err();
    assert!(err.to_string().contains("a directory"), "{err}");
    assert_eq!(names(dir.path()), ["dangling.json", "sub"]);
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
}

#[test]
fn a_link_another_user_planted_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("passwd");
    std::fs::write(&victim, "root:x:0:0").unwrap();
    let link = dir.path().join("r.json");
    symlink(&victim, &link).unwrap();
    // SAFETY: the path is NUL-terminated and alive for the call.
    let rc = unsafe { libc::lchown(c(&link).as_ptr(), 65534, 65534) };
    assert_eq!(rc, 0, "lchown needs root: {}", io::Error::last_os_error());
    let err = write_output(&link, b"{}", 0o666).unwrap_err();
    assert!(err.to_string().contains("owned by user 65534"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root:x:0:0");
}

#[test]
fn a_missing_or_regular_file_is_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    write_output(&path, b"first", 0o666).unwrap();
    write_output(&path, b"2nd", 0o666).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "2nd");
    assert_eq!(names(dir.path()), ["r.json"]);
}
