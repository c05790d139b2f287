//! `/proc/PID/fd/*` and `/proc/PID/cwd`: what a process has open, and
//! where its relative paths start. `readers` uses them to see lock files
//! held open (its fallback method) and to place a relative name such as
//! `slabinfo` opened from `/proc`.
//!
//! These are magic links: the target text is the fact, and following one
//! would open the file itself (for `/proc/slabinfo`, taking the very lock
//! we look for). So the links are read with `readlink(2)`, never followed.

use std::collections::BTreeMap;

use crate::error::ReadError;
use crate::root::Root;

/// Longest link target kept (PATH_MAX).
pub const MAX_TARGET_BYTES: usize = 4096;

/// The text of the link at `relative`, or `Ok(None)` when it is gone.
pub fn link_target(root: &Root, relative: &str) -> Result<Option<String>, ReadError> {
    match std::fs::read_link(root.base().join(relative)) {
        Ok(target) => {
            let text = target.to_string_lossy();
            if text.len() > MAX_TARGET_BYTES {
                return Err(ReadError::malformed(relative, "link target longer than PATH_MAX"));
            }
            Ok(Some(text.into_owned()))
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ESRCH)) => Ok(None),
        Err(e) => Err(ReadError::from_io(relative, &e)),
    }
}

/// Each open descriptor's target, at most `max` of them (a process may
/// hold a million). `Ok(None)` when the process is gone. Descriptors that
/// close while being read are skipped.
pub fn read_open(root: &Root, pid: u32, max: usize) -> Result<Option<BTreeMap<u32, String>>, ReadError> {
    let dir = format!("proc/{pid}/fd");
    let Some(names) = root.list(&dir)? else {
        return Ok(None);
    };
    let mut open = BTreeMap::new();
    for fd in names.iter().filter_map(|n| n.parse::<u32>().ok()).take(max) {
        if let Some(target) = link_target(root, &format!("{dir}/{fd}"))? {
            open.insert(fd, target);
        }
    }
    Ok(Some(open))
}

/// Joins a relative `name` to `dir` the way the kernel would, without
/// touching the file system; an absolute `name` stands alone.
pub fn join(dir: &str, name: &str) -> String {
    if name.starts_with('/') {
        return name.to_string();
    }
    format!("{}/{name}", dir.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_read_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let fd_dir = dir.path().join("proc/42/fd");
        std::fs::create_dir_all(&fd_dir).unwrap();
        // A target that does not exist here: only its text matters.
        std::os::unix::fs::symlink("/proc/slabinfo", fd_dir.join("3")).unwrap();
        std::os::unix::fs::symlink("socket:[1234]", fd_dir.join("4")).unwrap();
        std::os::unix::fs::symlink("/x", fd_dir.join("notanfd")).unwrap();
        let root = Root::directory(dir.path()).unwrap();
        let open = read_open(&root, 42, 100).unwrap().unwrap();
        assert_eq!(open.len(), 2);
        assert_eq!(open[&3], "/proc/slabinfo");
        assert_eq!(open[&4], "socket:[1234]");
        assert_eq!(read_open(&root, 42, 1).unwrap().unwrap().len(), 1, "capped");
        assert_eq!(read_open(&root, 43, 100).unwrap(), None, "gone");
        assert_eq!(link_target(&root, "proc/42/cwd").unwrap(), None);
    }

    #[test]
    fn relative_names_are_joined() {
        assert_eq!(join("/proc", "slabinfo"), "/proc/slabinfo");
        assert_eq!(join("/proc/", "12/smaps"), "/proc/12/smaps");
        assert_eq!(join("/home", "/proc/slabinfo"), "/proc/slabinfo");
    }
}
