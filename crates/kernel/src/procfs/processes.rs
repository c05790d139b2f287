//! Reading `procfs::processes`; its format, types and parser are `numasleuth_parse::procfs::processes`.

pub use numasleuth_parse::procfs::processes::*;

use crate::error::ReadError;
use crate::root::Root;
use crate::unread::{Gaps, Unread};

/// PIDs whose `comm` is exactly `name`. Processes that exit while we look
/// are skipped: their absence is the answer for them. A `comm` that exists
/// but cannot be read (hidepid, a hostile tree) leaves the answer open, so
/// those are counted and noted in `gaps` as one entry.
pub fn find_by_comm(root: &Root, name: &str, gaps: &mut Gaps) -> Result<Vec<u32>, ReadError> {
    let mut found = Vec::new();
    let (mut unreadable, mut example) = (0u64, None);
    let mut listed = 0u64;
    for entry in root.list("proc")?.unwrap_or_default() {
        let Ok(pid) = entry.parse::<u32>() else {
            continue;
        };
        listed += 1;
        match root.read(&format!("proc/{pid}/comm")) {
            Ok(comm) if comm.trim_end() == name => found.push(pid),
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                unreadable += 1;
                example.get_or_insert(e);
            }
        }
    }
    // A running system has at least its init; a tree listing no process
    // did not record them, and cannot say what is not running.
    if listed == 0 {
        gaps.push(Unread::new(
            "/proc",
            "lists no process, though a running system always has one",
        ));
    }
    if let Some(example) = example {
        gaps.push(Unread::new(
            COMM_PATTERN,
            format!("{unreadable} process(es) could not be read, e.g. {example}"),
        ));
    }
    Ok(found)
}

/// Bytes of `/proc/PID/cmdline` shown when naming a process to a person.
const CMDLINE_SHOWN_BYTES: usize = 4096;

/// `/proc/PID/cmdline` as one line: arguments joined by spaces, at most
/// the first 4 KiB; `None` when it cannot be read or is empty (a kernel
/// thread, a zombie). For naming a process to a person, not for parsing.
pub fn cmdline(root: &Root, pid: u32) -> Option<String> {
    let text = root.read(&format!("proc/{pid}/cmdline")).ok()?;
    let text: String = text.chars().take(CMDLINE_SHOWN_BYTES).collect();
    let words: Vec<&str> = text.split('\0').filter(|w| !w.is_empty()).collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = Root::directory(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn processes_are_found_by_comm_and_named_by_cmdline() {
        let (_dir, root) = tree(&[
            ("proc/10/comm", "postgres\n"),
            ("proc/10/cmdline", "postgres\0-D\0/var/lib/pg\0"),
            ("proc/11/comm", "postgres\n"),
            ("proc/12/comm", "bash\n"),
            ("proc/12/cmdline", ""),
            ("proc/self/comm", "postgres\n"),
        ]);
        let mut gaps = Gaps::default();
        assert_eq!(find_by_comm(&root, "postgres", &mut gaps).unwrap(), [10, 11]);
        assert_eq!(cmdline(&root, 10).as_deref(), Some("postgres -D /var/lib/pg"));
        assert_eq!(cmdline(&root, 12), None);
        assert_eq!(cmdline(&root, 11), None);
    }
}
