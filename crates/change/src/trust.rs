//! Opening a journal file as the untrusted input it is.
//!
//! The seal is what makes a journal trustworthy; these checks are the
//! second wall. A journal root acts on must be root's own file, writable by
//! nobody else, in a directory where nobody else can swap it; and reading
//! it must neither block (a FIFO) nor cost more memory than a real journal.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use numasleuth_kernel::untrusted;

use crate::error::{Place, TrustError};

/// A journal of the largest change we make (every page of a 64 GiB
/// section as separate runs, or every IRQ of a large machine) stays well
/// under this; anything bigger is not ours.
pub const MAX_JOURNAL_BYTES: u64 = 16 << 20;

/// Reads a journal file after checking who could have written it.
pub fn read_journal_file(path: &Path) -> Result<String, TrustError> {
    read_journal_file_with_meta(path).map(|(text, _)| text)
}

/// [`read_journal_file`], with what `fstat` said of the open file.
pub(crate) fn read_journal_file_with_meta(path: &Path) -> Result<(String, std::fs::Metadata), TrustError> {
    // The last component is never followed: a link could point anywhere.
    let (file, meta) = untrusted::open_regular(path, false).map_err(TrustError::Open)?;
    check_owner_and_mode(&meta)?;
    check_directory(path)?;
    let bytes = untrusted::read_capped(file, meta.len(), MAX_JOURNAL_BYTES).map_err(TrustError::Read)?;
    let text = String::from_utf8(bytes).map_err(|_| TrustError::NotUtf8)?;
    Ok((text, meta))
}

/// The user whose journals and key these are.
pub(crate) fn euid() -> u32 {
    numasleuth_kernel::identity::euid()
}

fn check_owner_and_mode(meta: &std::fs::Metadata) -> Result<(), TrustError> {
    let euid = euid();
    if meta.uid() != euid {
        return Err(TrustError::NotOurs { uid: meta.uid(), euid });
    }
    if meta.mode() & 0o022 != 0 {
        return Err(TrustError::Editable {
            mode: meta.mode() & 0o7777,
        });
    }
    Ok(())
}

/// Nobody but us (or root) may be able to rename or replace entries in the
/// journal's directory, nor in any directory above it: whoever can rename
/// an ancestor can swap the whole subtree for another one holding another
/// journal (only root-sealed ones would pass the seal, but undoing the
/// wrong change is harm enough). A sticky directory such as /tmp is fine
/// when it belongs to us or root: there only an entry's owner can move it.
/// A sticky directory of another user is not: its owner may rename and
/// delete any entry in it. The ancestors are checked both as written and
/// with links resolved, so a link in the path is covered by its directory.
/// Checked before a journal is written too, so numasleuth never writes one
/// it would refuse.
pub(crate) fn check_directory(path: &Path) -> Result<(), TrustError> {
    let dir = crate::journal_file::parent_dir(path);
    check_one(dir, None)?;
    let unreadable = |error| TrustError::Unreadable {
        place: Place::Own { dir: shown(dir) },
        error,
    };
    let written = std::path::absolute(dir).map_err(unreadable)?;
    let resolved = std::fs::canonicalize(dir).map_err(unreadable)?;
    for ancestor in written.ancestors().skip(1).chain(resolved.ancestors().skip(1)) {
        check_one(ancestor, Some(dir))?;
    }
    Ok(())
}

fn shown(path: &Path) -> String {
    numasleuth_kernel::error::escape(&path.display().to_string())
}

