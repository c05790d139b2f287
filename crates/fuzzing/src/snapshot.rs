//! Snapshot archives as `--root FILE.tar.gz` opens them: hostile tarballs
//! (links out of the tree, odd entry types, huge or truncated members).
//!
//! Input that starts with the gzip magic is written as is; anything else
//! is taken as a tar stream and gzipped first, so the fuzzer spends its
//! time on tar headers and the tree they unpack to rather than on
//! deflate checksums. An archive that opens is read the way `topo` and
//! `doctor` read a root, and its unpacked tree must be gone once the root
//! is dropped.

use std::fs;
use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use numasleuth_kernel::{gather, snapshot};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

pub fn run(data: &[u8]) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("snapshot.tar.gz");
    if data.starts_with(&GZIP_MAGIC) {
        fs::write(&path, data).expect("write the archive");
    } else {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(data).expect("gzip in memory");
        fs::write(&path, gz.finish().expect("gzip in memory")).expect("write the archive");
    }
    let Ok(root) = snapshot::open(&path) else {
        return;
    };
    let base = root.base().to_path_buf();
    assert!(
        base.is_dir(),
        "an opened snapshot's base {} is not a directory",
        base.display()
    );
    if let Ok(topology) = gather::read_topology(&root) {
        let _ = gather::read_host(&root, &topology);
    }
    drop(root);
    assert!(!base.exists(), "unpacked snapshot {} left behind", base.display());
}
