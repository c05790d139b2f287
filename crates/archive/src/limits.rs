//! What a snapshot archive may hold. An archive is hostile input, and gzip
//! turns a small file into a huge stream, so every dimension is capped; an
//! archive over a cap is refused with the cap named.
//!
//! The numbers come from what snapshots really hold: our fixtures (2–4
//! CPUs) are about 400 entries and 35 KB of file contents, with about 40
//! entries per CPU and paths at most 11 components deep.

use numasleuth_parse::read::MAX_KERNEL_FILE_BYTES;

use crate::untar::Kind;

/// The compressed file itself. Deflate never shrinks data by less than its
/// few bytes of block overhead, so a valid archive is never much larger
/// than its stream; this stops a huge file before any work is done.
pub const MAX_ARCHIVE_FILE_BYTES: u64 = MAX_STREAM_BYTES + (1 << 20);

/// The decompressed tar stream: contents plus 512-byte headers and padding
/// of every entry. Bounds the time a gzip bomb can take (about a second or
/// two of inflating), whatever its entries look like.
pub const MAX_STREAM_BYTES: u64 = 512 << 20;

/// Disk the unpacked tree may take, counted as the file system spends it
/// (see [`disk_bytes`]): a snapshot is a few MB even for a big machine (the
/// kernel files are small); 256 MiB is far beyond any, and keeps a hostile
/// archive from filling the temporary directory's disk. Counted in bytes
/// of content instead, 100,000 files of 100 bytes took about 390 MB.
pub const MAX_UNPACKED_BYTES: u64 = 256 << 20;

/// The block a file system spends at least per file with content and per
/// directory (ext4, xfs and tmpfs pages are all 4 KiB).
pub const DISK_BLOCK_BYTES: u64 = 4096;

/// A link target this short is kept in the inode itself (ext4's "fast"
/// symbolic links); a longer one takes a block.
const INLINE_LINK_BYTES: usize = 60;

/// One file: no kernel file numasleuth reads may be larger anyway.
pub const MAX_ENTRY_BYTES: u64 = MAX_KERNEL_FILE_BYTES;

/// Files, directories and links. At about 40 per CPU this fits machines of
/// some 2,400 CPUs; it bounds the inodes an archive can make (and so the
/// time and memory the temporary directory costs) to about 100 MB.
pub const MAX_ENTRIES: usize = 100_000;

/// Components in one path. sysfs paths are at most about 20 deep (PCI
/// bridges nest); past 64 a path is an attack on per-entry cost.
pub const MAX_PATH_COMPONENTS: usize = 64;

/// Bytes in one path or link target: Linux's PATH_MAX.
pub const MAX_PATH_BYTES: usize = 4096;

/// A GNU long-name header's payload (a path, so [`MAX_PATH_BYTES`]; the
/// check allows one more for its NUL).
pub const MAX_LONG_NAME_BYTES: u64 = MAX_PATH_BYTES as u64;

/// A pax header's payload: a path, a link target and a few short records
/// (times, owners, a SELinux label) fit many times over.
pub const MAX_PAX_BYTES: u64 = 64 << 10;

/// Extension headers (long names, pax) before one entry. A real archive has
/// at most three (`x`, `L`, `K`); a chain of them is an attack.
pub const MAX_EXTENSION_HEADERS: usize = 8;

/// What an entry costs the disk: a file's size rounded up to whole blocks,
/// one block for a directory, and one for a link whose target is too long
/// for its inode. Against [`MAX_UNPACKED_BYTES`], with [`MAX_ENTRIES`]
/// bounding the inodes.
pub(crate) fn disk_bytes(kind: Kind, size: u64, link_bytes: usize) -> u64 {
    let blocks = match kind {
        Kind::File => size.div_ceil(DISK_BLOCK_BYTES),
        Kind::Dir => 1,
        Kind::Symlink => u64::from(link_bytes > INLINE_LINK_BYTES),
    };
    blocks.saturating_mul(DISK_BLOCK_BYTES)
}

/// The caps that grow with the archive, together, so tests can exercise
/// them on small archives; [`Caps::REAL`] is what a snapshot is opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub stream_bytes: u64,
    pub unpacked_bytes: u64,
    pub entries: usize,
}

impl Caps {
    pub const REAL: Caps = Caps {
        stream_bytes: MAX_STREAM_BYTES,
        unpacked_bytes: MAX_UNPACKED_BYTES,
        entries: MAX_ENTRIES,
    };
}