/// One directory: the journal's own (`below` is `None`) or an ancestor of
/// `below`.
fn check_one(dir: &Path, below: Option<&Path>) -> Result<(), TrustError> {
    let place = || match below {
        None => Place::Own { dir: shown(dir) },
        Some(below) => Place::Above {
            dir: shown(dir),
            below: shown(below),
        },
    };
    let meta = std::fs::metadata(dir).map_err(|error| TrustError::Unreadable { place: place(), error })?;
    if !meta.is_dir() {
        return Err(TrustError::NotADirectory { dir: shown(dir) });
    }
    let open_to_others = meta.mode() & 0o022 != 0;
    let sticky = meta.mode() & libc::S_ISVTX != 0;
    if open_to_others && !sticky {
        return Err(TrustError::OpenToOthers {
            place: place(),
            mode: meta.mode() & 0o7777,
        });
    }
    if meta.uid() != euid() && meta.uid() != 0 {
        return Err(TrustError::Foreign {
            place: place(),
            uid: meta.uid(),
            sticky,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn private_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    #[test]
    fn own_private_file_is_read() {
        let dir = private_dir();
        let path = dir.path().join("j.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_journal_file(&path).unwrap(), "{}");
    }

    #[test]
    fn writable_by_others_is_refused() {
        let dir = private_dir();
        let path = dir.path().join("j.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
        let err = read_journal_file(&path).unwrap_err().to_string();
        assert!(err.contains("group or others could have edited"), "{err}");
    }

    #[test]
    fn open_directory_is_refused_but_sticky_is_not() {
        let dir = private_dir();
        let sub = dir.path().join("open");
        fs::create_dir(&sub).unwrap();
        let path = sub.join("j.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o777)).unwrap();
        let err = read_journal_file(&path).unwrap_err().to_string();
        assert!(err.contains("lets group or others replace"), "{err}");
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(read_journal_file(&path).is_ok());
    }

    /// The owner of a sticky directory can rename and delete any entry in
    /// it, so a sticky directory of another user is refused like an open
    /// one, on reading and on writing.
    #[test]
    fn a_sticky_directory_of_another_user_is_refused() {
        assert_eq!(euid(), 0, "this test needs root: it gives a directory to uid 65534");
        let dir = private_dir();
        let sub = dir.path().join("theirs");
        fs::create_dir(&sub).unwrap();
        let path = sub.join("j.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&sub, Some(65534), Some(65534)).unwrap();
        for mode in [0o1777, 0o1755, 0o755] {
            fs::set_permissions(&sub, fs::Permissions::from_mode(mode)).unwrap();
            let err = read_journal_file(&path).unwrap_err().to_string();
            assert!(err.contains("belongs to uid 65534"), "{mode:o}: {err}");
            assert!(check_directory(&sub.join("new.json")).is_err());
        }
        std::os::unix::fs::chown(&sub, Some(0), Some(0)).unwrap();
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(read_journal_file(&path).is_ok());
    }

    /// Whoever can rename a directory above the journal's could swap the
    /// whole subtree, so every ancestor is held to the same rule, whether
    /// it is named in the path or reached through a link.
    #[test]
    fn an_ancestor_of_another_user_is_refused() {
        assert_eq!(euid(), 0, "this test needs root: it gives a directory to uid 65534");
        let dir = private_dir();
        let theirs = dir.path().join("theirs");
        let journals = theirs.join("journals");
        fs::create_dir_all(&journals).unwrap();
        fs::set_permissions(&journals, fs::Permissions::from_mode(0o700)).unwrap();
        let path = journals.join("j.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read_journal_file(&path).is_ok());
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let err = read_journal_file(&path).unwrap_err().to_string();
        assert!(
            err.contains("above its directory") && err.contains("belongs to uid 65534"),
            "{err}"
        );
        assert!(check_directory(&journals.join("new.json")).is_err());
        // Reached through a link of ours: the real ancestors still count.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&journals, &link).unwrap();
        let err = read_journal_file(&link.join("j.json")).unwrap_err().to_string();
        assert!(err.contains("belongs to uid 65534"), "{err}");
        // An ancestor open to a group, not sticky, is refused too.
        std::os::unix::fs::chown(&theirs, Some(0), Some(0)).unwrap();
        fs::set_permissions(&theirs, fs::Permissions::from_mode(0o775)).unwrap();
        let err = read_journal_file(&path).unwrap_err().to_string();
        assert!(err.contains("lets group or others swap"), "{err}");
        fs::set_permissions(&theirs, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(read_journal_file(&link.join("j.json")).is_ok());
    }

    #[test]
    fn symlinks_fifos_directories_and_huge_files_are_refused() {
        let dir = private_dir();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        assert!(read_journal_file(&link)
            .unwrap_err()
            .to_string()
            .contains("is a symbolic link"));

        let fifo = dir.path().join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_journal_file(&fifo).unwrap_err().to_string().contains("FIFO"));

        assert!(read_journal_file(dir.path())
            .unwrap_err()
            .to_string()
            .contains("directory"));

        let huge = dir.path().join("huge.json");
        let file = fs::File::create(&huge).unwrap();
        file.set_len(1 << 40).unwrap();
        let err = read_journal_file(&huge).unwrap_err().to_string();
        assert!(err.contains("larger than 16 MiB"), "{err}");
    }
}
