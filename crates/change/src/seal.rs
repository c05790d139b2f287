//! The journal seal: HMAC-SHA256 under a per-machine key only its owner
//! can read.
//!
//! A plain checksum can be recomputed by whoever edits the journal, so it
//! only catches accidents. An HMAC cannot be recomputed without the key,
//! and the key lives in a directory of the invoking user's own (for root,
//! `/var/lib/numasleuth/journal.key`, mode 0600), so a journal that root
//! will act on can only have been written by root. See `docs/security.md`.

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::apply::ChangeError;
use crate::error::{KeyError, KeyPart};

/// Bytes of key: 32 random bytes are the strength of the hash itself.
pub(crate) const KEY_BYTES: usize = 32;
pub const KEY_FILE: &str = "journal.key";
/// Where root's key lives.
pub const ROOT_STATE_DIR: &str = "/var/lib/numasleuth";
/// Lets tests and packagers put the key elsewhere. It is no way around the
/// key: the directory must still be the invoking user's own and private.
pub const STATE_DIR_ENV: &str = "NUMASLEUTH_STATE_DIR";

/// The secret a journal is sealed with.
#[derive(Clone, PartialEq, Eq)]
pub struct JournalKey([u8; KEY_BYTES]);

impl std::fmt::Debug for JournalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JournalKey(..)")
    }
}

impl JournalKey {
    /// A key given directly, for tests.
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> Self {
        JournalKey(bytes)
    }

    /// The invoking user's key, created on first use.
    pub fn for_this_user() -> Result<Self, ChangeError> {
        Self::load_or_create(&default_state_dir()?)
    }

    /// Reads `dir/journal.key`, creating the directory (mode 0700, and its
    /// parents as usual) and the key (mode 0600) if absent. Neither is followed
    /// through a symlink, and both must belong to us and be private, so
    /// another user can neither read the key nor swap in one they know.
    pub fn load_or_create(dir: &Path) -> Result<Self, ChangeError> {
        let fail = |why: KeyError| ChangeError::Key {
            path: dir.join(KEY_FILE).display().to_string(),
            why,
        };
        let dir_fd = open_private_dir(dir).map_err(&fail)?;
        for _attempt in 0..2 {
            match open_at(&dir_fd, KEY_FILE, libc::O_RDONLY) {
                Ok(file) => return read_key(file).map(JournalKey).map_err(&fail),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(fail(KeyError::Io(e))),
            }
            match create_key(&dir_fd) {
                Ok(key) => return Ok(JournalKey(key)),
                // Another numasleuth created it first: read theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(fail(KeyError::Create(e))),
            }
        }
        Err(fail(KeyError::Vanished))
    }

    /// HMAC-SHA256 (RFC 2104) of `message`, as lowercase hex.
    pub fn seal(&self, message: &[u8]) -> String {
        hex(&hmac_sha256(&self.0, message))
    }

    /// Whether `seal` is this key's seal of `message`. The comparison is the
    /// hmac crate's, in time independent of where the two differ.
    pub fn verify(&self, message: &[u8], seal: &str) -> bool {
        let Some(tag) = unhex(seal) else {
            return false;
        };
        mac(&self.0, message).verify_slice(&tag).is_ok()
    }
}

fn mac(key: &[u8], message: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length (longer ones are hashed first).
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(message);
    mac
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    mac(key, message).finalize().into_bytes().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lowercase hex (what [`JournalKey::seal`] writes) to bytes; `None` for
/// anything else, so a seal in any other form verifies as nothing.
fn unhex(text: &str) -> Option<Vec<u8>> {
    let lower_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if !text.len().is_multiple_of(2) || !text.bytes().all(lower_hex) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// Root's key is always under /var/lib, whatever the environment says
/// about HOME; other users keep theirs in their XDG state directory.
fn default_state_dir() -> Result<PathBuf, ChangeError> {
    if let Some(dir) = std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if crate::trust::euid() == 0 {
        return Ok(PathBuf::from(ROOT_STATE_DIR));
    }
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(Path::new(&state).join("numasleuth"));
    }
    match std::env::var_os("HOME").filter(|d| Path::new(d).is_absolute()) {
        Some(home) => Ok(Path::new(&home).join(".local/state/numasleuth")),
        None => Err(ChangeError::Key {
            path: "$HOME/.local/state/numasleuth".into(),
            why: KeyError::NoHome,
        }),
    }
}

fn c_path(path: &Path) -> Result<CString, KeyError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| KeyError::NulInPath)
}

