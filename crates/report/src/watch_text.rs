//! `watch` for people: the rate first, then who writes (function and
//! file:line, most samples first), then each thread's rate.

use numasleuth_analyze::watch::WatchSummary;
use numasleuth_model::perf::watch::Access;

use crate::layout::TextLayout;
use crate::table::{columns, table, Col};

/// Rows of the writers table beyond which the rest are summed.
const TOP_WRITERS: usize = 10;

fn per_sec(rate: f64) -> String {
    match rate {
        r if r >= 1e6 => format!("{:.2} M/s", r / 1e6),
        r if r >= 1e3 => format!("{:.1} k/s", r / 1e3),
        r => format!("{r:.1} /s"),
    }
}

pub fn render(s: &WatchSummary, layout: &TextLayout) -> String {
    let noun = match s.access {
        Access::Write => "writes",
        Access::ReadWrite => "accesses",
    };
    let what = match (&s.symbol, &s.object) {
        (Some(symbol), Some(object)) => format!("{symbol} ({object}) at {:#x}", s.address),
        (Some(symbol), None) => format!("{symbol} at {:#x}", s.address),
        _ => format!("{:#x}", s.address),
    };
    let mut out = format!(
        "watch {what}, {} byte(s), process {}, {:.1} s: {} {noun} ({}) by {}\n",
        s.len_bytes,
        s.pid,
        s.duration_s,
        s.writes_total,
        per_sec(s.writes_per_sec),
        writing_threads(s)
    );
    if !s.writers.is_empty() {
        writers_table(s, layout, &mut out);
    }
    out.push_str(&format!("\nthreads ({noun} per second while watched):\n"));
    threads_table(s, layout, &mut out);
    for note in &s.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// `1 of 3 watched threads`: the threads that did write, not just those
/// that were watched.
fn writing_threads(s: &WatchSummary) -> String {
    let wrote = s.threads.iter().filter(|t| t.writes > 0).count();
    let watched = s.threads.len();
    let plural = if watched == 1 { "" } else { "s" };
    format!("{wrote} of {watched} watched thread{plural}")
}

/// Who writes, most samples first: function, source line, address.
fn writers_table(s: &WatchSummary, layout: &TextLayout, out: &mut String) {
    // `--rw` samples reads as well as writes: the code is not all writers.
    let who = match s.access {
        Access::Write => "writers",
        Access::ReadWrite => "readers and writers",
    };
    out.push_str(&format!("\n{who} ({} samples, most first):\n", s.samples_total));
    let mut rows = vec![vec![
        "samples".to_string(),
        "share".to_string(),
        "function".to_string(),
        "source".to_string(),
        "at".to_string(),
    ]];
    for w in s.writers.iter().take(TOP_WRITERS) {
        let mut function = w.function.clone().unwrap_or_else(|| "?".into());
        if let Some(outer) = &w.inlined_into {
            function.push_str(&format!(" (inlined into {outer})"));
        }
        let source = match (&w.file, w.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => "-".into(),
        };
        let at = w
            .symbol
            .clone()
            .or_else(|| w.addresses.first().map(|a| format!("{a:#x}")))
            .unwrap_or_default();
        rows.push(vec![
            w.samples.to_string(),
            format!("{:.1}%", w.share * 100.0),
            function,
            source,
            at,
        ]);
    }
    let kinds = [Col::Wrap, Col::Wrap, Col::Name, Col::Path, Col::Name];
    for row in table(&rows, &kinds, &layout.indented(2)).lines() {
        out.push_str(&format!("  {row}\n"));
    }
    let rest: u64 = s.writers.iter().skip(TOP_WRITERS).map(|w| w.samples).sum();
    if rest > 0 {
        out.push_str(&format!("  … {rest} more samples at other places\n"));
    }
}

/// Each thread's count and rate, and when it joined or left.
fn threads_table(s: &WatchSummary, layout: &TextLayout, out: &mut String) {
    let mut rows = Vec::new();
    for t in &s.threads {
        let mut when = String::new();
        if t.attached_at_s >= 0.05 {
            when.push_str(&format!("joined at {:.1} s", t.attached_at_s));
        }
        if t.exited {
            when.push_str(if when.is_empty() { "exited" } else { ", exited" });
        }
        rows.push(vec![
            format!("tid {}", t.tid),
            t.writes.to_string(),
            per_sec(t.writes_per_sec),
            when,
        ]);
    }
    for row in columns(&rows, &layout.indented(2)).lines() {
        out.push_str(&format!("  {row}\n"));
    }
}

#[cfg(test)]
mod tests {
    use numasleuth_analyze::watch::{ThreadRate, WatchSummary, Writer};
    use numasleuth_model::perf::watch::Access;

    fn thread(tid: u32, writes: u64) -> ThreadRate {
        ThreadRate {
            tid,
            writes,
            writes_per_sec: writes as f64,
            watched_s: 1.0,
            attached_at_s: 0.0,
            exited: false,
        }
    }

    fn summary(access: Access, writers: Vec<Writer>) -> WatchSummary {
        WatchSummary {
            pid: 7,
            address: 0x1000,
            symbol: None,
            object: None,
            len_bytes: 8,
            access,
            duration_s: 1.0,
            writes_total: 10,
            writes_per_sec: 10.0,
            threads: vec![thread(7, 0), thread(8, 10), thread(9, 0)],
            writers,
            samples_total: 10,
            lost_samples: 0,
            threads_missed: 0,
            process_exited: false,
            notes: Vec::new(),
        }
    }

    /// Issue 36: `watch --rw` titled its table of reading and writing
    /// code "writers".
    #[test]
    fn the_code_table_is_titled_by_what_was_watched() {
        let writer = Writer {
            function: Some("apply_op".into()),
            inlined_into: None,
            symbol: None,
            object: None,
            file: None,
            path: None,
            line: None,
            addresses: vec![0x401000],
            samples: 10,
            share: 1.0,
            tids: vec![8],
        };
        let layout = crate::layout::TextLayout::default();
        let text = super::render(&summary(Access::ReadWrite, vec![writer.clone()]), &layout);
        assert!(text.contains("\nreaders and writers (10 samples"), "{text}");
        assert!(text.contains("10 accesses"), "{text}");
        let text = super::render(&summary(Access::Write, vec![writer]), &layout);
        assert!(text.contains("\nwriters (10 samples"), "{text}");
    }

    #[test]
    fn the_header_counts_the_threads_that_wrote_of_those_watched() {
        let summary = WatchSummary {
            pid: 7,
            address: 0x1000,
            symbol: None,
            object: None,
            len_bytes: 8,
            access: Access::Write,
            duration_s: 1.0,
            writes_total: 10,
            writes_per_sec: 10.0,
            threads: vec![thread(7, 0), thread(8, 10), thread(9, 0)],
            writers: Vec::new(),
            samples_total: 0,
            lost_samples: 0,
            threads_missed: 0,
            process_exited: false,
            notes: Vec::new(),
        };
        let text = super::render(&summary, &crate::layout::TextLayout::default());
        let header = text.lines().next().unwrap();
        assert!(
            header.ends_with("10 writes (10.0 /s) by 1 of 3 watched threads"),
            "{header}"
        );
    }
}
