//! The one way numasleuth replaces a file whole: `-o FILE` reports, man
//! pages, `serve --textfile` and the DAMON claim file all go through
//! [`write_atomic`], so every one of them has the same crash behaviour.
//!
//! A fresh temporary file is made in the target's own directory (so the
//! rename never crosses a file system), written, flushed to disk, renamed
//! over the target, and then the directory is flushed too, so after a
//! crash the target is the old file or the whole new one, never empty.
//! The temporary file is created with `O_EXCL` under a random name, so a
//! planted file or symlink is never followed; on any failure it is removed.

use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `bytes` to `path` atomically. `mode` is the new file's
/// permission bits before the umask (0o666 for an ordinary output file).
/// The temporary name starts with `.` and ends in `.tmp`, so collectors
/// that pick files by suffix (node_exporter's `*.prom`) never read it.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    temporary.write_all(bytes)?;
    temporary.as_file().sync_all()?;
    // On failure, `persist` hands the temporary file back; dropping it
    // removes it.
    temporary.persist(path).map_err(|e| e.error)?;
    // The rename itself is durable only once the directory is. Some file
    // systems refuse fsync on a directory (EINVAL): the file is in place,
    // which is what the caller asked, so that refusal is not an error.
    match File::open(dir)?.sync_all() {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("r.json");
        std::fs::write(&target, "a much longer old content").unwrap();
        write_atomic(&target, b"new", 0o666).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["r.json"]);
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory cannot be replaced by a file: the
        // temporary file is written, the rename fails, and it must go.
        let target = dir.path().join("taken.json");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        assert!(write_atomic(&target, b"{}", 0o666).is_err());
        assert_eq!(names(dir.path()), ["taken.json"]);
    }

    #[test]
    fn the_mode_is_applied_through_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("claim.json");
        write_atomic(&private, b"{}", 0o600).unwrap();
        assert_eq!(std::fs::metadata(&private).unwrap().mode() & 0o777, 0o600);
        let shared = dir.path().join("numasleuth.prom");
        write_atomic(&shared, b"x 1\n", 0o644).unwrap();
        // Group and others may lose bits to the umask, never gain them,
        // and the owner keeps read and write.
        let mode = std::fs::metadata(&shared).unwrap().mode() & 0o777;
        assert_eq!(mode & !0o644, 0, "{mode:o}");
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    }

    #[test]
    fn a_symlink_at_the_target_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "keep").unwrap();
        let target = dir.path().join("out.txt");
        std::os::unix::fs::symlink(&elsewhere, &target).unwrap();
        write_atomic(&target, b"new", 0o666).unwrap();
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&target).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_path_without_a_file_name_is_an_error() {
        assert!(write_atomic(Path::new("/"), b"x", 0o666).is_err());
        assert!(write_atomic(Path::new("dir/.."), b"x", 0o666).is_err());
    }
}
