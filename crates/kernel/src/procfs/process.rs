//! Reading one process as a whole: its threads and its mappings, with the
//! ways a live process can disappear or refuse to be read.
//!
//! A process may exit between any two reads, so a task file that vanishes
//! skips that thread, and a process that vanishes is one clear error
//! ("process 123 exited while being inspected"), never a confusing
//! "not found" on some inner file. Another user's process gives
//! `PermissionDenied` with the fix (root or CAP_SYS_PTRACE).
//!
//! Mappings are streamed: `maps` and `numa_maps` are read line by line and
//! joined on start address, so a process with millions of mappings costs
//! one line of each in memory, never the whole text.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use thiserror::Error;

use crate::error::{display_path, ReadError};
use crate::procfs::maps::{self, Mapping};
use crate::procfs::numa_maps;
use crate::procfs::status;
use crate::procfs::task::{self, TaskStat};
use crate::root::Root;
use crate::untrusted::format_cap;

pub use numasleuth_parse::procfs::process::{ThreadReading, Vma, VmaStreamSummary};

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProcessError {
    #[error("no such process: {pid} ({path} does not exist)")]
    NoSuchProcess { pid: u32, path: String },
    #[error("process {pid} exited while being inspected")]
    Exited { pid: u32 },
    #[error(
        "{path}: permission denied: process {pid} belongs to another user or is protected; \
         run as root or with CAP_SYS_PTRACE (e.g. `sudo numasleuth …`)"
    )]
    PermissionDenied { pid: u32, path: String },
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Turns a read failure into what it means for the process.
pub fn classify(root: &Root, pid: u32, error: ReadError) -> ProcessError {
    match error {
        ReadError::PermissionDenied { path } => ProcessError::PermissionDenied { pid, path },
        ReadError::NotFound { .. } if !crate::task::process_exists(root, pid) => ProcessError::Exited { pid },
        ReadError::Io {
            errno: Some(libc::ESRCH),
            ..
        } => ProcessError::Exited { pid },
        other => other.into(),
    }
}

/// `proc/PID/stat`, the first read of an inspection: its absence means
/// there is no such process.
pub fn read_process_stat(root: &Root, pid: u32) -> Result<TaskStat, ProcessError> {
    match crate::task::process_stat(root, pid) {
        Ok(Some(stat)) => Ok(stat),
        Ok(None) => Err(ProcessError::NoSuchProcess {
            pid,
            path: display_path(&crate::task::process_stat_path(pid)),
        }),
        Err(e) => Err(classify(root, pid, e)),
    }
}

/// Every thread that still exists. Threads that exit while being read are
/// skipped; if the whole process is gone, that is [`ProcessError::Exited`].
pub fn read_threads(root: &Root, pid: u32) -> Result<Vec<ThreadReading>, ProcessError> {
    let listed = crate::task::threads(root, pid, crate::task::MAX_THREADS)
        .map_err(|e| classify(root, pid, e))?
        .ok_or(ProcessError::Exited { pid })?;
    if let Some(error) = listed.first_error {
        return Err(classify(root, pid, error));
    }
    let mut threads = Vec::new();
    for thread in listed.threads {
        match read_thread(root, pid, thread) {
            Ok(Some(thread)) => threads.push(thread),
            Ok(None) => continue,
            Err(e) => return Err(classify(root, pid, e)),
        }
    }
    if threads.is_empty() {
        return Err(ProcessError::Exited { pid });
    }
    Ok(threads)
}

/// A thread's placement around its `stat`; `Ok(None)` when it exited
/// after its `stat` was read.
fn read_thread(root: &Root, pid: u32, thread: crate::task::Thread) -> Result<Option<ThreadReading>, ReadError> {
    let dir = crate::task::thread_dir(pid, thread.tid);
    let allowed = match status::read_allowed(root, &dir) {
        // status vanished after stat: the thread has just exited.
        Ok(None) => return Ok(None),
        Err(e) if crate::task::is_gone(&e) => return Ok(None),
        Ok(Some(allowed)) => allowed,
        Err(e) => return Err(e),
    };
    let sched = match root.read_optional(&format!("{dir}/sched")) {
        Ok(Some(text)) => task::parse_sched(&text).ok(),
        // sched is debug information: unreadable means "not shown".
        Ok(None) | Err(ReadError::PermissionDenied { .. }) => None,
        Err(e) => return Err(e),
    };
    Ok(Some(ThreadReading {
        stat: thread.stat,
        allowed_cpus: allowed.cpus,
        allowed_mems: allowed.mems,
        sched,
    }))
}

