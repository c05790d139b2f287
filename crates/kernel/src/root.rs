//! The injectable root every reader goes through.
//!
//! Readers never touch an absolute path: they ask a [`Root`] for
//! `sys/devices/system/node/online` and the root decides whether that means
//! the live `/sys`, a fixture tree in a test, or an unpacked snapshot. Symlinks
//! are resolved by hand, inside the root, so a fixture or snapshot can never
//! leak a read onto the live system, and so `snapshot` can record every link
//! it followed and rebuild the same tree elsewhere.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{display_path, ReadError};
use crate::tree_dirs::TreeDirs;
use crate::untrusted::{self, MAX_KERNEL_FILE_BYTES};

/// Hard cap on symlink hops, as the kernel's own ELOOP guard does.
const MAX_SYMLINK_HOPS: usize = 40;

/// The most names one directory may list. The largest real one is /proc
/// with pid_max at its ceiling (4,194,304 processes); past twice that a
/// tree is hostile, and the names alone would take hundreds of MB.
const MAX_DIR_ENTRIES: usize = 1 << 23;

/// Everything a run read, so `snapshot` can rebuild it byte for byte.
#[derive(Debug, Default, Clone)]
pub struct Recording {
    /// Resolved relative path → contents.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Relative path of a symlink → its target, exactly as the link holds it.
    pub symlinks: BTreeMap<String, String>,
    /// Resolved relative paths of directories that were listed.
    pub dirs: BTreeMap<String, ()>,
}

#[derive(Debug, Clone)]
pub struct Root {
    base: PathBuf,
    /// `base` is `/`, decided once: comparing paths walks their components,
    /// and every read asks.
    live: bool,
    recording: Option<Arc<Mutex<Recording>>>,
    /// Directories already resolved, shared by clones: see [`walk::ResolvedDirs`].
    resolved_dirs: Arc<Mutex<walk::ResolvedDirs>>,
    /// Descriptors of a tree root's directories: see [`TreeDirs`].
    tree_dirs: Arc<Mutex<TreeDirs>>,
    /// Keeps an unpacked snapshot alive as long as any clone of the root.
    _unpacked: Option<Arc<crate::snapshot::Unpacked>>,
}

impl Root {
    /// The live system.
    pub fn live() -> Self {
        Root {
            base: PathBuf::from("/"),
            live: true,
            recording: None,
            resolved_dirs: Arc::default(),
            tree_dirs: Arc::default(),
            _unpacked: None,
        }
    }

    /// A directory holding `proc/` and `sys/`, such as a fixture or snapshot.
    pub fn directory(path: &Path) -> Result<Self, ReadError> {
        let shown = path.display().to_string();
        let meta = fs::metadata(path).map_err(|e| ReadError::from_io_at(shown.clone(), &e))?;
        if !meta.is_dir() {
            return Err(ReadError::Io {
                errno: None,
                path: crate::error::escape(&shown),
                message: format!("is {}, not a directory", untrusted::kind_name(meta.file_type())),
            });
        }
        Ok(Root {
            base: path.to_path_buf(),
            live: path == Path::new("/"),
            recording: None,
            resolved_dirs: Arc::default(),
            tree_dirs: Arc::default(),
            _unpacked: None,
        })
    }

    pub(crate) fn unpacked(dir: crate::snapshot::Unpacked, base: PathBuf) -> Self {
        Root {
            live: base == Path::new("/"),
            base,
            recording: None,
            resolved_dirs: Arc::default(),
            tree_dirs: Arc::default(),
            _unpacked: Some(Arc::new(dir)),
        }
    }

    /// A root that remembers every file, link and directory it is asked for.
    pub fn recording(mut self) -> (Self, Arc<Mutex<Recording>>) {
        let recording = Arc::new(Mutex::new(Recording::default()));
        self.recording = Some(recording.clone());
        // Links inside directories resolved before recording began were
        // never recorded: start afresh so a snapshot holds every one.
        self.resolved_dirs = Arc::default();
        (self, recording)
    }

    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Whether the kernel may follow links itself. Links are resolved by
    /// hand so a fixture or snapshot cannot leak onto the live system and
    /// so a recording keeps every link; on the live system with nothing
    /// recorded neither applies (the root is `/`, where `..` and absolute
    /// targets already stop), and the hand walk costs an lstat per path
    /// component: a thousand of them were 40% of `topo`'s system calls.
    fn kernel_follows_links(&self) -> bool {
        self.recording.is_none() && self.is_live()
    }

