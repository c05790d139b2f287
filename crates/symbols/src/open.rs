//! Finding the bytes of a mapped object.
//!
//! A path in `/proc/PID/maps` is the path in the process's mount namespace,
//! and may since have been deleted or replaced by an upgrade. So on a live
//! system the file is opened, in order, as `/proc/PID/map_files/START-END`
//! (the very file mapped, even if deleted; needs CAP_SYS_ADMIN), as
//! `/proc/PID/root/PATH` (the process's own filesystem, so containers work),
//! and as PATH. A deleted file is never opened by its path, which may now
//! name a different file. Under a snapshot or fixture root the path is
//! looked up inside that root.

use std::fs::File;
use std::path::PathBuf;

use numasleuth_kernel::procfs::maps::{Backing, Mapping};
use numasleuth_kernel::Root;
use object::read::ReadCache;

use crate::error::SymbolError;
use crate::image::ElfImage;
use crate::limits;
use crate::symbols::{self, SymbolTable};

/// Where an object's bytes can be read, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSource {
    /// The path as the process or the user names it.
    pub shown: String,
    pub candidates: Vec<PathBuf>,
    /// Under a snapshot of a captured process: the same path on this
    /// machine, used only if its build-id (hex) is the one captured.
    pub captured: Option<(PathBuf, String)>,
}

impl ObjectSource {
    /// A file the user named on the command line: opened as given.
    pub fn file(path: &str) -> Self {
        ObjectSource {
            shown: path.to_string(),
            candidates: vec![PathBuf::from(path)],
            captured: None,
        }
    }

    /// The file behind one mapping of process `pid`; `captured` is what
    /// `snapshot -p` recorded of its objects (path to build-id), for a
    /// snapshot root.
    pub fn mapping(
        root: &Root,
        pid: u32,
        mapping: &Mapping,
        captured: &std::collections::HashMap<String, String>,
    ) -> Option<Self> {
        let Backing::File { path, deleted } = &mapping.backing else {
            return None;
        };
        let mut candidates = Vec::new();
        if root.is_live() {
            candidates.push(PathBuf::from(format!(
                "/proc/{pid}/map_files/{:x}-{:x}",
                mapping.start, mapping.end
            )));
            if !deleted && path.starts_with('/') {
                candidates.push(PathBuf::from(format!("/proc/{pid}/root{path}")));
                candidates.push(PathBuf::from(path));
            }
        } else if !deleted {
            if let Ok(resolved) = root.resolve(path) {
                candidates.push(root.base().join(resolved));
            }
        }
        let captured = (!root.is_live())
            .then(|| captured.get(path))
            .flatten()
            .map(|id| (PathBuf::from(path), id.clone()));
        Some(ObjectSource {
            shown: if *deleted {
                format!("{path} (deleted)")
            } else {
                path.clone()
            },
            candidates,
            captured,
        })
    }

    /// Opens the first candidate that can be opened: a regular file within
    /// [`crate::limits`], never a FIFO or device (which could block).
    pub fn open(&self) -> Result<File, SymbolError> {
        let mut worst: Option<SymbolError> = None;
        for candidate in &self.candidates {
            match limits::open_elf(candidate, &self.shown) {
                Ok(file) => return Ok(file),
                Err(error) => {
                    if !matches!(error, SymbolError::NotFound { .. }) || worst.is_none() {
                        worst = Some(error);
                    }
                }
            }
        }
        if let Some((path, id)) = &self.captured {
            match self.open_captured(path, id) {
                Ok(file) => return Ok(file),
                Err(error) => worst = Some(error),
            }
        }
        Err(worst.unwrap_or_else(|| SymbolError::NotFound {
            path: numasleuth_kernel::error::escape(&self.shown),
        }))
    }

    /// This machine's file at a captured object's path, if it is the very
    /// build that was captured.
    fn open_captured(&self, path: &std::path::Path, id: &str) -> Result<File, SymbolError> {
        if id == crate::captured::NOT_ELF {
            return Err(SymbolError::NotElf {
                path: numasleuth_kernel::error::escape(&self.shown),
            });
        }
        let cache = ReadCache::new(limits::open_elf(path, &self.shown)?);
        let here = object::File::parse(&cache)
            .ok()
            .and_then(|o| object::Object::build_id(&o).ok().flatten().map(crate::captured::hex));
        if here.as_deref() != Some(id) {
            return Err(SymbolError::Io {
                path: numasleuth_kernel::error::escape(&self.shown),
                message: format!(
                    "this machine's file is not the one captured (build-id {id}, here {})",
                    here.as_deref().unwrap_or("none")
                ),
            });
        }
        let mut file = cache.into_inner();
        std::io::Seek::rewind(&mut file).map_err(|e| SymbolError::io(&self.shown, &e))?;
        Ok(file)
    }

    /// The object's GNU build-id, when it has one and can be read.
    pub fn build_id(&self) -> Option<Vec<u8>> {
        let cache = ReadCache::new(self.open().ok()?);
        let object = object::File::parse(&cache).ok()?;
        object::Object::build_id(&object).ok()?.map(<[u8]>::to_vec)
    }

    /// Section and program headers, reading only those parts of the file.
    pub fn image(&self) -> Result<ElfImage, SymbolError> {
        let cache = ReadCache::new(self.open()?);
        ElfImage::parse(&cache, &self.shown)
    }

    /// Headers and symbols.
    pub fn image_and_symbols(&self) -> Result<(ElfImage, SymbolTable), SymbolError> {
        let cache = ReadCache::new(self.open()?);
        let image = ElfImage::parse(&cache, &self.shown)?;
        let symbols = symbols::read(&cache, &image, &self.shown)?;
        Ok((image, symbols))
    }
}
