//! Round trips of snapshots we write ourselves.

use super::*;

fn recorded() -> Recording {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::create_dir_all(p.join("sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0")).unwrap();
    fs::write(p.join("sys/devices/pci0000:00/0000:00:03.0/numa_node"), "0\n").unwrap();
    fs::create_dir_all(p.join("sys/class/net")).unwrap();
    symlink(
        "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0",
        p.join("sys/class/net/eth0"),
    )
    .unwrap();
    let (root, recording) = Root::directory(p).unwrap().recording();
    root.list("sys/class/net").unwrap();
    let resolved = root.resolve("sys/class/net/eth0").unwrap();
    root.list(&resolved).unwrap();
    root.read("sys/devices/pci0000:00/0000:00:03.0/numa_node").unwrap();
    let copy = recording.lock().unwrap().clone();
    copy
}

#[test]
fn archive_round_trip_replays_the_same_reads() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("snap.tar.gz");
    let summary = write(&recorded(), "{}", &out).unwrap();
    assert_eq!(summary.files, 1);
    let root = open(&out).unwrap();
    assert_eq!(
        root.resolve("sys/class/net/eth0").unwrap(),
        "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0"
    );
    assert_eq!(
        root.read("sys/devices/pci0000:00/0000:00:03.0/numa_node").unwrap(),
        "0\n"
    );
}

#[test]
fn directory_output_and_no_overwrite() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("snap");
    write(&recorded(), "{}", &out).unwrap();
    assert!(out.join(MANIFEST).exists());
    // The link target holds nothing we read, yet must survive git.
    let empty = "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0";
    assert!(out.join(empty).join(KEEP).exists());
    assert_eq!(Root::directory(&out).unwrap().list(empty).unwrap(), Some(vec![]));
    let err = write(&recorded(), "{}", &out).unwrap_err();
    assert!(err.to_string().contains("refusing to overwrite"), "{err}");
}

#[test]
fn garbage_archive_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.tar.gz");
    fs::write(&path, b"this is not gzip, nor anything else").unwrap();
    let err = open(&path).unwrap_err();
    assert!(
        err.to_string()
            .contains("not a directory or a readable .tar.gz snapshot"),
        "{err}"
    );
}

#[test]
fn the_unpacked_tree_is_gone_when_the_root_is() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("snap.tar.gz");
    write(&recorded(), "{}", &out).unwrap();
    let unpack = out_dir.path().join("unpack");
    fs::create_dir(&unpack).unwrap();
    let root = open_in(&out, Some(&unpack), limits::Caps::REAL).unwrap();
    let copy = root.clone();
    drop(root);
    assert_eq!(fs::read_dir(&unpack).unwrap().count(), 1, "a clone keeps it");
    drop(copy);
    assert_eq!(fs::read_dir(&unpack).unwrap().count(), 0);
}

#[test]
fn an_archive_open_would_refuse_is_not_written() {
    let mut recording = Recording::default();
    for i in 0..20 {
        recording.symlinks.insert(format!("sys/l{i}"), "x".into());
    }
    let caps = limits::Caps {
        entries: 20,
        ..limits::Caps::REAL
    };
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("big.tar.gz");
    let err = write_within(&recording, "{}", &out, caps).unwrap_err().to_string();
    assert!(
        err.contains("holds 22 entries and 2 bytes, more than a .tar.gz snapshot may (20 entries"),
        "{err}"
    );
    assert!(!out.exists());
    // As a directory it is fine: `--root DIR` reads lazily, without caps.
    write_within(&recording, "{}", &out_dir.path().join("big"), caps).unwrap();
}

/// Every prefix of an archive we wrote, from no byte to the whole file, is
/// either refused with an error or (the whole file) opened: never a panic.
/// A cut inside our 22-byte header (18 and 19 bytes hold the flags of our
/// extra field but not its CRC) once indexed past the bytes read.
#[test]
fn every_prefix_of_a_real_archive_is_refused_or_opens() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("snap.tar.gz");
    write(&recorded(), "{}", &out).unwrap();
    let gz = fs::read(&out).unwrap();
    let cut = out_dir.path().join("cut.tar.gz");
    for len in 0..=gz.len() {
        fs::write(&cut, &gz[..len]).unwrap();
        let opened = std::panic::catch_unwind(|| open(&cut).map(drop).map_err(|e| e.to_string()));
        match opened {
            Ok(Ok(())) => assert_eq!(len, gz.len(), "a {len}-byte prefix of {} opened", gz.len()),
            Ok(Err(err)) => assert!(
                err.contains("not a directory or a readable .tar.gz snapshot"),
                "{len} bytes: {err}"
            ),
            Err(_) => panic!("a {len}-byte prefix of a {}-byte archive panicked", gz.len()),
        }
    }
}

/// The check before the work is only a courtesy: a file that appears
/// while the snapshot is built is refused by the move itself, with the
/// same words, and survives.
#[test]
fn a_file_that_appears_meanwhile_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let staged = dir.path().join("staged.tar.gz");
    fs::write(&staged, "ours").unwrap();
    let out = dir.path().join("snap.tar.gz");
    fs::write(&out, "theirs").unwrap();
    let err = place(&staged, &out).unwrap_err().to_string();
    assert!(err.contains("refusing to overwrite"), "{err}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "theirs");
}