    /// Reads a whole file as text: a regular file of at most
    /// [`MAX_KERNEL_FILE_BYTES`], never a FIFO or device.
    pub fn read(&self, relative: &str) -> Result<String, ReadError> {
        if self.kernel_follows_links() {
            let (file, size_hint) = self.open_followed(relative)?;
            let bytes = if is_sysfs_attribute(relative) {
                untrusted::read_sysfs_attribute(file, MAX_KERNEL_FILE_BYTES)
            } else {
                untrusted::read_capped(file, size_hint, MAX_KERNEL_FILE_BYTES)
            }
            .map_err(|e| ReadError::from_io(relative, &e))?;
            return Ok(into_text(bytes));
        }
        if let Some(opened) = self.open_in_tree(relative) {
            let (file, size_bytes) = opened?;
            let bytes = untrusted::read_sized(file, size_bytes, MAX_KERNEL_FILE_BYTES)
                .map_err(|e| ReadError::from_io(relative, &e))?;
            return Ok(into_text(bytes));
        }
        let resolved = self.resolve(relative)?;
        let (file, meta) = self.open_resolved(&resolved, relative)?;
        let bytes = untrusted::read_capped(file, meta.len(), MAX_KERNEL_FILE_BYTES)
            .map_err(|e| ReadError::from_io(relative, &e))?;
        // Some kernels end sysfs lists with "\n\0"; the NUL is padding, not
        // data. The recorded bytes stay exact.
        let text = String::from_utf8_lossy(&bytes).trim_end_matches('\0').to_string();
        self.record(|r| {
            r.files.insert(resolved, bytes);
        });
        Ok(text)
    }

    /// Opens a regular file for reading, for callers that stream it; the
    /// same checks as [`Root::read`] apply, without the size cap. Under a
    /// recording root the file is read once, whole (capped like
    /// [`Root::read`]), kept for the snapshot, and the stream reads that
    /// copy: what was analysed is exactly what the snapshot holds.
    pub fn open(&self, relative: &str) -> Result<fs::File, ReadError> {
        if self.kernel_follows_links() {
            return Ok(self.open_followed(relative)?.0);
        }
        if let Some(opened) = self.open_in_tree(relative) {
            return Ok(opened?.0);
        }
        let resolved = self.resolve(relative)?;
        let (file, meta) = self.open_resolved(&resolved, relative)?;
        if self.recording.is_none() {
            return Ok(file);
        }
        let bytes = untrusted::read_capped(file, meta.len(), MAX_KERNEL_FILE_BYTES)
            .map_err(|e| ReadError::from_io(relative, &e))?;
        let copy = copy_in_memory(&bytes).map_err(|e| ReadError::from_io(relative, &e))?;
        self.record(|r| {
            r.files.insert(resolved, bytes);
        });
        Ok(copy)
    }

    /// Keeps a file `snapshot` makes rather than reads (the per-page answers
    /// of a captured process, its objects' build-ids), so that a replay
    /// finds it at `relative`. Does nothing unless this root records.
    pub fn record_made(&self, relative: &str, bytes: Vec<u8>) {
        self.record(|r| {
            r.files.insert(relative.to_string(), bytes);
        });
    }

    /// Whether reads through this root are being recorded for a snapshot.
    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// `resolved` has no links left in it, so the last component must not
    /// be one either (it would be a link swapped in since resolving).
    fn open_resolved(&self, resolved: &str, relative: &str) -> Result<(fs::File, fs::Metadata), ReadError> {
        untrusted::open_regular(&self.base.join(resolved), false).map_err(|e| ReadError::from_io(relative, &e))
    }

