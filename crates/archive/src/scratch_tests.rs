//! A scratch space for the hostile-archive tests: the archive, a directory
//! to unpack under (`unpack`), and a `sentinel` directory nothing may ever
//! be written to.

use std::fs;
use std::path::PathBuf;

use tempfile::TempDir;

use crate::{Archive, Caps, Error};

pub(crate) struct Scratch {
    dir: TempDir,
}

impl Scratch {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("unpack")).unwrap();
        fs::create_dir(dir.path().join("sentinel")).unwrap();
        Scratch { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `bytes` as the archive `snap.tar.gz`, checked and then unpacked into
    /// a new directory under `unpack`, as kernel's snapshot opens one: the
    /// directory is made only once the check passed, and removed (dropped)
    /// when the unpack fails.
    pub fn open_with(&self, bytes: &[u8], caps: Caps) -> Result<TempDir, Error> {
        let path = self.path("snap.tar.gz");
        fs::write(&path, bytes).unwrap();
        let file = fs::File::open(&path).unwrap();
        let file_bytes = file.metadata().unwrap().len();
        let mut archive = Archive::new(file, file_bytes, caps)?;
        archive.check(&|| false)?;
        let dir = tempfile::Builder::new()
            .prefix("numasleuth-root-")
            .tempdir_in(self.path("unpack"))
            .unwrap();
        archive.unpack_into(dir.path(), &|| false)?;
        Ok(dir)
    }

    pub fn open(&self, bytes: &[u8]) -> Result<TempDir, Error> {
        self.open_with(bytes, Caps::REAL)
    }

    pub fn refused(&self, bytes: &[u8]) -> String {
        let err = self.open(bytes).expect_err("a hostile archive was accepted");
        self.assert_clean();
        err.to_string()
    }

    /// Nothing in the sentinel, and no unpack directory left over.
    pub fn assert_clean(&self) {
        assert_eq!(fs::read_dir(self.path("sentinel")).unwrap().count(), 0, "wrote outside");
        assert_eq!(fs::read_dir(self.path("unpack")).unwrap().count(), 0, "left a temp dir");
    }
}
