//! Helpers for tests, shared by every crate's tests so each is written
//! once: the workspace's fixture trees as a [`Root`], and the processes a
//! test left running.
//!
//! Why here, behind the `test-support` feature: every crate whose tests
//! need them already depends on kernel (a helper crate of its own would
//! give kernel's unit tests a second, different `Root`), and the feature
//! is named only under `[dev-dependencies]`, so no shipped build has it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::procfs::process::read_process_stat;
use crate::Root;

/// How long [`surviving`] gives a killed process to be gone.
const KILL_LANDS_WITHIN: Duration = Duration::from_secs(2);

/// The workspace's `tests/` folder.
fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests")
}

/// `tests/fixtures/NAME`: a whole machine captured with `snapshot`.
pub fn fixture(name: &str) -> Root {
    Root::directory(&tests_dir().join("fixtures").join(name)).unwrap()
}

/// `tests/partial-trees/NAME`: a part of a tree (a DAMON admin tree, say)
/// that does not replay as a whole machine.
pub fn partial_tree(name: &str) -> Root {
    Root::directory(&tests_dir().join("partial-trees").join(name)).unwrap()
}

/// A tree in a temporary directory holding `files` (path inside the tree,
/// contents), opened as a [`Root`]; the directory lives as long as the
/// `TempDir` returned.
pub fn temp_tree<P: AsRef<Path>, C: AsRef<[u8]>>(files: &[(P, C)]) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    for (path, contents) in files {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, contents).unwrap();
    }
    let root = Root::directory(dir.path()).unwrap();
    (dir, root)
}

/// Processes whose command line holds `marker` (a unique sleep length),
/// zombies aside (a zombie is gone but for its parent's wait), and those
/// whose command line also holds one of `besides` (the numasleuth that was
/// handed the marker as an argument, say).
pub fn running_with(marker: &str, besides: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let live = Root::live();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let excused = besides.iter().any(|b| cmdline.contains(b));
        if !cmdline.contains(marker) || excused {
            continue;
        }
        let pid = entry.file_name().to_string_lossy().parse::<u32>().ok();
        let zombie = pid
            .and_then(|p| read_process_stat(&live, p).ok())
            .is_some_and(|s| s.state == 'Z');
        if !zombie {
            found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// What still runs with `marker` once a kill has had time to land: a
/// SIGKILLed process is not gone the instant `kill` returns (on a loaded
/// machine it may not have run its exit yet), so this waits up to 2 s for
/// the list to empty, and returns what is left.
pub fn surviving(marker: &str, besides: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + KILL_LANDS_WITHIN;
    loop {
        let found = running_with(marker, besides);
        if found.is_empty() || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The names in `dir`, sorted: what a test expects a write to have left.
pub fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeper_is_found_until_it_is_killed() {
        let mut child = std::process::Command::new("sleep").arg("91.0606").spawn().unwrap();
        // Until it has exec'd, the child's command line is still this
        // test's (a clean CI run once looked too soon).
        let started = Instant::now();
        while running_with("91.0606", &[]).is_empty() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(running_with("91.0606", &[]).len(), 1);
        assert!(running_with("91.0606", &["sleep"]).is_empty());
        child.kill().unwrap();
        // Reaped here, else it would stay a zombie (which is left out too).
        child.wait().unwrap();
        assert_eq!(surviving("91.0606", &[]), Vec::<String>::new());
    }

    #[test]
    fn fixtures_and_partial_trees_open_as_roots() {
        assert!(fixture("qemu-two-nodes").read("proc/zoneinfo").is_ok());
        assert!(!fixture("qemu-two-nodes").is_live());
        let damon = partial_tree("damon-host-paddr");
        assert!(damon.read("sys/kernel/mm/damon/admin/kdamonds/0/pid").is_ok());
        assert!(damon.read("proc/zoneinfo").is_err());
    }
}