/// Opens (creating if absent) a directory that must be ours and closed to
/// group and others, without following a symlink in its last component.
fn open_private_dir(dir: &Path) -> Result<OwnedFd, KeyError> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|error| KeyError::CreateDirectory {
            path: parent.to_path_buf(),
            error,
        })?;
    }
    let path = c_path(dir)?;
    // SAFETY: `path` is a valid NUL-terminated string for the call.
    if unsafe { libc::mkdir(path.as_ptr(), 0o700) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(KeyError::CreateDirectory {
                path: dir.to_path_buf(),
                error,
            });
        }
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `path` is valid for the call; the result is checked below.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(KeyError::OpenDirectory {
            path: dir.to_path_buf(),
            error: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let meta = File::from(fd.try_clone().map_err(KeyError::Io)?)
        .metadata()
        .map_err(KeyError::Io)?;
    check_private(&meta, KeyPart::Directory(dir.to_path_buf()))?;
    Ok(fd)
}

/// Ours, and neither readable nor writable by group or others.
fn check_private(meta: &std::fs::Metadata, what: KeyPart) -> Result<(), KeyError> {
    let euid = crate::trust::euid();
    if meta.uid() != euid {
        return Err(KeyError::NotOurs {
            what,
            uid: meta.uid(),
            euid,
        });
    }
    if meta.mode() & 0o077 != 0 {
        return Err(KeyError::Reachable {
            what,
            mode: meta.mode() & 0o7777,
        });
    }
    Ok(())
}

fn open_at(dir: &OwnedFd, name: &str, flags: libc::c_int) -> std::io::Result<File> {
    let name = CString::new(name).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // SAFETY: `dir` is an open directory and `name` a valid C string.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, 0o600 as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn read_key(mut file: File) -> Result<[u8; KEY_BYTES], KeyError> {
    let meta = file.metadata().map_err(KeyError::Io)?;
    if !meta.is_file() {
        return Err(KeyError::NotAFile);
    }
    check_private(&meta, KeyPart::Key)?;
    let mut key = [0u8; KEY_BYTES];
    let mut rest = Vec::new();
    file.read_exact(&mut key)
        .and_then(|()| file.take(1).read_to_end(&mut rest))
        .map_err(KeyError::Read)?;
    if !rest.is_empty() {
        return Err(KeyError::TooLong);
    }
    Ok(key)
}

/// Writes a fresh random key to a temporary name and links it into place,
/// so a reader never sees a half-written key and a concurrent creator's
/// key is never replaced.
fn create_key(dir: &OwnedFd) -> std::io::Result<[u8; KEY_BYTES]> {
    let mut key = [0u8; KEY_BYTES];
    fill_random(&mut key)?;
    let temp = format!(".{KEY_FILE}.{}", std::process::id());
    let temp_c = CString::new(temp.as_str()).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let key_c = CString::new(KEY_FILE).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    // A stale temp file from a crashed run would make O_EXCL fail forever.
    // SAFETY: valid directory fd and C string.
    unsafe { libc::unlinkat(dir.as_raw_fd(), temp_c.as_ptr(), 0) };
    let mut file = open_at(dir, &temp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)?;
    let written = file.write_all(&key).and_then(|()| file.sync_all());
    let linked = written.and_then(|()| {
        // SAFETY: valid directory fd and C strings; linkat fails if the key
        // exists, which is what keeps a concurrent creator's key.
        let rc = unsafe { libc::linkat(dir.as_raw_fd(), temp_c.as_ptr(), dir.as_raw_fd(), key_c.as_ptr(), 0) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    });
    // SAFETY: valid directory fd and C string.
    unsafe { libc::unlinkat(dir.as_raw_fd(), temp_c.as_ptr(), 0) };
    linked?;
    // SAFETY: `dir` is an open directory fd; fsync makes the new name durable.
    unsafe { libc::fsync(dir.as_raw_fd()) };
    Ok(key)
}

fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), buf.len() - filled, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// RFC 4231 section 4, HMAC-SHA-256 of test cases 1-4, 6 and 7 (case 5
    /// checks truncation, which we never do).
    #[test]
    fn hmac_matches_rfc_4231_vectors() {
        let case_4_key: Vec<u8> = (0x01..=0x19).collect();
        let cases: [(Vec<u8>, Vec<u8>, &str); 6] = [
            (
                vec![0x0b; 20],
                b"Hi There".to_vec(),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?".to_vec(),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                vec![0xaa; 20],
                vec![0xdd; 50],
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            ),
            (
                case_4_key,
                vec![0xcd; 50],
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            ),
            (
                vec![0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
            (
                vec![0xaa; 131],
                b"This is a test using a larger than block-size key and a larger than block-size data. \
                  The key needs to be hashed before being used by the HMAC algorithm."
                    .to_vec(),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            ),
        ];
        for (i, (key, message, expected)) in cases.iter().enumerate() {
            assert_eq!(hex(&hmac_sha256(key, message)), *expected, "vector {i}");
        }
        // A journal key is 32 bytes; HMAC zero-pads a short key, so "Jefe"
        // padded to 32 bytes seals as case 2 does.
        let mut key = [0u8; KEY_BYTES];
        key[..4].copy_from_slice(b"Jefe");
        let journal_key = JournalKey::from_bytes(key);
        assert_eq!(journal_key.seal(b"what do ya want for nothing?"), cases[1].2);
        assert!(journal_key.verify(b"what do ya want for nothing?", cases[1].2));
    }

    #[test]
    fn verify_needs_the_same_key_and_message() {
        let key = JournalKey::from_bytes([7; KEY_BYTES]);
        let seal = key.seal(b"journal");
        assert!(key.verify(b"journal", &seal));
        assert!(!key.verify(b"journal!", &seal));
        assert!(!JournalKey::from_bytes([8; KEY_BYTES]).verify(b"journal", &seal));
        assert!(!key.verify(b"journal", &seal[..10]));
        assert!(!key.verify(b"journal", &seal.to_uppercase()));
        assert!(!key.verify(b"journal", &"zz".repeat(32)));
        assert!(!key.verify(b"journal", ""));
    }

    #[test]
    fn key_is_created_private_once_and_reread() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("state");
        let first = JournalKey::load_or_create(&dir).unwrap();
        let second = JournalKey::load_or_create(&dir).unwrap();
        assert_eq!(first, second);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(KEY_FILE)), 0o600);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temp file left");
    }

    #[test]
    fn open_or_symlinked_key_homes_are_refused() {
        let parent = tempfile::tempdir().unwrap();
        let open = parent.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = JournalKey::load_or_create(&open).unwrap_err().to_string();
        assert!(err.contains("group or others"), "{err}");

        let real = parent.path().join("real");
        JournalKey::load_or_create(&real).unwrap();
        let link = parent.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = JournalKey::load_or_create(&link).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");

        // A readable key is as good as published.
        std::fs::set_permissions(real.join(KEY_FILE), std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = JournalKey::load_or_create(&real).unwrap_err().to_string();
        assert!(err.contains("group or others"), "{err}");
    }

    #[test]
    fn a_key_file_that_is_a_symlink_or_fifo_is_refused() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("s");
        JournalKey::load_or_create(&dir).unwrap();
        std::fs::remove_file(dir.join(KEY_FILE)).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join(KEY_FILE)).unwrap();
        assert!(JournalKey::load_or_create(&dir).is_err());
        std::fs::remove_file(dir.join(KEY_FILE)).unwrap();
        let fifo = c_path(&dir.join(KEY_FILE)).unwrap();
        // SAFETY: valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let err = JournalKey::load_or_create(&dir).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
