//! What opening a snapshot adds to reading its archive (whose hostile
//! cases are `numasleuth-archive`'s tests): the path as given in front of
//! every refusal, a tree that must be a machine's, a FIFO where the file
//! should be, and links that resolve inside the root. Each refusal leaves
//! nothing behind.

use std::fs;
use std::path::PathBuf;

use numasleuth_archive::test_archive::TarBuilder;

use super::limits::Caps;
use super::*;
use crate::untrusted::mkfifo;

/// An archive, a directory to unpack under (`unpack`), and a `sentinel`
/// directory nothing may ever be written to.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("unpack")).unwrap();
        fs::create_dir(dir.path().join("sentinel")).unwrap();
        Scratch { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn open(&self, bytes: &[u8]) -> Result<Root, ReadError> {
        let archive = self.path("snap.tar.gz");
        fs::write(&archive, bytes).unwrap();
        open_in(&archive, Some(&self.path("unpack")), Caps::REAL)
    }

    fn refused(&self, bytes: &[u8]) -> String {
        let err = self.open(bytes).expect_err("a hostile archive was accepted");
        self.assert_clean();
        err.to_string()
    }

    /// Nothing in the sentinel, and no unpack directory left over.
    fn assert_clean(&self) {
        assert_eq!(fs::read_dir(self.path("sentinel")).unwrap().count(), 0, "wrote outside");
        assert_eq!(fs::read_dir(self.path("unpack")).unwrap().count(), 0, "left a temp dir");
    }
}

/// The archive's own words, after the path and what it was expected to be,
/// whichever pass refused it: the header, an entry, the gzip trailer.
#[test]
fn every_refusal_names_the_path_and_what_was_expected() {
    let s = Scratch::new();
    let shown = s.path("snap.tar.gz").display().to_string();
    let gz = TarBuilder::new().machine().file("sys/x", &[b'7'; 3000]).gz();
    for (bytes, says) in [
        (
            b"BZh91AY&SY and then some more bytes".to_vec(),
            "it is bzip2-compressed",
        ),
        (
            TarBuilder::new().machine().file("../x", b"").gz(),
            "`../x` climbs out with `..`",
        ),
        (gz[..gz.len() - 4].to_vec(), "truncated"),
        (
            [&gz[..], b"junk"].concat(),
            "it has data after the end of the gzip stream",
        ),
    ] {
        let err = s.refused(&bytes);
        let start = format!("{shown}: not a directory or a readable .tar.gz snapshot: {says}");
        assert!(err.starts_with(&start), "{err}");
    }
}

#[test]
fn links_are_kept_and_stay_inside_the_root() {
    let s = Scratch::new();
    let gz = TarBuilder::new()
        .machine()
        .symlink("sys/abs", "/sys/online")
        .symlink("sys/up", "../../../../../../etc/passwd")
        .gz();
    let root = s.open(&gz).unwrap();
    assert_eq!(root.read("sys/abs").unwrap(), "0\n");
    assert!(root.read("sys/up").unwrap_err().is_not_found());
    drop(root);
    s.assert_clean();
}

#[test]
fn trees_that_are_not_machines_are_refused() {
    let s = Scratch::new();
    let err = s.refused(&TarBuilder::new().file("README", b"hi").gz());
    assert!(
        err.ends_with("snap.tar.gz: not a numasleuth snapshot or root: it has no proc/ or sys/"),
        "{err}"
    );
    let err = s.refused(&TarBuilder::new().dir("top").dir("top/etc").gz());
    assert!(err.contains("it has no proc/ or sys/"), "{err}");
    // hwloc's captures wrap the tree in one folder; some hold only sys/.
    let root = s.open(&TarBuilder::new().dir("cap").dir("cap/sys").gz()).unwrap();
    assert!(root.base().ends_with("cap"));
    drop(root);
    let err = open(&s.path("sentinel")).err().unwrap().to_string();
    assert!(
        err.ends_with("sentinel: not a numasleuth snapshot or root: it has no proc/ or sys/"),
        "{err}"
    );
    fs::create_dir(s.path("unpack/proc")).unwrap();
    assert!(open(&s.path("unpack")).is_ok());
}

#[test]
fn a_fifo_as_the_archive_is_refused_without_blocking() {
    let s = Scratch::new();
    let fifo = s.path("snap.tar.gz");
    mkfifo(&fifo);
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(sender.send(open(&fifo).err().map(|e| e.to_string()))));
    let err = receiver
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("blocked on a FIFO");
    let err = err.expect("a FIFO was accepted");
    assert!(err.contains("snap.tar.gz: is a FIFO, not a regular file"), "{err}");
}

#[test]
fn a_relative_archive_path_is_shown_as_given() {
    let s = Scratch::new();
    fs::write(s.path("snap.tar.gz"), TarBuilder::new().file("x", b"").gz()).unwrap();
    // Tests run in the crate's directory; climb to / and back down.
    let cwd = std::env::current_dir().unwrap();
    let up = "../".repeat(cwd.components().count() - 1);
    let relative = PathBuf::from(format!(
        "{up}{}",
        s.path("snap.tar.gz").display().to_string().trim_start_matches('/')
    ));
    let err = open(&relative).err().unwrap().to_string();
    assert!(err.starts_with(&format!("{}: ", relative.display())), "{err}");
    assert!(!err.contains("numasleuth-root-"), "{err}");
}
