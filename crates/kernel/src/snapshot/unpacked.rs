//! An unpacked snapshot's temporary directory: removed when dropped, and
//! registered with [`crate::cleanup`] so a signal removes it too.

use std::path::Path;

use crate::cleanup::Registered;

#[derive(Debug)]
pub(crate) struct Unpacked {
    // Unregistered before the directory goes: fields drop in order.
    _registered: Registered,
    dir: tempfile::TempDir,
}

impl Unpacked {
    pub fn new(dir: tempfile::TempDir) -> Self {
        Unpacked {
            _registered: Registered::new(dir.path()),
            dir,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}
