//! `/proc/sys/kernel/hostname` and `/proc/sys/kernel/osrelease`: the
//! machine's name and its kernel, read in one place for the provenance of
//! every report, a snapshot's manifest and a journal's machine identity.

use crate::root::Root;

/// The kernel allows 64 bytes of hostname and 64 of release; longer is a
/// hostile snapshot, not a name.
pub const MAX_NAME_BYTES: usize = 256;

/// The file's first line, trimmed, as the kernel wrote it; `None` when it
/// is unreadable, empty or too long. Callers quote it before printing.
fn first_line(root: &Root, path: &str) -> Option<String> {
    let text = root.read(path).ok()?;
    let value = text.lines().next()?.trim();
    (!value.is_empty() && value.len() <= MAX_NAME_BYTES).then(|| value.to_string())
}

pub fn hostname(root: &Root) -> Option<String> {
    first_line(root, "proc/sys/kernel/hostname")
}

pub fn kernel_release(root: &Root) -> Option<String> {
    first_line(root, "proc/sys/kernel/osrelease")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_trimmed_line_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = dir.path().join("proc/sys/kernel");
        std::fs::create_dir_all(&kernel).unwrap();
        std::fs::write(kernel.join("hostname"), "  db-7 \nsecond\n").unwrap();
        std::fs::write(kernel.join("osrelease"), "x".repeat(MAX_NAME_BYTES + 1)).unwrap();
        let root = Root::directory(dir.path()).unwrap();
        assert_eq!(hostname(&root).as_deref(), Some("db-7"));
        assert_eq!(kernel_release(&root), None);
        std::fs::write(kernel.join("hostname"), "\n").unwrap();
        assert_eq!(hostname(&root), None);
    }
}
