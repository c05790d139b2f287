//! Files that exist but could not be used, kept as data.
//!
//! Missing data is a result: a reader goes on without a file it cannot
//! use, and the command says what it could not read. Two cases differ:
//! - absent (`NotFound`): the kernel has no such file (no THP, no HMAT, a
//!   device that went away). That is an answer, and is not recorded here.
//! - unreadable (permission denied, a directory where a file belongs,
//!   malformed text, anything else): the file is there and its answer is
//!   unknown. An analysis that ignored this would call a check clean that
//!   it could not make, so every such failure is noted with its path.

use std::fmt;

use serde::Serialize;

use crate::error::ReadError;

/// One file that exists but could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unread {
    /// As the user would see it on a live system, e.g.
    /// `/proc/irq/40/smp_affinity_list`.
    pub path: String,
    pub why: String,
}

impl Unread {
    pub fn new(path: impl Into<String>, why: impl Into<String>) -> Self {
        Unread {
            path: path.into(),
            why: why.into(),
        }
    }

    /// `None` for an absent file: absence is a result, not a gap.
    pub fn from_error(error: &ReadError) -> Option<Self> {
        match error {
            ReadError::NotFound { .. } => None,
            ReadError::PermissionDenied { path } => Some(Unread::new(path, "permission denied")),
            ReadError::Io { path, message, .. } => Some(Unread::new(path, message)),
            ReadError::Malformed { path, message } => Some(Unread::new(path, format!("malformed: {message}"))),
            // Kinds added later (size caps, file-type checks) are unreadable
            // too; every ReadError displays as `path: why`.
            #[allow(unreachable_patterns)]
            other => {
                let text = other.to_string();
                let (path, why) = text.split_once(": ").unwrap_or(("", &text));
                Some(Unread::new(path, why))
            }
        }
    }
}

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.why)
    }
}

/// Files procfs makes on every Linux kernel numasleuth supports, whatever
/// its configuration. Absent from a tree they are a gap in the tree (a
/// hand-made or stripped snapshot), not the kernel's answer, so the checks
/// that read them cannot call themselves clean. Knobs a kernel may lack
/// (`numa_balancing`, `zone_reclaim_mode`, THP) are not here.
pub const IN_EVERY_KERNEL: [&str; 7] = [
    "proc/meminfo",
    "proc/vmstat",
    "proc/zoneinfo",
    "proc/interrupts",
    "proc/cmdline",
    "proc/sys/vm/min_free_kbytes",
    "proc/self/status",
];

/// Why an [`IN_EVERY_KERNEL`] file that is absent counts as unread.
pub const ABSENT_FROM_TREE: &str = "not in this tree, though every Linux kernel has it";

/// A read of `relative`, one of [`IN_EVERY_KERNEL`]: absent (not found, or
/// `None` from an optional read) becomes an error the gaps keep.
pub fn required<T>(relative: &str, result: Result<T, ReadError>) -> Result<T, ReadError>
where
    T: MaybeAbsent,
{
    debug_assert!(IN_EVERY_KERNEL.contains(&relative), "{relative}");
    let absent = || ReadError::Io {
        path: crate::error::display_path(relative),
        message: ABSENT_FROM_TREE.into(),
        errno: None,
    };
    match result {
        Err(e) if e.is_not_found() => Err(absent()),
        Ok(value) if value.is_absent() => Err(absent()),
        other => other,
    }
}

/// What an optional read returns for an absent file.
pub trait MaybeAbsent {
    fn is_absent(&self) -> bool;
}

impl<T> MaybeAbsent for Option<T> {
    fn is_absent(&self) -> bool {
        self.is_none()
    }
}

impl<T> MaybeAbsent for Vec<T> {
    fn is_absent(&self) -> bool {
        false
    }
}

impl<K, V> MaybeAbsent for std::collections::BTreeMap<K, V> {
    fn is_absent(&self) -> bool {
        false
    }
}

/// What one reading pass could not use. Readers hand their failures here
/// and go on with what they have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gaps {
    unread: Vec<Unread>,
    /// The first failure as it was, for a caller that ends up with nothing
    /// usable and must say why.
    first: Option<ReadError>,
}

impl Gaps {
    /// Records `error` unless it says the file is absent.
    pub fn note(&mut self, error: &ReadError) {
        if let Some(unread) = Unread::from_error(error) {
            self.first.get_or_insert_with(|| error.clone());
            self.unread.push(unread);
        }
    }

    /// Records a gap that is not a single read error (e.g. a directory
    /// that holds none of the files that describe it).
    pub fn push(&mut self, unread: Unread) {
        self.unread.push(unread);
    }

    /// The value of an optional read, or `None` with the failure noted.
    pub fn keep<T>(&mut self, result: Result<Option<T>, ReadError>) -> Option<T> {
        self.ok(result).flatten()
    }

    /// The value of a read, or `None` with the failure noted (an absent
    /// file is `None` without a note).
    pub fn ok<T>(&mut self, result: Result<T, ReadError>) -> Option<T> {
        result.map_err(|e| self.note(&e)).ok()
    }

    pub fn is_empty(&self) -> bool {
        self.unread.is_empty()
    }

    pub fn first(&self) -> Option<&ReadError> {
        self.first.as_ref()
    }

    pub fn into_unread(self) -> Vec<Unread> {
        self.unread
    }
}

/// Ids of `cpuN`/`nodeN` directories below `limit`; a directory beyond it
/// (a tree claiming `cpu70000`) is noted as malformed and left out, so the
/// rest of the tree is still read.
pub fn ids_below(ids: Vec<u32>, limit: u32, dir: &str, (prefix, plural): (&str, &str), gaps: &mut Gaps) -> Vec<u32> {
    let (kept, beyond): (Vec<u32>, Vec<u32>) = ids.into_iter().partition(|id| *id < limit);
    if let Some(id) = beyond.first() {
        gaps.note(&ReadError::malformed(
            dir,
            format!("{prefix}{id} is beyond the kernel's limit of {limit} {plural}"),
        ));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_is_not_a_gap_and_the_rest_are() {
        let mut gaps = Gaps::default();
        let absent: Result<Option<u32>, _> = Err(ReadError::NotFound { path: "/a".into() });
        assert_eq!(gaps.keep(absent), None);
        assert!(gaps.is_empty());
        let denied: Result<u32, _> = Err(ReadError::PermissionDenied { path: "/b".into() });
        assert_eq!(gaps.ok(denied), None);
        assert_eq!(gaps.keep(Ok(Some(7))), Some(7));
        gaps.note(&ReadError::malformed("sys/c", "`x` is not a number"));
        gaps.note(&ReadError::Io {
            errno: None,
            path: "/d".into(),
            message: "Is a directory (os error 21)".into(),
        });
        assert_eq!(gaps.first(), Some(&ReadError::PermissionDenied { path: "/b".into() }));
        let shown: Vec<String> = gaps.into_unread().iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "/b: permission denied",
                "/sys/c: malformed: `x` is not a number",
                "/d: Is a directory (os error 21)"
            ]
        );
    }
}