    /// A tree root's file through its directory's descriptor
    /// ([`TreeDirs`]); `None` when recording (every link must be seen), on
    /// the live system, or when the last component is a link: the caller
    /// then resolves by hand.
    fn open_in_tree(&self, relative: &str) -> Option<Result<(fs::File, u64), ReadError>> {
        if self.recording.is_some() || self.is_live() {
            return None;
        }
        let split_parts;
        let (parent, last) = match plain_parent_and_name(relative) {
            Some(plain) => plain,
            None => {
                let mut parts = split(relative);
                let last = parts.pop()?;
                split_parts = (parts.join("/"), last);
                (split_parts.0.as_str(), split_parts.1.as_str())
            }
        };
        let dir = match self.resolved_dir(parent, relative) {
            Ok(dir) => dir,
            Err(e) => return Some(Err(e)),
        };
        let mut dirs = self.tree_dirs.lock().unwrap_or_else(|p| p.into_inner());
        let opened = dirs.open_file(&self.base, &dir, last)?;
        Some(opened.map_err(|e| ReadError::from_io(relative, &e)))
    }

    /// [`Root::kernel_follows_links`]: links followed by the kernel, never
    /// into a device or FIFO; see [`untrusted::open_kernel_file`]. Returns
    /// the file and a size hint.
    fn open_followed(&self, relative: &str) -> Result<(fs::File, u64), ReadError> {
        untrusted::open_kernel_file(&self.base.join(relative)).map_err(|e| ReadError::from_io(relative, &e))
    }

