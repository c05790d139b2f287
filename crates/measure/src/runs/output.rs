//! What a workload printed, kept bounded: the last lines (for an error
//! message) and the last line the metric pattern matched. A benchmark that
//! prints gigabytes costs us a few kilobytes.

use std::collections::VecDeque;

use serde::Serialize;

/// Bytes of one line kept; the rest of a longer line is dropped (and the
/// line marked with `…`), so a line without newlines cannot grow memory.
pub const LINE_MAX_BYTES: usize = 4096;
/// Lines of tail kept per run.
pub const TAIL_MAX_LINES: usize = 64;
/// Bytes of tail kept per run, whatever the line count.
pub const TAIL_MAX_BYTES: usize = 64 * 1024;

/// The bounded record of a run's stdout and stderr (one pipe, interleaved
/// as the workload wrote them, like `2>&1`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Output {
    /// The last lines, oldest first.
    pub tail: Vec<String>,
    /// The last line the metric pattern matched, and its 1-based number.
    pub last_match: Option<(u64, String)>,
    pub lines_total: u64,
    pub bytes_total: u64,
    /// Lines cut at [`LINE_MAX_BYTES`].
    pub lines_truncated: u64,
    /// Why reading stopped before end of file, if it did.
    pub note: Option<String>,
}

/// Splits a byte stream into lines and keeps what [`Output`] promises.
pub struct LineSink<'a> {
    matches: &'a (dyn Fn(&str) -> bool + Sync),
    line: Vec<u8>,
    line_cut: bool,
    tail: VecDeque<String>,
    tail_bytes: usize,
    out: Output,
}

impl<'a> LineSink<'a> {
    pub fn new(matches: &'a (dyn Fn(&str) -> bool + Sync)) -> Self {
        LineSink {
            matches,
            line: Vec::new(),
            line_cut: false,
            tail: VecDeque::new(),
            tail_bytes: 0,
            out: Output::default(),
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.out.bytes_total += bytes.len() as u64;
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match chunk.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (chunk, false),
            };
            let room = LINE_MAX_BYTES.saturating_sub(self.line.len());
            self.line.extend_from_slice(&body[..body.len().min(room)]);
            self.line_cut |= body.len() > room;
            if ends {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        let mut text = String::from_utf8_lossy(&self.line).trim_end_matches('\r').to_string();
        if self.line_cut {
            text.push('…');
            self.out.lines_truncated += 1;
        }
        self.line.clear();
        self.line_cut = false;
        self.out.lines_total += 1;
        if (self.matches)(&text) {
            self.out.last_match = Some((self.out.lines_total, text.clone()));
        }
        self.tail_bytes += text.len();
        self.tail.push_back(text);
        while self.tail.len() > TAIL_MAX_LINES || self.tail_bytes > TAIL_MAX_BYTES {
            let Some(old) = self.tail.pop_front() else { break };
            self.tail_bytes -= old.len();
        }
    }

    /// The record; a last line without a newline still counts.
    pub fn finish(mut self, note: Option<String>) -> Output {
        if !self.line.is_empty() || self.line_cut {
            self.end_line();
        }
        self.out.tail = self.tail.into_iter().collect();
        self.out.note = note;
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contains_value(line: &str) -> bool {
        line.contains("value")
    }

    #[test]
    fn lines_split_across_chunks_and_the_last_match_wins() {
        let mut sink = LineSink::new(&contains_value);
        for chunk in ["val", "ue 1\nnoise\r\nvalue", " 2\nmore\nlast without newline"] {
            sink.feed(chunk.as_bytes());
        }
        let out = sink.finish(None);
        assert_eq!(out.last_match, Some((3, "value 2".to_string())));
        assert_eq!(
            out.tail,
            ["value 1", "noise", "value 2", "more", "last without newline"]
        );
        assert_eq!(out.lines_total, 5);
    }

    #[test]
    fn a_huge_line_and_a_flood_of_lines_stay_bounded() {
        let mut sink = LineSink::new(&contains_value);
        let huge = vec![b'x'; 10 * LINE_MAX_BYTES];
        sink.feed(&huge);
        sink.feed(b"\n");
        for i in 0..100_000 {
            sink.feed(format!("line {i}\n").as_bytes());
        }
        let out = sink.finish(None);
        assert_eq!(out.lines_truncated, 1);
        assert_eq!(out.tail.len(), TAIL_MAX_LINES);
        assert_eq!(out.tail.last().unwrap(), "line 99999");
        assert!(out.tail.iter().map(String::len).sum::<usize>() <= TAIL_MAX_BYTES);
        assert_eq!(out.lines_total, 100_001);
        assert!(out.last_match.is_none());
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let mut sink = LineSink::new(&contains_value);
        sink.feed(b"value \xff 3\n");
        assert_eq!(sink.finish(None).last_match.unwrap().1, "value \u{fffd} 3");
    }
}