pub use super::vma_stream::for_each_vma;

/// The longest line a streamed file may have. The kernel's longest is a
/// numa_maps line: a 4,096-byte path written with octal escapes (16 KiB),
/// a policy and a count for each of up to 1,024 nodes (about 20 KiB more).
/// The stream's memory stays flat however long the file, and this keeps one
/// newline-free line (a sparse file, say) from undoing that.
pub const MAX_LINE_BYTES: u64 = 256 << 10;

/// A file read line by line through a [`Root`]. A line that lies whole in
/// the reader's buffer is handed out where it lies (50,000-line maps and
/// numa_maps files are read this way, and a copy per line was a tenth of
/// `inspect`'s own time); one that straddles the buffer's end is gathered
/// into a buffer of its own. Bytes that are not UTF-8 (file names may hold
/// any) are shown lossily rather than failing the read.
pub struct LineStream<R: BufRead = BufReader<File>> {
    reader: R,
    /// Bytes of the last line handed out that are still in `reader`'s
    /// buffer: consumed at the next call, once the line is no longer
    /// borrowed.
    pending: usize,
    bytes: Vec<u8>,
    line: String,
    relative: String,
}

impl LineStream {
    pub fn open(root: &Root, relative: &str) -> Result<Self, ReadError> {
        let file = root.open(relative)?;
        Ok(LineStream::new(BufReader::with_capacity(64 * 1024, file), relative))
    }
}

/// Where the next line lies.
enum Found {
    /// In the reader's buffer, this many bytes with its newline.
    InBuffer(usize),
    /// Gathered into `bytes`.
    Gathered,
    End,
}

impl<R: BufRead> LineStream<R> {
    /// Lines of an already open stream; `relative` names it in errors.
    pub fn new(reader: R, relative: &str) -> Self {
        LineStream {
            reader,
            pending: 0,
            bytes: Vec::new(),
            line: String::new(),
            relative: relative.to_string(),
        }
    }

    /// The next non-empty line without its newline, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&str>, ReadError> {
        let found = self.find_line()?;
        let Some(bytes) = line_bytes(&mut self.reader, &self.bytes, found, &self.relative)? else {
            return Ok(None);
        };
        Ok(Some(match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                self.line = String::from_utf8_lossy(bytes).into_owned();
                &self.line
            }
        }))
    }

    /// [`Self::next_line`] as bytes, not checked as UTF-8: for parsers that
    /// read numbers from the bytes and convert only a path, once.
    pub fn next_bytes(&mut self) -> Result<Option<&[u8]>, ReadError> {
        let found = self.find_line()?;
        line_bytes(&mut self.reader, &self.bytes, found, &self.relative)
    }

    /// Finds the next line that is not blank, whole in the buffer where it
    /// can be, and checks it against [`MAX_LINE_BYTES`].
    fn find_line(&mut self) -> Result<Found, ReadError> {
        loop {
            let found = self.find_any_line()?;
            let line = match found {
                Found::InBuffer(length) => {
                    let buffer = self
                        .reader
                        .fill_buf()
                        .map_err(|e| ReadError::from_io(&self.relative, &e))?;
                    &buffer[..length.min(buffer.len())]
                }
                Found::Gathered => &self.bytes[..],
                Found::End => return Ok(found),
            };
            if !line.iter().all(|b| b.is_ascii_whitespace() || *b == 0) {
                return Ok(found);
            }
        }
    }

    /// The next line, blank or not.
    fn find_any_line(&mut self) -> Result<Found, ReadError> {
        self.reader.consume(std::mem::take(&mut self.pending));
        let buffer = self
            .reader
            .fill_buf()
            .map_err(|e| ReadError::from_io(&self.relative, &e))?;
        if buffer.is_empty() {
            return Ok(Found::End);
        }
        if let Some(at) = newline_at(buffer) {
            if at as u64 + 1 > MAX_LINE_BYTES {
                return Err(self.too_long());
            }
            self.pending = at + 1;
            return Ok(Found::InBuffer(at + 1));
        }
        self.bytes.clear();
        let read = (&mut self.reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.bytes)
            .map_err(|e| ReadError::from_io(&self.relative, &e))?;
        if read as u64 > MAX_LINE_BYTES {
            return Err(self.too_long());
        }
        Ok(if read == 0 { Found::End } else { Found::Gathered })
    }

    fn too_long(&self) -> ReadError {
        ReadError::Io {
            errno: None,
            path: display_path(&self.relative),
            message: format!("has a line longer than {}", format_cap(MAX_LINE_BYTES)),
        }
    }
}

