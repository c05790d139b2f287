//! Reading an archive into a directory: checked whole first, written only
//! on the second pass.

use std::fs::File;
use std::io::Seek;
use std::path::Path;

use numasleuth_parse::read::format_cap;

use crate::error::{Error, Problem};
use crate::extract::{self, EntryPath, Extractor};
use crate::gzip::Gzip;
use crate::limits::{self, Caps, MAX_ARCHIVE_FILE_BYTES};
use crate::untar::{Kind, TarReader};

/// A `.tar.gz` the caller opened (as a regular file: checking the type
/// before opening is the caller's, who knows what to call the path).
#[derive(Debug)]
pub struct Archive {
    file: File,
    file_bytes: u64,
    caps: Caps,
}

impl Archive {
    /// Refuses a file larger than any snapshot before reading a byte.
    pub fn new(file: File, file_bytes: u64, caps: Caps) -> Result<Archive, Problem> {
        if file_bytes > MAX_ARCHIVE_FILE_BYTES {
            return Err(Problem(format!(
                "it is larger than {}; no snapshot is that big",
                format_cap(MAX_ARCHIVE_FILE_BYTES)
            )));
        }
        Ok(Archive { file, file_bytes, caps })
    }

    /// The first pass: the whole archive is checked (gzip CRCs, every cap,
    /// every path) without writing anything, so a bad or hostile archive
    /// costs no disk and no inodes. `interrupted` is asked before each
    /// entry, and a `true` stops the pass.
    pub fn check(&mut self, interrupted: &dyn Fn() -> bool) -> Result<(), Error> {
        let scan = self.file.try_clone()?;
        let gzip = Gzip::open(scan, self.file_bytes, self.caps.stream_bytes)?;
        unpack(gzip, None, self.caps, interrupted)?;
        // The clone shares the offset: back to the start for `unpack_into`.
        self.file.rewind()?;
        Ok(())
    }

    /// The second pass: every entry checked again as it is written under
    /// `dir` (in case the file changed since [`Archive::check`]), and
    /// nowhere else. On an error `dir` holds part of the archive: removing
    /// it is the caller's, who made it.
    pub fn unpack_into(self, dir: &Path, interrupted: &dyn Fn() -> bool) -> Result<(), Error> {
        let gzip = Gzip::open(self.file, self.file_bytes, self.caps.stream_bytes)?;
        let mut extractor = Extractor::new(dir)?;
        unpack(gzip, Some(&mut extractor), self.caps, interrupted)?;
        Ok(())
    }
}

/// Reads every entry within `caps`, writing each through `extractor`, or
/// with none only checking them.
fn unpack(
    gzip: Gzip,
    mut extractor: Option<&mut Extractor>,
    caps: Caps,
    interrupted: &dyn Fn() -> bool,
) -> Result<(), Problem> {
    let mut archive = TarReader::new(gzip);
    let (mut entries, mut unpacked_bytes) = (0usize, 0u64);
    while let Some(entry) = archive.next_entry()? {
        if interrupted() {
            return Err(Problem("interrupted".into()));
        }
        entries += 1;
        if entries > caps.entries {
            return Err(Problem(format!("it holds more than {} entries", caps.entries)));
        }
        unpacked_bytes += limits::disk_bytes(entry.kind, entry.size, entry.link.len());
        if unpacked_bytes > caps.unpacked_bytes {
            return Err(Problem(format!(
                "it unpacks to more than {}",
                format_cap(caps.unpacked_bytes)
            )));
        }
        let Some(at) = EntryPath::check(&entry.path)? else {
            continue; // `./`, the top directory itself.
        };
        let Some(extractor) = extractor.as_deref_mut() else {
            if entry.kind == Kind::Symlink {
                extract::check_link_target(&at, &entry.link)?;
            }
            continue;
        };
        match entry.kind {
            Kind::Dir => extractor.dir(&at)?,
            Kind::Symlink => extractor.symlink(&at, &entry.link)?,
            Kind::File => {
                let mut file = extractor.file(&at)?;
                archive.copy_data(entry.size, &mut file)?;
            }
        }
    }
    archive.into_inner().finish()
}
