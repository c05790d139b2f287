//! `--csv`: one flat table for spreadsheets and plotting, one row per
//! measured cell, units in the column names.

use numasleuth_analyze::stats::Summary;

use crate::c2c_json::C2cDocument;
use crate::mem_json::MemDocument;

const HEADER: &str = "kind,initiator,target,size_bytes,delay_ns,median,p10,p90,samples,unit\n";

fn row(out: &mut String, kind: &str, from: String, to: String, size: String, delay: String, s: &Summary, unit: &str) {
    out.push_str(&format!(
        "{kind},{from},{to},{size},{delay},{},{},{},{},{unit}\n",
        s.median, s.p10, s.p90, s.samples
    ));
}

pub fn mem(doc: &MemDocument) -> String {
    let mut out = HEADER.to_string();
    if let Some(lat) = &doc.latency_ns {
        for (i, cells) in lat.initiators.iter().zip(&lat.matrix) {
            for (t, cell) in lat.nodes.iter().zip(cells) {
                if let Some(s) = cell {
                    row(
                        &mut out,
                        "latency",
                        i.to_string(),
                        t.to_string(),
                        lat.buffer_bytes.to_string(),
                        String::new(),
                        s,
                        "ns",
                    );
                }
            }
        }
    }
    if let Some(bw) = &doc.bandwidth_bytes_per_sec {
        for (i, cells) in bw.initiators.iter().zip(&bw.matrix) {
            for (t, cell) in bw.nodes.iter().zip(cells) {
                if let Some(s) = cell {
                    let kind = format!("bandwidth-{}", bw.mix);
                    let size = bw.buffer_bytes_per_thread.to_string();
                    row(
                        &mut out,
                        &kind,
                        i.to_string(),
                        t.to_string(),
                        size,
                        String::new(),
                        s,
                        "bytes_per_sec",
                    );
                }
            }
        }
    }
    if let Some(sweep) = &doc.latency_sweep {
        for point in &sweep.points {
            if let Some(s) = &point.latency_ns {
                let (cpu, node, size) = (
                    format!("cpu{}", sweep.cpu),
                    sweep.node.to_string(),
                    point.size_bytes.to_string(),
                );
                row(&mut out, "latency-sweep", cpu, node, size, String::new(), s, "ns");
            }
        }
    }
    if let Some(loaded) = &doc.loaded_latency {
        for point in &loaded.points {
            let (cpu, node, delay) = (
                format!("cpu{}", loaded.latency_cpu),
                loaded.node.to_string(),
                point.delay_ns.to_string(),
            );
            if let Some(s) = &point.latency_ns {
                row(
                    &mut out,
                    "loaded-latency",
                    cpu.clone(),
                    node.clone(),
                    String::new(),
                    delay.clone(),
                    s,
                    "ns",
                );
            }
            if let Some(s) = &point.bandwidth_bytes_per_sec {
                row(
                    &mut out,
                    "loaded-bandwidth",
                    cpu,
                    node,
                    String::new(),
                    delay,
                    s,
                    "bytes_per_sec",
                );
            }
        }
    }
    out
}

pub fn c2c(doc: &C2cDocument) -> String {
    let mut out = HEADER.to_string();
    for (a, cells) in doc.cpus.iter().zip(&doc.latency_ns) {
        for (b, cell) in doc.cpus.iter().zip(cells) {
            if let Some(s) = cell {
                row(
                    &mut out,
                    &format!("c2c-{}", doc.method),
                    format!("cpu{a}"),
                    format!("cpu{b}"),
                    String::new(),
                    String::new(),
                    s,
                    "ns",
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem_json::LatencyMatrix;

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
            matrix: vec![vec![Some(s), None]],
        });
        assert_eq!(mem(&doc), format!("{HEADER}latency,0,0,4096,,90.5,90,91,7,ns\n"));
    }
}
