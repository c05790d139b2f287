//! `probe-latency` as text, JSON (`numasleuth.probe_latency/1`) and an SVG
//! timeline. Corrected and uncorrected figures always appear side by side:
//! the gap between them is the point of the probe.

use numasleuth_analyze::latency_spikes::{Bucket, Spike};
use numasleuth_analyze::readers::name_with_parent;
use numasleuth_analyze::spike_readers::describe;
use serde_json::{json, Map, Value};

use crate::svg_chart::{line_chart, Series};

/// Memory events listed in the JSON, the first ones.
pub const JSON_EVENTS: usize = 1000;
/// Lock-file opens listed in the JSON, the first ones.
pub const JSON_READS: usize = 10_000;
/// Spikes listed in text, the largest ones.
const TEXT_SPIKES: usize = 10;
pub const SCHEMA: &str = "numasleuth.probe_latency/1";
pub use numasleuth_analyze::latency_summary::{Summary, PERCENTILES};

pub use numasleuth_analyze::probe_latency::{ProbeReaders, ProbeReport};

fn human_ns(ns: f64) -> String {
    match ns {
        ns if ns >= 1e9 => format!("{:.2} s", ns / 1e9),
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

pub fn text(r: &ProbeReport, layout: &crate::layout::TextLayout) -> String {
    let mut out = format!(
        "probe-latency: {} at {}/s for {:.1} s: {} operations in {:.2} s\n\n",
        r.op, r.rate_per_sec, r.duration_s, r.samples, r.wall_s
    );
    let mut rows = vec![vec![
        "latency".to_string(),
        "corrected (from intended start)".to_string(),
        "uncorrected (from actual start)".to_string(),
    ]];
    for (i, (label, _)) in PERCENTILES.iter().enumerate() {
        rows.push(vec![
            format!("p{label}"),
            human_ns(r.corrected.percentiles_ns[i] as f64),
            human_ns(r.uncorrected.percentiles_ns[i] as f64),
        ]);
    }
    for (label, pick) in [
        ("min", (|s: &Summary| s.min_ns as f64) as fn(&Summary) -> f64),
        ("max", |s| s.max_ns as f64),
        ("mean", |s| s.mean_ns),
        ("stdev", |s| s.stdev_ns),
    ] {
        rows.push(vec![
            label.to_string(),
            human_ns(pick(&r.corrected)),
            human_ns(pick(&r.uncorrected)),
        ]);
    }
    out.push_str(&crate::table::columns(&rows, layout));
    if r.not_issued > 0 {
        let why = if r.interrupted {
            "interrupted"
        } else {
            "the operation could not keep up with --rate, so the corrected figures undercount"
        };
        out.push_str(&format!("\n{} operations were never issued ({why})\n", r.not_issued));
    }
    out.push_str(&format!(
        "\nspikes (worst latency of a {} slice ≥ 10× the corrected median {}):{}\n",
        human_ns(r.bucket_s * 1e9),
        human_ns(r.corrected.percentiles_ns[0] as f64),
        if r.spikes.is_empty() { " none" } else { "" }
    ));
    out.push_str(&spike_lines(&r.spikes));
    out.push_str(&format!(
        "\nmemory signals (zoneinfo, numastat, vmstat): {} samples every {}, {} event{}\n",
        r.signal_samples,
        human_ns(r.signal_interval_s * 1e9),
        r.signal_events,
        if r.signal_events == 1 { "" } else { "s" }
    ));
    for note in &r.signal_notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(&readers_line(r));
    out
}

/// One line on the lock-file readers recorded during the run.
fn readers_line(r: &ProbeReport) -> String {
    let Some(readers) = &r.readers else {
        return format!(
            "\nlock-file readers: {}\n",
            r.readers_note.as_deref().unwrap_or("not recorded")
        );
    };
    let s = &readers.summary;
    let mut line = format!(
        "\nlock-file readers (by {}): {} opens by {} reader(s)",
        s.method.name(),
        s.opens,
        s.readers.len()
    );
    for reader in s.readers.iter().take(3) {
        let files: Vec<String> = reader.files.iter().map(|f| f.file.path()).collect();
        line.push_str(&format!(
            "; {} ×{} ({})",
            numasleuth_parse::error::escape(&name_with_parent(reader)),
            reader.opens,
            files.join(", ")
        ));
    }
    line.push('\n');
    for note in &s.notes {
        line.push_str(&format!("note: {note}\n"));
    }
    line
}

/// The reads in the JSON: each open with who made it.
fn reads_json(readers: &ProbeReaders) -> Value {
    let comm = |pid: u32| {
        readers
            .raw
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .map(|p| p.comm.clone())
    };
    json!({
        "method": readers.summary.method,
        "opens_total": readers.summary.opens,
        "readers": readers.summary.readers,
        "opens": readers.raw.opens.iter().take(JSON_READS).map(|o| json!({
            "t_s": o.t_s, "pid": o.pid, "tid": o.tid, "comm": comm(o.pid), "file": o.file, "target": o.target,
        })).collect::<Vec<_>>(),
        "notes": readers.summary.notes,
    })
}

/// The largest few spikes in time order; every one is in --json.
fn spike_lines(spikes: &[Spike]) -> String {
    let mut out = String::new();
    let mut shown: Vec<&Spike> = spikes.iter().collect();
    shown.sort_by_key(|s| std::cmp::Reverse(s.latency_ns));
    shown.truncate(TEXT_SPIKES);
    shown.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    for spike in shown {
        let label = spike.percentile.as_deref().map_or("".into(), |p| format!("p{p} "));
        let mut events = if spike.coincident_events.is_empty() {
            "no memory event around it".to_string()
        } else {
            spike.coincident_events.join(", ")
        };
        for read in &spike.readers {
            events.push_str("; ");
            events.push_str(&numasleuth_parse::error::escape(&describe(read)));
        }
        out.push_str(&format!(
            "  {label}spike {} at t={:.3} s: {events}\n",
            human_ns(spike.latency_ns as f64),
            spike.t_s
        ));
    }
    if spikes.len() > TEXT_SPIKES {
        out.push_str(&format!(
            "  … and {} smaller ones (all in --json)\n",
            spikes.len() - TEXT_SPIKES
        ));
    }
    out
}

fn percentiles_json(s: &Summary) -> Value {
    let mut map = Map::new();
    for (i, (label, _)) in PERCENTILES.iter().enumerate() {
        map.insert(label.to_string(), json!(s.percentiles_ns[i]));
    }
    map.insert("max".into(), json!(s.max_ns));
    Value::Object(map)
}

fn spread_json(s: &Summary) -> Value {
    json!({"min_ns": s.min_ns, "mean_ns": s.mean_ns, "stdev_ns": s.stdev_ns})
}

pub fn json(r: &ProbeReport) -> Value {
    json!({
        "schema": SCHEMA,
        "op": r.op,
        "rate_per_sec": r.rate_per_sec,
        "duration_s": r.duration_s,
        "wall_s": r.wall_s,
        "corrected": true,
        "samples": r.samples,
        "not_issued": r.not_issued,
        "interrupted": r.interrupted,
        "percentiles_ns": percentiles_json(&r.corrected),
        "uncorrected_percentiles_ns": percentiles_json(&r.uncorrected),
        "spread": {"corrected": spread_json(&r.corrected), "uncorrected": spread_json(&r.uncorrected)},
        "spikes": r.spikes.iter().map(|s| json!({
            "t_s": s.t_s, "latency_ns": s.latency_ns, "percentile": s.percentile,
            "coincident_events": s.coincident_events, "readers": s.readers,
        })).collect::<Vec<_>>(),
        "readers": r.readers.as_ref().map(reads_json),
        "readers_note": r.readers_note,
        "timeline": {
            "bucket_s": r.bucket_s,
            "buckets": r.buckets.iter().filter(|b| b.count > 0).map(|b| json!({
                "start_s": b.start_s, "count": b.count,
                "max_corrected_ns": b.max_corrected_ns, "max_uncorrected_ns": b.max_uncorrected_ns,
            })).collect::<Vec<_>>(),
        },
        "signals": {"samples": r.signal_samples, "interval_s": r.signal_interval_s,
                    "events": r.signal_events, "notes": r.signal_notes,
                    "event_list": r.events.iter().take(JSON_EVENTS)
                        .map(|e| json!({"t_s": e.t_s, "message": e.message})).collect::<Vec<_>>()},
    })
}

pub fn svg(r: &ProbeReport) -> String {
    let points = |pick: fn(&Bucket) -> u64| -> Vec<(f64, f64)> {
        r.buckets
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| (b.start_s, pick(b) as f64 / 1e6))
            .collect()
    };
    let series = [
        Series {
            name: "corrected (worst per slice)".into(),
            points: points(|b| b.max_corrected_ns),
            dashed: false,
        },
        Series {
            name: "uncorrected (worst per slice)".into(),
            points: points(|b| b.max_uncorrected_ns),
            dashed: true,
        },
    ];
    line_chart(&format!("probe-latency: {}", r.op), "time (s)", "latency (ms)", &series)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_analyze::memwatch::Event;

    fn summary(base: u64) -> Summary {
        Summary {
            percentiles_ns: (1..=5).map(|i| base * i).collect(),
            min_ns: 1,
            max_ns: base * 100,
            mean_ns: base as f64,
            stdev_ns: 2.0,
        }
    }

    fn report() -> ProbeReport {
        ProbeReport {
            op: "alloc-touch".into(),
            rate_per_sec: 1000,
            duration_s: 2.0,
            wall_s: 2.01,
            samples: 2000,
            not_issued: 0,
            interrupted: false,
            corrected: summary(1_000_000),
            uncorrected: summary(1_000),
            bucket_s: 0.01,
            buckets: vec![Bucket {
                start_s: 0.5,
                count: 10,
                max_corrected_ns: 300_000_000,
                max_uncorrected_ns: 9_000,
                max_at_s: 0.5,
            }],
            spikes: vec![Spike {
                t_s: 0.5,
                latency_ns: 300_000_000,
                percentile: Some("99.9".into()),
                coincident_events: vec!["kswapd scanned 5 pages (3 ms earlier)".into()],
                readers: vec![],
            }],
            signal_samples: 10,
            signal_interval_s: 0.2,
            signal_events: 1,
            events: vec![Event {
                t_s: 0.497,
                node: None,
                kind: numasleuth_analyze::memwatch::EventKind::KswapdScan,
                message: "kswapd scanned 5 pages".into(),
            }],
            signal_notes: vec![],
            readers: None,
            readers_note: Some("not recorded (--no-readers)".into()),
        }
    }

    #[test]
    fn json_carries_the_schema_fields() {
        let v = json(&report());
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["corrected"], true);
        assert_eq!(v["percentiles_ns"]["99.99"], 5_000_000);
        assert_eq!(v["percentiles_ns"]["max"], 100_000_000);
        assert_eq!(v["uncorrected_percentiles_ns"]["50"], 1_000);
        assert_eq!(
            v["spikes"][0]["coincident_events"][0],
            "kswapd scanned 5 pages (3 ms earlier)"
        );
        assert_eq!(v["timeline"]["buckets"][0]["max_corrected_ns"], 300_000_000);
        assert_eq!(v["signals"]["event_list"][0]["message"], "kswapd scanned 5 pages");
    }

    #[test]
    fn text_shows_both_columns_and_the_spike() {
        let t = text(&report(), &crate::layout::TextLayout::new(200, false));
        assert!(t.contains("p99.99"), "{t}");
        assert!(t.contains("5.00 ms") && t.contains("5.0 µs"), "{t}");
        assert!(
            t.contains("p99.9 spike 300.00 ms at t=0.500 s: kswapd scanned 5 pages"),
            "{t}"
        );
        assert!(svg(&report()).starts_with("<svg"));
    }
}
