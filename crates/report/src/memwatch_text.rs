//! `memwatch` as text, JSON lines and an SVG chart. Per-node figures and
//! machine-wide reclaim are printed apart, so no node wears another's
//! reclaim.

use numasleuth_analyze::memwatch::{Event, MachineRow, NodeSample, Row, Sample};
use serde_json::{json, Value};

use crate::lab_svg::ChartError;
use crate::svg_chart::{line_chart, Series};

pub const SCHEMA: &str = "numasleuth.memwatch/2";

fn per_sec(rate: Option<f64>) -> String {
    rate.map_or("?".to_string(), |v| format!("{v:.0}"))
}

/// The first text line: what is watched, how often, and the page size.
pub fn header(nodes: usize, interval: std::time::Duration, duration: std::time::Duration, page_bytes: u64) -> String {
    format!(
        "watching {nodes} node(s) every {} for {}; pages are the kernel's base pages of {}\n",
        crate::format::duration(interval),
        crate::format::duration(duration),
        crate::format::bytes(page_bytes)
    )
}

/// One interval: a line per node, one machine-wide line, then events.
pub fn render_sample(rows: &[Row], machine: &MachineRow, events: &[Event], page_bytes: u64) -> String {
    let mut text = String::new();
    let size = |pages: u64| crate::format::bytes(pages.saturating_mul(page_bytes));
    for r in rows {
        text.push_str(&format!(
            "t={:>7.1}s node {}: free {} ({} pages; low {}, min {}, high {}), numa_miss {}/s, numa_foreign {}/s",
            r.t_s,
            r.node,
            size(r.free_pages),
            r.free_pages,
            size(r.low_pages),
            size(r.min_pages),
            size(r.high_pages),
            per_sec(r.numa_miss_per_sec),
            per_sec(r.numa_foreign_per_sec)
        ));
        // Only kernels that count reclaim per node (nodeN/vmstat) get it here.
        if r.kswapd_scan_per_sec.is_some() || r.direct_scan_per_sec.is_some() {
            text.push_str(&format!(
                ", node kswapd scan {}/s, node direct scan {}/s",
                per_sec(r.kswapd_scan_per_sec),
                per_sec(r.direct_scan_per_sec)
            ));
        }
        text.push('\n');
    }
    text.push_str(&format!(
        "t={:>7.1}s machine-wide: kswapd scan {:.0}/s steal {:.0}/s, direct scan {:.0}/s steal {:.0}/s, \
         allocation stalls {:.0}/s{}\n",
        machine.t_s,
        machine.kswapd_scan_per_sec,
        machine.kswapd_steal_per_sec,
        machine.direct_scan_per_sec,
        machine.direct_steal_per_sec,
        machine.allocstall_per_sec,
        machine.oom_kills.map_or(String::new(), |n| format!(", OOM kills {n}"))
    ));
    for e in events {
        text.push_str(&format!("event: {}\n", e.message));
    }
    text
}

/// A snapshot's one instant (`memwatch --root`): each node's free pages
/// and watermarks, and the machine's reclaim counters since boot. No
/// rates: they need two samples, and a snapshot holds one moment.
pub fn render_instant(sample: &Sample, page_bytes: Option<u64>) -> String {
    let amount = |pages: u64| match page_bytes {
        Some(page) => format!("{} ({pages} pages)", crate::format::bytes(pages.saturating_mul(page))),
        None => format!("{pages} pages"),
    };
    let mut text = String::from(
        "one instant, from a snapshot: no rates (they need two samples; watch the live system for them)\n",
    );
    if page_bytes.is_none() {
        text.push_str("page size unknown: the snapshot does not record it, so counts stay in pages\n");
    }
    for n in &sample.nodes {
        text.push_str(&format!(
            "node {}: free {}; low {}, min {}, high {}\n",
            n.node,
            amount(n.free_pages),
            amount(n.low_pages),
            amount(n.min_pages),
            amount(n.high_pages)
        ));
    }
    let m = &sample.machine;
    text.push_str(&format!(
        "machine-wide since boot: kswapd scan {} steal {}, direct scan {} steal {}, allocation stalls {}{}\n",
        m.pgscan_kswapd,
        m.pgsteal_kswapd,
        m.pgscan_direct,
        m.pgsteal_direct,
        m.allocstall,
        m.oom_kill.map_or(String::new(), |n| format!(", OOM kills {n}"))
    ));
    text
}

/// The one JSON record of `memwatch --root`: the instant as read, in
/// pages, and the page size when the snapshot records it.
pub fn instant_json(sample: &Sample, page_bytes: Option<u64>) -> Value {
    json!({"schema": SCHEMA, "type": "instant", "base_page_bytes": page_bytes,
           "nodes": sample.nodes, "machine_since_boot": sample.machine,
           "zone_reclaim_mode": sample.zone_reclaim_mode})
}

/// `memwatch --root`: one instant, as text or as one JSON line (the stream
/// format of `--json`, with its provenance in that one record).
pub struct InstantReport {
    pub sample: Sample,
    pub page_bytes: Option<u64>,
}

impl crate::export::Exporter for InstantReport {
    fn json(&self, provenance: &crate::provenance::Provenance) -> serde_json::Result<String> {
        let mut line = first_record(&instant_json(&self.sample, self.page_bytes), provenance)?;
        line.push('\n');
        Ok(line)
    }
    fn text(&self, _layout: &crate::layout::TextLayout) -> String {
        render_instant(&self.sample, self.page_bytes)
    }
}

