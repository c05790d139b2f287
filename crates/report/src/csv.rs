//! `--csv`: one flat table for spreadsheets and plotting, one row per
//! measured cell, units in the column names.

use numasleuth_analyze::stats::Summary;

use numasleuth_analyze::c2c_document::C2cDocument;
use numasleuth_analyze::mem_document::MemDocument;

const HEADER: &str = "kind,initiator,target,size_bytes,delay_ns,median,p10,p90,samples,unit\n";

/// Where a row's figure came from: kind, initiator, target, size_bytes,
/// delay_ns (empty where they do not apply).
struct Key<'a> {
    kind: &'a str,
    from: String,
    to: String,
    size_bytes: String,
    delay_ns: String,
}

/// A figure with the precision it has: whole units from 1,000 up (bytes
/// per second, large ns), three decimals below. Never `230.29399999999998`.
fn fixed(value: f64) -> String {
    if value.abs() >= 1000.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.3}")
    }
}

fn row(out: &mut String, key: Key<'_>, s: &Summary, unit: &str) {
    out.push_str(&format!(
        "{},{},{},{},{},{},{},{},{},{unit}\n",
        key.kind,
        key.from,
        key.to,
        key.size_bytes,
        key.delay_ns,
        fixed(s.median),
        fixed(s.p10),
        fixed(s.p90),
        s.samples
    ));
}

fn matrix(
    out: &mut String,
    kind: &str,
    rows: &[u32],
    columns: &[u32],
    cells: &[Vec<Option<Summary>>],
    size: usize,
    unit: &str,
) {
    for (from, cells) in rows.iter().zip(cells) {
        for (to, cell) in columns.iter().zip(cells) {
            if let Some(s) = cell {
                let key = Key {
                    kind,
                    from: from.to_string(),
                    to: to.to_string(),
                    size_bytes: size.to_string(),
                    delay_ns: String::new(),
                };
                row(out, key, s, unit);
            }
        }
    }
}

pub fn mem(doc: &MemDocument) -> String {
    let mut out = HEADER.to_string();
    if let Some(lat) = &doc.latency_ns {
        matrix(
            &mut out,
            "latency",
            &lat.initiators,
            &lat.nodes,
            &lat.matrix,
            lat.buffer_bytes,
            "ns",
        );
    }
    if let Some(bw) = &doc.bandwidth_bytes_per_sec {
        let kind = format!("bandwidth-{}", bw.mix);
        matrix(
            &mut out,
            &kind,
            &bw.initiators,
            &bw.nodes,
            &bw.matrix,
            bw.buffer_bytes_per_thread,
            "bytes_per_sec",
        );
    }
    if let Some(sweep) = &doc.latency_sweep {
        for point in &sweep.points {
            if let Some(s) = &point.latency_ns {
                let key = Key {
                    kind: "latency-sweep",
                    from: format!("cpu{}", sweep.cpu),
                    to: sweep.node.to_string(),
                    size_bytes: point.size_bytes.to_string(),
                    delay_ns: String::new(),
                };
                row(&mut out, key, s, "ns");
            }
        }
    }
    if let Some(loaded) = &doc.loaded_latency {
        for point in &loaded.points {
            let key = |kind| Key {
                kind,
                from: format!("cpu{}", loaded.latency_cpu),
                to: loaded.node.to_string(),
                size_bytes: String::new(),
                delay_ns: point.delay_ns.to_string(),
            };
            if let Some(s) = &point.latency_ns {
                row(&mut out, key("loaded-latency"), s, "ns");
            }
            if let Some(s) = &point.bandwidth_bytes_per_sec {
                row(&mut out, key("loaded-bandwidth"), s, "bytes_per_sec");
            }
        }
    }
    out
}

pub fn c2c(doc: &C2cDocument) -> String {
    let mut out = HEADER.to_string();
    let kind = format!("c2c-{}", doc.method);
    for (a, cells) in doc.cpus.iter().zip(&doc.latency_ns) {
        for (b, cell) in doc.cpus.iter().zip(cells) {
            if let Some(s) = cell {
                let key = Key {
                    kind: &kind,
                    from: format!("cpu{a}"),
                    to: format!("cpu{b}"),
                    size_bytes: String::new(),
                    delay_ns: String::new(),
                };
                row(&mut out, key, s, "ns");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_analyze::mem_document::LatencyMatrix;

    #[test]
    fn one_row_per_measured_cell() {
        let mut doc = MemDocument::new();
        let s = Summary {
            median: 90.5,
            p10: 90.0,
            p90: 91.0,
            samples: 7,
        };
        doc.latency_ns = Some(LatencyMatrix {
            nodes: vec![0, 2],
            initiators: vec![0],
            cpus: vec![0],
            buffer_bytes: 4096,
            working_set: numasleuth_analyze::working_set::choose(None, &[], 1, Some(4096)),
            matrix: vec![vec![Some(s), None]],
            self_check: None,
            self_check_skipped: None,
            size_search: Vec::new(),
            size_search_note: None,
        });
        assert_eq!(
            mem(&doc),
            format!("{HEADER}latency,0,0,4096,,90.500,90.000,91.000,7,ns\n")
        );
    }

    #[test]
    fn figures_have_a_fixed_precision() {
        assert_eq!(fixed(230.293_999_999_999_98), "230.294");
        assert_eq!(fixed(12_345_678.9), "12345679");
        assert_eq!(fixed(-0.5), "-0.500");
    }
}
