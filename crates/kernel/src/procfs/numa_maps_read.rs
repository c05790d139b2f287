//! The one reader of `/proc/PID/numa_maps`: the only place its path is
//! built, and the one loop that takes its lines, up to a cap, and parses
//! them. `inspect`'s join with maps (`vma_stream`) reads it through a
//! reader thread, `top`'s scan sums it on its own thread
//! ([`super::process::resident_bytes_by_node`]); both see the same entries.

use std::fs::File;
use std::io::{BufRead, BufReader};

use crate::error::ReadError;
use crate::procfs::numa_maps::{parse_bytes_into, NumaMapsEntry};
use crate::procfs::process::LineStream;
use crate::root::Root;

/// Process `pid`'s numa_maps, opened and not yet read.
#[derive(Debug)]
pub struct NumaMapsFile {
    file: File,
    relative: String,
}

impl NumaMapsFile {
    /// Opens it; the error is the open's own (not found, permission), which
    /// each caller turns into what a missing file means to it.
    pub fn open(root: &Root, pid: u32) -> Result<Self, ReadError> {
        let relative = format!("proc/{pid}/numa_maps");
        let file = root.open(&relative)?;
        Ok(NumaMapsFile { file, relative })
    }

    /// At most `max_lines` of its entries, read on this thread.
    pub fn entries(self, max_lines: u64) -> NumaMapsEntries {
        self.entries_through(|file| BufReader::with_capacity(64 << 10, file), max_lines)
    }

    /// At most `max_lines` of its entries, read from the stream `wrap`
    /// makes of the file (a reader thread's chunks, say).
    pub fn entries_through<R: BufRead>(self, wrap: impl FnOnce(File) -> R, max_lines: u64) -> NumaMapsEntries<R> {
        NumaMapsEntries {
            lines: LineStream::new(wrap(self.file), &self.relative),
            relative: self.relative,
            lines_left: max_lines,
        }
    }
}

/// numa_maps parsed a line at a time, with memory flat however long it is.
pub struct NumaMapsEntries<R: BufRead = BufReader<File>> {
    lines: LineStream<R>,
    relative: String,
    lines_left: u64,
}

impl<R: BufRead> NumaMapsEntries<R> {
    /// The next line's entry; `None` at the end or once the cap's lines
    /// are read. A line that does not parse is a `Malformed` error that
    /// still counts against the cap: the line after it can be read next.
    pub fn next_entry(&mut self) -> Result<Option<NumaMapsEntry>, ReadError> {
        let mut entry = NumaMapsEntry::default();
        Ok(self.next_into(&mut entry)?.then_some(entry))
    }

    /// [`Self::next_entry`], parsed from the line's bytes into `entry`
    /// (its buffers reused); `false` at the end or at the cap.
    pub fn next_into(&mut self, entry: &mut NumaMapsEntry) -> Result<bool, ReadError> {
        if self.lines_left == 0 {
            return Ok(false);
        }
        let Some(line) = self.lines.next_bytes()? else {
            return Ok(false);
        };
        self.lines_left -= 1;
        parse_bytes_into(line, entry).map_err(|e| ReadError::malformed(&self.relative, e.0))?;
        Ok(true)
    }
}

#[cfg(test)]
#[path = "numa_maps_read_tests.rs"]
mod tests;
