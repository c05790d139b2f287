//! Round trips of archives we write ourselves, and the writer's refusals.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::scratch_tests::Scratch;
use crate::{is_archive_name, write_tree, Caps, WriteError};

/// A tree like a snapshot's: a file, a link that climbs, an empty dir.
fn tree(at: &Path) {
    fs::create_dir_all(at.join("sys/devices/net/eth0")).unwrap();
    fs::create_dir_all(at.join("sys/class/net")).unwrap();
    fs::write(at.join("sys/devices/numa_node"), "0\n").unwrap();
    symlink("../../devices/net/eth0", at.join("sys/class/net/eth0")).unwrap();
}

#[test]
fn a_tree_written_is_read_back_the_same() {
    let s = Scratch::new();
    tree(&s.path("tree"));
    let out = s.path("written.tar.gz");
    write_tree(&s.path("tree"), &out, Caps::REAL).unwrap();
    let dir = s.open(&fs::read(&out).unwrap()).unwrap();
    let base = dir.path();
    assert_eq!(fs::read_to_string(base.join("sys/devices/numa_node")).unwrap(), "0\n");
    assert_eq!(
        fs::read_link(base.join("sys/class/net/eth0")).unwrap(),
        Path::new("../../devices/net/eth0")
    );
    assert!(base.join("sys/devices/net/eth0").is_dir());
    drop(dir);
    s.assert_clean();
}

#[test]
fn a_tree_reading_would_refuse_is_not_written() {
    let s = Scratch::new();
    tree(&s.path("tree"));
    // sys, sys/devices, sys/devices/net, .../eth0, numa_node, sys/class,
    // sys/class/net, the link: 8 entries and 2 bytes.
    let caps = Caps {
        entries: 7,
        ..Caps::REAL
    };
    let out = s.path("big.tar.gz");
    let err = write_tree(&s.path("tree"), &out, caps).unwrap_err();
    assert!(
        matches!(
            err,
            WriteError::TooBig {
                entries: 8,
                bytes: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "this snapshot holds 8 entries and 2 bytes, more than a .tar.gz snapshot may \
         (7 entries, 256 MiB); write a directory instead"
    );
    assert!(!out.exists());
    let caps = Caps { entries: 8, ..caps };
    write_tree(&s.path("tree"), &out, caps).unwrap();
}

#[test]
fn an_existing_file_is_never_replaced() {
    let s = Scratch::new();
    tree(&s.path("tree"));
    let out = s.path("theirs.tar.gz");
    fs::write(&out, "theirs").unwrap();
    let err = write_tree(&s.path("tree"), &out, Caps::REAL).unwrap_err();
    assert!(matches!(&err, WriteError::Write(e) if e.kind() == std::io::ErrorKind::AlreadyExists));
    assert_eq!(fs::read_to_string(&out).unwrap(), "theirs");
    let err = write_tree(&s.path("missing"), &s.path("new.tar.gz"), Caps::REAL).unwrap_err();
    assert!(matches!(err, WriteError::Tree(_)), "{err:?}");
}

#[test]
fn archive_names() {
    assert!(is_archive_name(Path::new("snap.tar.gz")));
    assert!(is_archive_name(Path::new("dir/snap.tgz")));
    assert!(!is_archive_name(Path::new("snap")));
    assert!(!is_archive_name(Path::new("snap.tar")));
}
