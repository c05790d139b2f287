//! `proc/PID/maps` joined with `proc/PID/numa_maps`, one mapping at a time.
//!
//! The kernel spends most of an inspection generating numa_maps: it walks
//! every page table and formats a line per mapping, about 2 µs each, four
//! times what maps costs. So a second thread does nothing but read
//! numa_maps' raw bytes, and this thread reads maps and parses both files
//! meanwhile. Parsing on the reader thread was measured and lost: it made
//! the reader, already the longer of the two, longer still
//! (bench/RESULTS.md). Chunks go back to the reader for reuse, and the
//! channel is bounded, so memory stays flat however many mappings there are.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use crate::procfs::maps::{MapsCap, MapsStream};
use crate::procfs::numa_maps::{NumaMapsEntry, NumaMapsFile};
use crate::procfs::process::{classify, ProcessError, Vma, VmaStreamSummary};
use crate::root::Root;

/// Bytes per chunk the reader hands over. The kernel returns at most a
/// page per `read` of numa_maps, so a chunk is about 16 reads; large enough
/// that the channel costs nothing, small enough to start parsing early.
const CHUNK_BYTES: usize = 64 << 10;

/// Chunks in flight; with the ones being reused, the stream holds at most
/// about (CHUNKS_IN_FLIGHT + 2) × CHUNK_BYTES.
const CHUNKS_IN_FLIGHT: usize = 8;

/// Streams the mappings of process `pid` in address order, each with its
/// numa_maps line when there is one. `visit` borrows one [`Vma`] that the
/// stream fills in place, line after line: nothing is allocated or moved
/// per mapping (a path only when it changes).
pub fn for_each_vma(root: &Root, pid: u32, mut visit: impl FnMut(&Vma)) -> Result<VmaStreamSummary, ProcessError> {
    // Streamed uncapped: one mapping at a time is held, however many.
    let mut maps = MapsStream::open(root, pid, MapsCap::STREAMED)?;
    let numa_file = match NumaMapsFile::open(root, pid) {
        Ok(file) => Some(file),
        Err(e) if e.is_not_found() && crate::task::process_exists(root, pid) => None,
        Err(e) => return Err(classify(root, pid, e)),
    };
    let mut summary = VmaStreamSummary {
        numa_maps_available: numa_file.is_some(),
        ..VmaStreamSummary::default()
    };
    std::thread::scope(|scope| {
        let Some(file) = numa_file else {
            let mut vma = Vma::default();
            while maps.next_into(&mut vma.mapping)? {
                summary.vmas += 1;
                visit(&vma);
            }
            return Ok(summary);
        };
        let mut numa = file.entries_through(|file| chunks(scope, file), u64::MAX);
        let mut next_numa = |entry: &mut NumaMapsEntry| numa.next_into(entry).map_err(|e| classify(root, pid, e));
        // `vma.numa` always holds an entry: the numa_maps line read ahead,
        // `held` while it waits for its mapping.
        let mut vma = Vma {
            numa: Some(NumaMapsEntry::default()),
            ..Vma::default()
        };
        let mut held = false;
        while maps.next_into(&mut vma.mapping)? {
            let start = vma.mapping.start;
            let entry = vma.numa.get_or_insert_with(NumaMapsEntry::default);
            let joined = loop {
                if !held && !next_numa(entry)? {
                    break false;
                }
                held = true;
                if entry.start >= start {
                    break entry.start == start;
                }
                summary.unmatched_numa_lines += 1;
                held = false;
            };
            summary.vmas += 1;
            if joined {
                held = false;
                visit(&vma);
            } else {
                // Rare (a mapping numa_maps leaves out): the entry read
                // ahead waits outside while this mapping is shown alone.
                let ahead = vma.numa.take();
                visit(&vma);
                vma.numa = ahead;
            }
        }
        summary.unmatched_numa_lines += u64::from(held);
        let entry = vma.numa.get_or_insert_with(NumaMapsEntry::default);
        while next_numa(entry)? {
            summary.unmatched_numa_lines += 1;
        }
        Ok(summary)
    })
}

/// numa_maps' bytes as the reader thread hands them over; if the system
/// refuses a thread, the file is read on this one instead (slower, same
/// result).
fn chunks<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, file: File) -> Chunks {
    let file = Arc::new(file);
    let (sender, receiver) = sync_channel::<io::Result<Vec<u8>>>(CHUNKS_IN_FLIGHT);
    let (recycle, recycled) = sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT + 2);
    let shared = file.clone();
    let source = match std::thread::Builder::new()
        .name("numa_maps".into())
        .spawn_scoped(scope, move || read_chunks(&shared, &sender, &recycled))
    {
        Ok(_) => Source::Thread { receiver, recycle },
        Err(_) => Source::Inline(file),
    };
    Chunks {
        source,
        chunk: Vec::new(),
        consumed: 0,
    }
}

