//! Snapshots: the kernel files a run read, written out as a tree or a
//! `.tar.gz`, and opened again as a [`Root`].
//!
//! A snapshot is made by running the readers against a recording root, so
//! it holds exactly what numasleuth reads — never more, and never a file
//! such as `/proc/slabinfo` that takes allocator locks, because no reader
//! asks for one. Opening it replays those reads offline.

use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::error::ReadError;
use crate::root::{Recording, Root};

pub const MANIFEST: &str = "numasleuth-snapshot.json";

/// Placed in directories a snapshot holds empty (a device directory a link
/// points at), because git drops empty directories and a fixture checked in
/// must still resolve. [`Root::list`] never shows it.
pub const KEEP: &str = ".numasleuth-keep";

/// How large an archive may grow when unpacked; snapshots are a few MB, so
/// anything bigger is not ours and unpacking it would only fill the disk.
const MAX_UNPACKED_BYTES: u64 = 2 << 30;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    pub files: usize,
    pub symlinks: usize,
    pub bytes: u64,
}

fn io_error(path: &Path, error: io::Error) -> ReadError {
    ReadError::from_io_at(path.display().to_string(), &error)
}

/// Opens a directory or a `.tar.gz` snapshot as a root.
pub fn open(path: &Path) -> Result<Root, ReadError> {
    let meta = fs::metadata(path).map_err(|e| io_error(path, e))?;
    if meta.is_dir() {
        return Root::directory(path);
    }
    let file = fs::File::open(path).map_err(|e| io_error(path, e))?;
    let dir = tempfile::Builder::new()
        .prefix("numasleuth-root-")
        .tempdir()
        .map_err(|e| io_error(path, e))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let not_archive = |e: io::Error| ReadError::Io {
        path: path.display().to_string(),
        message: format!("not a directory or a readable .tar.gz snapshot: {e}"),
    };
    let mut unpacked_bytes = 0u64;
    for entry in archive.entries().map_err(not_archive)? {
        let mut entry = entry.map_err(not_archive)?;
        unpacked_bytes += entry.size();
        if unpacked_bytes > MAX_UNPACKED_BYTES {
            return Err(ReadError::malformed(
                &path.display().to_string(),
                "archive unpacks to more than 2 GiB",
            ));
        }
        // unpack_in refuses entries that would land outside the directory.
        entry.unpack_in(dir.path()).map_err(not_archive)?;
    }
    let base = snapshot_base(dir.path()).map_err(|e| io_error(path, e))?;
    Ok(Root::unpacked(dir, base))
}

/// Archives made by others (hwloc's test captures) wrap the tree in one
/// top-level folder; ours do not. Accept both.
fn snapshot_base(dir: &Path) -> io::Result<PathBuf> {
    let names: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    let has_tree = names.iter().any(|e| e.file_name() == "proc" || e.file_name() == "sys");
    match names.as_slice() {
        [single] if !has_tree && single.file_type()?.is_dir() => Ok(single.path()),
        _ => Ok(dir.to_path_buf()),
    }
}

/// Writes what a recording root saw to `out`: a `.tar.gz` when the name
/// says so, otherwise a new directory. The tree is built in a temporary
/// directory first, so a failure leaves nothing half-written at `out`.
pub fn write(recording: &Recording, manifest_json: &str, out: &Path) -> Result<SnapshotSummary, ReadError> {
    if out.exists() {
        return Err(ReadError::Io {
            path: out.display().to_string(),
            message: "already exists; refusing to overwrite".into(),
        });
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let staging = tempfile::Builder::new()
        .prefix(".numasleuth-snapshot-")
        .tempdir_in(&parent)
        .map_err(|e| io_error(&parent, e))?;
    let tree = staging.path().join("tree");
    let summary = build_tree(recording, manifest_json, &tree).map_err(|e| io_error(&tree, e))?;
    if is_archive_name(out) {
        let partial = staging.path().join("snapshot.tar.gz");
        write_archive(&tree, &partial).map_err(|e| io_error(out, e))?;
        fs::rename(&partial, out).map_err(|e| io_error(out, e))?;
    } else {
        fs::rename(&tree, out).map_err(|e| io_error(out, e))?;
    }
    Ok(summary)
}

pub fn is_archive_name(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".tar.gz") || name.ends_with(".tgz")
}

fn build_tree(recording: &Recording, manifest_json: &str, tree: &Path) -> io::Result<SnapshotSummary> {
    fs::create_dir_all(tree)?;
    for dir in recording.dirs.keys() {
        fs::create_dir_all(tree.join(dir))?;
    }
    let mut bytes = 0u64;
    for (path, contents) in &recording.files {
        let target = tree.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&target, contents)?;
        bytes += contents.len() as u64;
    }
    for (path, link_target) in &recording.symlinks {
        let at = tree.join(path);
        if let Some(parent) = at.parent() {
            fs::create_dir_all(parent)?;
        }
        if at.symlink_metadata().is_err() {
            symlink(link_target, &at)?;
        }
    }
    for dir in recording.dirs.keys() {
        let at = tree.join(dir);
        if at.is_dir() && fs::read_dir(&at)?.next().is_none() {
            fs::write(at.join(KEEP), "")?;
        }
    }
    fs::write(tree.join(MANIFEST), manifest_json)?;
    Ok(SnapshotSummary {
        files: recording.files.len(),
        symlinks: recording.symlinks.len(),
        bytes,
    })
}

fn write_archive(tree: &Path, out: &Path) -> io::Result<()> {
    let file = fs::File::create(out)?;
    let encoder = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut builder = tar::Builder::new(encoder);
    // Keep sysfs links as links: readers resolve them inside the root.
    builder.follow_symlinks(false);
    builder.append_dir_all(".", tree)?;
    builder.into_inner()?.finish()?.sync_all()
}

#[cfg(test)]
mod tests {
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
        fs::write(&path, b"this is not gzip").unwrap();
        let err = open(&path).unwrap_err();
        assert!(
            err.to_string().contains("not a directory or a readable .tar.gz"),
            "{err}"
        );
    }
}