/// One JSON line per interval.
pub fn sample_json(rows: &[Row], machine: &MachineRow, events: &[Event]) -> Value {
    json!({"schema": SCHEMA, "type": "sample", "t_s": machine.t_s,
           "nodes": rows, "machine": machine, "events": events})
}

/// What taking one sample cost, derived in analyze.
pub use numasleuth_analyze::memwatch::Cost;

/// The last JSON line: what sampling cost (`None` when stopped before a
/// second sample was taken) and how the run ended.
pub fn summary_json(samples: usize, cost: Option<Cost>, run: &numasleuth_model::stop::RunSpan) -> Value {
    json!({"schema": SCHEMA, "type": "summary", "samples": samples,
           "sampling_cost_us": cost.map(|c| json!({"median": c.median_us, "max": c.max_us})),
           "cost_share_of_interval_percent": cost.map(|c| c.share_of_interval_percent), "run": run})
}

/// The last text lines: how the run ended when it was cut short, and what
/// sampling cost.
pub fn summary_text(cost: Option<Cost>, run: &numasleuth_model::stop::RunSpan) -> String {
    let mut text = String::new();
    if let Some(line) = crate::provenance::run_line(run) {
        text.push_str(&line);
        text.push('\n');
    }
    match cost {
        Some(c) => text.push_str(&format!(
            "sampling cost: median {:.0} µs, max {:.0} µs per sample ({:.3}% of the interval)\n",
            c.median_us, c.max_us, c.share_of_interval_percent
        )),
        None => text.push_str("stopped before a second sample: no rates\n"),
    }
    text
}

/// Free pages against the low and min watermarks per node, plus the
/// machine-wide kswapd and direct scan rates (pages/s, so they share the
/// page axis).
pub fn chart(history: &[Sample]) -> String {
    let mut series = Vec::new();
    let nodes: Vec<u32> = history
        .first()
        .map(|s| s.nodes.iter().map(|n| n.node).collect())
        .unwrap_or_default();
    for node in nodes {
        let points = |pick: fn(&NodeSample) -> u64| -> Vec<(f64, f64)> {
            history
                .iter()
                .filter_map(|s| s.nodes.iter().find(|n| n.node == node).map(|n| (s.t_s, pick(n) as f64)))
                .collect()
        };
        for (label, pick, dashed) in [
            ("free", (|n: &NodeSample| n.free_pages) as fn(&NodeSample) -> u64, false),
            ("low", |n| n.low_pages, true),
            ("min", |n| n.min_pages, true),
        ] {
            series.push(Series {
                name: format!("node {node} {label}"),
                points: points(pick),
                dashed,
            });
        }
    }
    for (label, pick) in [
        (
            "kswapd scan/s (machine-wide)",
            (|s: &Sample| s.machine.pgscan_kswapd) as fn(&Sample) -> u64,
        ),
        ("direct scan/s (machine-wide)", |s| s.machine.pgscan_direct),
    ] {
        let points: Vec<(f64, f64)> = history
            .windows(2)
            .map(|w| {
                let dt_s = (w[1].t_s - w[0].t_s).max(1e-9);
                (w[1].t_s, pick(&w[1]).saturating_sub(pick(&w[0])) as f64 / dt_s)
            })
            .collect();
        series.push(Series {
            name: label.to_string(),
            points,
            dashed: false,
        });
    }
    line_chart(
        "free pages against watermarks; reclaim",
        "time (s)",
        "pages or pages/s",
        &series,
    )
}

/// A whole `memwatch` run, for the files `-o` writes at its end: the text
/// as it was printed, the JSON lines (provenance in the first), and the
/// samples the chart is drawn from. Each part is kept only when a file
/// needs it, so a long run without `-o` holds nothing.
#[derive(Debug, Default)]
pub struct MemwatchReport {
    pub text: String,
    pub records: Vec<Value>,
    pub history: Vec<Sample>,
}

impl crate::export::Exporter for MemwatchReport {
    const EXTRA: &'static [crate::export::Format] = &[crate::export::Format::Svg];

    fn json(&self, provenance: &crate::provenance::Provenance) -> serde_json::Result<String> {
        let mut out = String::new();
        for (i, record) in self.records.iter().enumerate() {
            let line = if i == 0 {
                first_record(record, provenance)?
            } else {
                serde_json::to_string(record)?
            };
            out.push_str(&line);
            out.push('\n');
        }
        Ok(out)
    }
    fn text(&self, _layout: &crate::layout::TextLayout) -> String {
        self.text.clone()
    }
    fn svg(&self) -> Option<Result<String, ChartError>> {
        Some(Ok(chart(&self.history)))
    }
}

/// The first record of a JSON-lines stream, carrying the provenance.
pub fn first_record(record: &Value, provenance: &crate::provenance::Provenance) -> serde_json::Result<String> {
    let mut record = record.clone();
    if let Value::Object(map) = &mut record {
        map.insert("provenance".into(), serde_json::to_value(provenance)?);
    }
    serde_json::to_string(&record)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    /// Issue 36: the header said "every 1000 ms for 60000 ms".
    #[test]
    fn the_header_says_spans_as_people_do() {
        let text = super::header(2, Duration::from_secs(1), Duration::from_secs(60), 4096);
        assert!(text.starts_with("watching 2 node(s) every 1 s for 1 min;"), "{text}");
    }
}
