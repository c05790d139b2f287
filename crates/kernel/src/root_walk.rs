//! Resolving a path inside a root by hand: every symlink followed, never
//! leaving the root, each link recorded for `snapshot`. A directory's
//! resolution is kept, so the files of one directory cost one walk.

use std::fs;

use super::{split, Root, MAX_SYMLINK_HOPS};
use crate::error::{display_path, ReadError};

impl Root {
    /// The path with every symlink resolved, relative to the root and never
    /// leaving it: `..` stops at the root and absolute link targets are taken
    /// as root-relative, as they would be after a chroot.
    pub fn resolve(&self, relative: &str) -> Result<String, ReadError> {
        if self.kernel_follows_links() {
            // The live root is `/`: the kernel's answer is the same path,
            // found with three system calls instead of one per component.
            if let Some(resolved) = crate::live_open::canonical(&self.base.join(relative)) {
                return resolved
                    .map(|path| path.trim_start_matches('/').to_string())
                    .map_err(|e| ReadError::from_io(relative, &e));
            }
        }
        if self.recording.is_none() && !self.is_live() && super::plain_parent_and_name(relative).is_some() {
            // The last name checked through its directory's descriptor,
            // like every directory above it, instead of an lstat walking
            // the whole path from the top.
            return self.resolved_dir(relative, relative);
        }
        let mut parts = split(relative);
        let last = parts.pop();
        let parent = parts.join("/");
        let mut done = components(&self.resolved_dir(&parent, relative)?);
        if let Some(last) = last {
            self.walk(&mut done, vec![last], relative)?;
        }
        let resolved = done.join("/");
        if self.recording.is_some() && self.base.join(&resolved).is_dir() {
            // A snapshot must hold the directories links point at, or the
            // same resolution would fail when it is replayed.
            self.record(|r| {
                r.dirs.insert(resolved.clone(), ());
            });
        }
        Ok(resolved)
    }

    /// Directory `parent` (a prefix of `relative`, already split and
    /// normalised) with its links resolved, walked once per root: the files
    /// of one sysfs directory share it, and the walk costs an lstat per
    /// component (26 for each of 2,600 files on a 256-CPU capture).
    pub(super) fn resolved_dir(&self, parent: &str, relative: &str) -> Result<String, ReadError> {
        if parent.is_empty() {
            return Ok(String::new());
        }
        let lock = || self.resolved_dirs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = lock().get(parent) {
            return Ok(hit);
        }
        // From the grandparent, itself resolved once: a new directory costs
        // one lstat, not one per component. The depth is the number of
        // components in a path numasleuth itself asked for.
        let (grandparent, last) = match parent.rsplit_once('/') {
            Some((grandparent, last)) => (grandparent, last),
            None => ("", parent),
        };
        let above = self.resolved_dir(grandparent, relative)?;
        let resolved = match self.in_tree_is_link(&above, last) {
            // Not a link: the common case, checked through the tree's
            // descriptor of `above` (one component walked).
            Some(Ok(false)) => join(&above, last),
            Some(Err(e)) => return Err(ReadError::from_io(relative, &e)),
            Some(Ok(true)) | None => {
                let mut done = components(&above);
                self.walk(&mut done, vec![last.to_string()], relative)?;
                done.join("/")
            }
        };
        lock().insert(parent, &resolved);
        Ok(resolved)
    }

    /// Whether `name` in the resolved directory `dir` of a tree root is a
    /// link; `None` where descriptors are not used (live, recording).
    fn in_tree_is_link(&self, dir: &str, name: &str) -> Option<std::io::Result<bool>> {
        if self.recording.is_some() || self.is_live() || name == ".." {
            return None;
        }
        let mut dirs = self.tree_dirs.lock().unwrap_or_else(|p| p.into_inner());
        dirs.is_link(&self.base, dir, name)
    }

    /// Resolves `pending` (in order) below the link-free `done`, following
    /// every symlink inside the root.
    fn walk(&self, done: &mut Vec<String>, pending: Vec<String>, relative: &str) -> Result<(), ReadError> {
        let mut pending = pending;
        pending.reverse();
        let mut hops = 0;
        while let Some(part) = pending.pop() {
            match part.as_str() {
                "." => continue,
                ".." => {
                    done.pop();
                    continue;
                }
                _ => {}
            }
            done.push(part);
            let here = done.join("/");
            let meta = match fs::symlink_metadata(self.base.join(&here)) {
                Ok(meta) => meta,
                Err(e) => return Err(ReadError::from_io(relative, &e)),
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            hops += 1;
            if hops > MAX_SYMLINK_HOPS {
                return Err(ReadError::Io {
                    errno: None,
                    path: display_path(relative),
                    message: "too many levels of symbolic links".into(),
                });
            }
            let target = fs::read_link(self.base.join(&here)).map_err(|e| ReadError::from_io(relative, &e))?;
            let target = target.to_string_lossy().into_owned();
            self.record(|r| {
                r.symlinks.insert(here.clone(), target.clone());
            });
            done.pop();
            if target.starts_with('/') {
                done.clear();
            }
            pending.extend(split(&target).into_iter().rev());
        }
        Ok(())
    }
}

/// `dir/name`, or `name` at the top.
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// A resolved path's components (it holds no `.`, `..` or empty ones).
fn components(resolved: &str) -> Vec<String> {
    resolved
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// Resolved directory prefixes, bounded: a tree with millions of
/// directories costs at most this many entries, then starts over.
#[derive(Debug, Default)]
pub(super) struct ResolvedDirs(std::collections::HashMap<String, String>);

/// Enough for every directory a 4,096-CPU machine's readers visit.
const MAX_RESOLVED_DIRS: usize = 1 << 16;

impl ResolvedDirs {
    fn get(&self, parent: &str) -> Option<String> {
        self.0.get(parent).cloned()
    }

    fn insert(&mut self, parent: &str, resolved: &str) {
        if self.0.len() >= MAX_RESOLVED_DIRS {
            self.0.clear();
        }
        self.0.insert(parent.to_string(), resolved.to_string());
    }
}
