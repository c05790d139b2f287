//! The one reader of `/proc/PID/maps`, re-exported from [`super::maps`]
//! (which parses a line and does no I/O). Every caller goes through it:
//! `inspect` (joined with numa_maps), the ELF objects a process maps,
//! `watch`'s mapping at an address, the names of `hotlines` and `hotpages`,
//! and DAMON's initial regions.
//!
//! A process may exit between any two reads; that is
//! [`ProcessError::Exited`], as for the other process readers, never a
//! "not found" on the file. A line that does not parse is an error: the
//! kernel writes every line the same way, so a bad one means a hostile or
//! damaged tree, and a caller that skipped it would name memory from a
//! partial list without saying so.
//!
//! Two ways to read: [`MapsStream`] hands over one mapping at a time, so
//! memory stays flat however many mappings there are; [`read`] keeps them
//! all, up to a cap in mappings and in bytes, and says when it was hit.

use std::fmt;

use crate::error::ReadError;
use crate::procfs::maps::{parse_line_into, Mapping};
use crate::procfs::process::{classify, LineStream, ProcessError};
use crate::root::Root;
use crate::untrusted::format_cap;

/// How much of the file a reader takes before it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapsCap {
    pub mappings: u64,
    /// Bytes of mapping lines, newlines included.
    pub bytes: u64,
}

impl MapsCap {
    /// For a caller that keeps every mapping it reads. vm.max_map_count's
    /// default is 65,530, so a process with more is rare, and naming most
    /// of it beats holding an unbounded list. The bytes bound the paths'
    /// memory (a hostile tree can have 256 KiB lines): a real line is under
    /// 300 bytes, so this is hit before the count only on a made-up file.
    pub const KEPT: MapsCap = MapsCap {
        mappings: 65_536,
        bytes: 64 << 20,
    };
    /// For a caller that keeps no mapping past the next one: memory stays
    /// flat, and every mapping of a process with a raised
    /// vm.max_map_count still counts, so nothing is cut.
    pub const STREAMED: MapsCap = MapsCap {
        mappings: u64::MAX,
        bytes: u64::MAX,
    };
}

/// Which cap stopped a read: the mappings past it were not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapHit {
    Mappings { pid: u32, cap: u64 },
    Bytes { pid: u32, cap_bytes: u64 },
}

impl fmt::Display for CapHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapHit::Mappings { pid, cap } => write!(f, "/proc/{pid}/maps has more than {cap} mappings"),
            CapHit::Bytes { pid, cap_bytes } => {
                write!(f, "/proc/{pid}/maps is longer than {}", format_cap(*cap_bytes))
            }
        }
    }
}

/// The mappings of a process in address order, one at a time.
pub struct MapsStream<'r> {
    root: &'r Root,
    pid: u32,
    path: String,
    lines: LineStream,
    cap: MapsCap,
    mappings: u64,
    bytes: u64,
    cap_hit: Option<CapHit>,
}

impl<'r> MapsStream<'r> {
    pub fn open(root: &'r Root, pid: u32, cap: MapsCap) -> Result<Self, ProcessError> {
        let path = format!("proc/{pid}/maps");
        let lines = LineStream::open(root, &path).map_err(|e| classify(root, pid, e))?;
        Ok(MapsStream {
            root,
            pid,
            path,
            lines,
            cap,
            mappings: 0,
            bytes: 0,
            cap_hit: None,
        })
    }

    /// The next mapping; `None` at the end of the file or at a cap
    /// ([`Self::cap_hit`] tells which).
    pub fn next_mapping(&mut self) -> Result<Option<Mapping>, ProcessError> {
        let mut mapping = Mapping::default();
        Ok(self.next_into(&mut mapping)?.then_some(mapping))
    }

    /// The next mapping, parsed into `out` (its path's buffer reused);
    /// `false` at the end of the file or at a cap. The line is parsed from
    /// its bytes, so a stream of 50,000 mappings allocates and converts to
    /// text only the paths that change.
    pub fn next_into(&mut self, out: &mut Mapping) -> Result<bool, ProcessError> {
        if self.cap_hit.is_some() {
            return Ok(false);
        }
        let (root, pid) = (self.root, self.pid);
        let Some(line) = self.lines.next_bytes().map_err(|e| classify(root, pid, e))? else {
            return Ok(false);
        };
        let bytes = self.bytes.saturating_add(line.len() as u64 + 1);
        if self.mappings >= self.cap.mappings {
            self.cap_hit = Some(CapHit::Mappings {
                pid,
                cap: self.cap.mappings,
            });
            return Ok(false);
        }
        if bytes > self.cap.bytes {
            self.cap_hit = Some(CapHit::Bytes {
                pid,
                cap_bytes: self.cap.bytes,
            });
            return Ok(false);
        }
        parse_line_into(line, out).map_err(|e| ReadError::malformed(&self.path, e.0))?;
        self.mappings += 1;
        self.bytes = bytes;
        Ok(true)
    }

    /// Set once a cap stopped the stream with mappings left unread.
    pub fn cap_hit(&self) -> Option<CapHit> {
        self.cap_hit
    }
}

/// Every mapping up to `cap`, in address order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Maps {
    pub mappings: Vec<Mapping>,
    /// Set when the process has more than the cap let in.
    pub cap_hit: Option<CapHit>,
}

/// Reads the mappings of process `pid`, at most `cap` of them.
pub fn read(root: &Root, pid: u32, cap: MapsCap) -> Result<Maps, ProcessError> {
    let mut stream = MapsStream::open(root, pid, cap)?;
    let mut mappings = Vec::new();
    while let Some(mapping) = stream.next_mapping()? {
        mappings.push(mapping);
    }
    Ok(Maps {
        mappings,
        cap_hit: stream.cap_hit(),
    })
}

#[cfg(test)]
#[path = "maps_read_tests.rs"]
mod tests;