/// The line `found` points at, without its newline and trailing NULs;
/// `None` at the end. A free function, so that the caller may keep
/// another of its fields while this borrows the buffers.
fn line_bytes<'a, R: BufRead>(
    reader: &'a mut R,
    gathered: &'a [u8],
    found: Found,
    relative: &str,
) -> Result<Option<&'a [u8]>, ReadError> {
    let bytes = match found {
        // The buffer `find_line` just looked at: a `fill_buf` with bytes
        // still unconsumed hands them back without reading.
        Found::InBuffer(length) => {
            let buffer = reader.fill_buf().map_err(|e| ReadError::from_io(relative, &e))?;
            buffer.get(..length).ok_or_else(|| ReadError::Io {
                errno: None,
                path: display_path(relative),
                message: "changed under its reader".into(),
            })?
        }
        Found::Gathered => gathered,
        Found::End => return Ok(None),
    };
    let kept = bytes.iter().rposition(|&b| b != b'\n' && b != 0).map_or(0, |at| at + 1);
    Ok(Some(&bytes[..kept]))
}

/// Where the first newline is, eight bytes at a time: a line is 50-100
/// bytes, and a byte loop was a third of the reader's own work per line.
fn newline_at(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
    let mut words = bytes.chunks_exact(8);
    for (index, word) in words.by_ref().enumerate() {
        let word = u64::from_ne_bytes(word.try_into().unwrap_or([0; 8])) ^ NEWLINES;
        // Nonzero exactly when some byte of `word` is zero (a newline).
        if word.wrapping_sub(ONES) & !word & HIGHS != 0 {
            let within = bytes[index * 8..index * 8 + 8].iter().position(|&b| b == b'\n');
            return within.map(|at| index * 8 + at);
        }
    }
    let tail = bytes.len() - words.remainder().len();
    words.remainder().iter().position(|&b| b == b'\n').map(|at| tail + at)
}

/// The mapping of process `pid` that holds `address`, streamed from its
/// maps (memory stays flat however many mappings); `None` when no mapping
/// holds it.
pub fn mapping_at(root: &Root, pid: u32, address: u64) -> Result<Option<Mapping>, ProcessError> {
    let mut maps = maps::MapsStream::open(root, pid, maps::MapsCap::STREAMED)?;
    while let Some(mapping) = maps.next_mapping()? {
        if (mapping.start..mapping.end).contains(&address) {
            return Ok(Some(mapping));
        }
    }
    Ok(None)
}

/// Resident bytes per node of process `pid`, summed over at most
/// `max_lines` mappings of its numa_maps (huge pages counted at their
/// size); `None` when the file cannot be opened (exited, no permission,
/// kernel without NUMA). Malformed lines are skipped, a read error ends
/// the sum: callers show this as a refreshing estimate.
pub fn resident_bytes_by_node(root: &Root, pid: u32, max_lines: usize) -> Option<BTreeMap<u32, u64>> {
    let mut entries = numa_maps::NumaMapsFile::open(root, pid).ok()?.entries(max_lines as u64);
    let mut by_node = BTreeMap::new();
    loop {
        let entry = match entries.next_entry() {
            Ok(Some(entry)) => entry,
            Err(ReadError::Malformed { .. }) => continue,
            Ok(None) | Err(_) => break,
        };
        let page_bytes = entry.page_size_bytes();
        for (node, pages) in &entry.pages_by_node {
            let total: &mut u64 = by_node.entry(*node).or_default();
            *total = total.saturating_add(pages.saturating_mul(page_bytes));
        }
    }
    Some(by_node)
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