    /// Reads a file that may legitimately be absent (kernel- or
    /// hardware-dependent); any other failure is still an error.
    pub fn read_optional(&self, relative: &str) -> Result<Option<String>, ReadError> {
        match self.read(relative) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Names in a directory, sorted; `Ok(None)` when the directory is absent.
    pub fn list(&self, relative: &str) -> Result<Option<Vec<String>>, ReadError> {
        let resolved = match self.resolve_unless_kernel_follows(relative) {
            Ok(path) => path,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        if let Some(listed) = self.list_in_tree(&resolved) {
            return match listed {
                Ok(mut names) if names.len() <= MAX_DIR_ENTRIES => {
                    names.sort();
                    Ok(Some(names))
                }
                Ok(_) => Err(too_many_entries(relative)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(ReadError::from_io(relative, &e)),
            };
        }
        let entries = match fs::read_dir(self.base.join(&resolved)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ReadError::from_io(relative, &e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            if names.len() == MAX_DIR_ENTRIES {
                return Err(too_many_entries(relative));
            }
            let entry = entry.map_err(|e| ReadError::from_io(relative, &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == crate::snapshot::KEEP {
                continue;
            }
            if self.recording.is_some() {
                self.record_entry(&format!("{resolved}/{name}"), &entry);
            }
            names.push(name);
        }
        names.sort();
        self.record(|r| {
            r.dirs.insert(resolved, ());
        });
        Ok(Some(names))
    }

    /// A tree root's resolved directory listed through its descriptor
    /// ([`TreeDirs`]); `None` when recording (every entry's kind is kept
    /// then), on the live system, or where descriptors are not used.
    fn list_in_tree(&self, resolved: &str) -> Option<std::io::Result<Vec<String>>> {
        if self.recording.is_some() || self.is_live() {
            return None;
        }
        let mut dirs = self.tree_dirs.lock().unwrap_or_else(|p| p.into_inner());
        dirs.list(&self.base, resolved, crate::snapshot::KEEP, MAX_DIR_ENTRIES)
    }

    /// Writes a kernel file (a sysctl, an IRQ affinity, a DAMON setting) in
    /// one `write`, as procfs and sysfs expect: the one door for every
    /// kernel file numasleuth writes (docs/security.md). `change`'s
    /// journalled operations call it, only after `--apply`, and so does
    /// `hotpages`' own kdamond.
    pub fn write(&self, relative: &str, contents: &str) -> Result<(), ReadError> {
        let resolved = self.resolve(relative)?;
        let mut file = untrusted::open_regular_for_write(&self.base.join(&resolved))
            .map_err(|e| ReadError::from_io(relative, &e))?;
        std::io::Write::write_all(&mut file, contents.as_bytes()).map_err(|e| ReadError::from_io(relative, &e))
    }

    /// Whether a path exists. Under a recording root a file found here is
    /// captured too, so a replay answers the same.
    pub fn exists(&self, relative: &str) -> bool {
        let Ok(resolved) = self.resolve_unless_kernel_follows(relative) else {
            return false;
        };
        let path = self.base.join(&resolved);
        if self.recording.is_some() && path.is_file() {
            return self.read(&resolved).is_ok();
        }
        path.exists()
    }

    /// Keeps a listed entry's kind: readers decide things from names alone
    /// (the `nodeN` link in a CPU's directory), so a snapshot must list the
    /// same subdirectories and links. Plain files are captured when read.
    fn record_entry(&self, path: &str, entry: &fs::DirEntry) {
        let Ok(kind) = entry.file_type() else {
            return;
        };
        if kind.is_symlink() {
            if let Ok(target) = fs::read_link(entry.path()) {
                let target = target.to_string_lossy().into_owned();
                self.record(|r| {
                    r.symlinks.insert(path.to_string(), target);
                });
            }
        } else if kind.is_dir() {
            self.record(|r| {
                r.dirs.insert(path.to_string(), ());
            });
        }
    }

    /// `relative` as it is when the kernel may follow its links, else
    /// [`Root::resolve`]d.
    fn resolve_unless_kernel_follows(&self, relative: &str) -> Result<String, ReadError> {
        if self.kernel_follows_links() {
            Ok(relative.to_string())
        } else {
            self.resolve(relative)
        }
    }

    fn record(&self, update: impl FnOnce(&mut Recording)) {
        if let Some(recording) = &self.recording {
            // A poisoned lock only means another reader panicked; the map is
            // still consistent, so keep recording.
            let mut guard = recording.lock().unwrap_or_else(|p| p.into_inner());
            update(&mut guard);
        }
    }
}

fn too_many_entries(relative: &str) -> ReadError {
    ReadError::Io {
        errno: None,
        path: display_path(relative),
        message: format!("more than {MAX_DIR_ENTRIES} entries; refusing to list it"),
    }
}

/// A device attribute in sysfs (`sys/class/…` and `sys/bus/…` lead into
/// `sys/devices`), as opposed to cgroup, debug or firmware files mounted
/// under `sys/` that may stream several records.
fn is_sysfs_attribute(relative: &str) -> bool {
    ["sys/devices/", "sys/class/", "sys/bus/"]
        .iter()
        .any(|prefix| relative.starts_with(prefix))
}

/// A file's bytes as text, as `String::from_utf8_lossy` gives them, less
/// trailing NULs (some kernels end sysfs lists with "\n\0": padding, not
/// data). Valid UTF-8, nearly every kernel file, keeps its buffer: no copy.
fn into_text(bytes: Vec<u8>) -> String {
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let kept = text.trim_end_matches('\0').len();
    text.truncate(kept);
    text
}

/// `relative`'s directory and last name, when the path is already plain
/// (no empty, `.` or `..` component, no leading `/`): what every reader
/// asks for, split without the allocations of [`split`].
fn plain_parent_and_name(relative: &str) -> Option<(&str, &str)> {
    let plain = !relative.is_empty()
        && relative
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if !plain {
        return None;
    }
    Some(relative.rsplit_once('/').unwrap_or(("", relative)))
}

fn split(path: &str) -> Vec<String> {
    Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// `bytes` in an unnamed temporary file, positioned at its start, for a
/// reader that wants a `File`.
fn copy_in_memory(bytes: &[u8]) -> std::io::Result<fs::File> {
    use std::io::{Seek, Write};
    let mut copy = tempfile::tempfile()?;
    copy.write_all(bytes)?;
    copy.rewind()?;
    Ok(copy)
}

#[path = "root_walk.rs"]
mod walk;

#[cfg(test)]
#[path = "root_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "root_hostile_tests.rs"]
mod hostile_tests;