/// The reader thread: whole chunks of the file until its end, an error, or
/// the receiving side hanging up (it stopped early, on an error of its own).
fn read_chunks(file: &File, sender: &SyncSender<io::Result<Vec<u8>>>, recycled: &Receiver<Vec<u8>>) {
    loop {
        // A recycled chunk keeps its old bytes: `fill` overwrites them, and
        // zeroing 64 KiB per chunk first was wasted work.
        let mut chunk = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES));
        let filled = fill(file, &mut chunk);
        let at_end = matches!(filled, Ok(true));
        let message = filled.map(|_| chunk);
        let failed = message.is_err();
        let empty = matches!(&message, Ok(chunk) if chunk.is_empty());
        if (!empty && sender.send(message).is_err()) || at_end || failed {
            return;
        }
    }
}

/// Reads into `chunk` until it is nearly full (`Ok(false)`) or the file
/// ends (`Ok(true)`).
fn fill(mut file: &File, chunk: &mut Vec<u8>) -> io::Result<bool> {
    chunk.resize(CHUNK_BYTES, 0);
    let mut used = 0;
    let result = loop {
        if CHUNK_BYTES - used < 4096 {
            break Ok(false);
        }
        match file.read(&mut chunk[used..]) {
            Ok(0) => break Ok(true),
            Ok(read) => used += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(e),
        }
    };
    chunk.truncate(used);
    result
}

enum Source {
    Thread {
        receiver: Receiver<io::Result<Vec<u8>>>,
        recycle: SyncSender<Vec<u8>>,
    },
    /// No reader thread could be started: read on this one.
    Inline(Arc<File>),
}

/// The reader's chunks as one buffered stream.
struct Chunks {
    source: Source,
    chunk: Vec<u8>,
    consumed: usize,
}

impl Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
    }
}

impl BufRead for Chunks {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.consumed == self.chunk.len() {
            let (receiver, recycle) = match &self.source {
                Source::Thread { receiver, recycle } => (receiver, recycle),
                Source::Inline(file) => {
                    fill(file, &mut self.chunk)?;
                    self.consumed = 0;
                    return Ok(&self.chunk);
                }
            };
            match receiver.recv() {
                Ok(next) => {
                    let done = std::mem::replace(&mut self.chunk, next?);
                    // A full recycle channel only means the reader has
                    // enough buffers; this one is then simply freed.
                    let _ = recycle.try_send(done);
                    self.consumed = 0;
                }
                // The reader hung up: the file has ended.
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.chunk[self.consumed..])
    }

    fn consume(&mut self, amount: usize) {
        self.consumed = (self.consumed + amount).min(self.chunk.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::process::LineStream;

    /// `lines` numa_maps-like lines, each a different length, so lines
    /// straddle the chunk borders at every offset.
    fn text(lines: usize) -> String {
        (0..lines)
            .map(|i| {
                format!(
                    "{:x} default anon={i} N0={} {}\n",
                    0x1000 * (i + 1),
                    i * 3,
                    "x".repeat(i % 97)
                )
            })
            .collect()
    }

    fn read_all(mut lines: LineStream<Chunks>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line.to_string());
        }
        out
    }

    fn file_with(contents: &str) -> (tempfile::NamedTempFile, File) {
        let mut temp = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut temp, contents.as_bytes()).unwrap();
        let file = File::open(temp.path()).unwrap();
        (temp, file)
    }

    #[test]
    fn lines_survive_chunk_borders_through_the_thread() {
        // About 15 chunks: more than are in flight, so buffers are reused.
        let contents = text(12_000);
        assert!(contents.len() > (CHUNKS_IN_FLIGHT + 4) * CHUNK_BYTES);
        let (_temp, file) = file_with(&contents);
        let expected: Vec<String> = contents.lines().map(str::to_string).collect();
        let got = std::thread::scope(|scope| read_all(LineStream::new(chunks(scope, file), "proc/1/numa_maps")));
        assert_eq!(got, expected);
    }

    #[test]
    fn without_a_thread_the_file_is_read_in_place() {
        let contents = text(3_000);
        let (_temp, file) = file_with(&contents);
        let chunks = Chunks {
            source: Source::Inline(Arc::new(file)),
            chunk: Vec::new(),
            consumed: 0,
        };
        let expected: Vec<String> = contents.lines().map(str::to_string).collect();
        assert_eq!(read_all(LineStream::new(chunks, "proc/1/numa_maps")), expected);
    }

    #[test]
    fn a_receiver_that_stops_early_does_not_hang_the_reader() {
        let (_temp, file) = file_with(&text(12_000));
        std::thread::scope(|scope| {
            let mut numa = LineStream::new(chunks(scope, file), "proc/1/numa_maps");
            assert!(numa.next_line().unwrap().is_some());
            // Dropped here with most of the file unread: the scope only
            // ends if the reader notices and stops.
        });
    }
}
