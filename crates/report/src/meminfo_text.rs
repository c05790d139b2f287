//! `meminfo` for people and programs: each node's meminfo in MiB side by
//! side with a total column, as `numastat -m` prints it, and the same rows
//! in bytes as JSON.

use numasleuth_analyze::meminfo::MeminfoTable;
use serde::Serialize;

use crate::export::{with_provenance, Exporter};
use crate::heatmap::{grid, Cell};
use crate::layout::TextLayout;
use crate::provenance::Provenance;

pub const SCHEMA: &str = "numasleuth.meminfo/1";

const MIB: f64 = 1024.0 * 1024.0;

/// MiB with two decimals, as numastat prints them.
fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / MIB)
}

pub fn render(table: &MeminfoTable, layout: &TextLayout) -> String {
    let mut out = String::from("Per-node memory in MiB, from /sys/devices/system/node/node*/meminfo");
    if let Some(page) = table.huge_page_bytes {
        out.push_str(&format!(
            "; HugePages_* are counts times the {} huge page",
            crate::format::bytes(page)
        ));
    }
    out.push_str("\n\n");
    let mut header = vec![String::new()];
    header.extend(table.nodes.iter().map(|n| format!("node {n}")));
    header.push("total".into());
    let rows: Vec<(String, Vec<Cell>)> = table
        .rows
        .iter()
        .map(|row| {
            let mut cells: Vec<Cell> = table
                .nodes
                .iter()
                .map(|n| Cell {
                    text: row.bytes_by_node.get(n).map_or_else(|| "-".to_string(), |b| mib(*b)),
                    heat: None,
                })
                .collect();
            cells.push(Cell {
                text: mib(row.total_bytes),
                heat: None,
            });
            (row.name.clone(), cells)
        })
        .collect();
    out.push_str(&grid(&header, &rows, layout));
    for note in &table.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    #[serde(flatten)]
    table: &'a MeminfoTable,
}

/// `meminfo`: the table as text and as `numasleuth.meminfo/1`.
pub struct MeminfoReport<'a>(pub &'a MeminfoTable);

impl Exporter for MeminfoReport<'_> {
    fn json(&self, provenance: &Provenance) -> serde_json::Result<String> {
        with_provenance(
            &Document {
                schema: SCHEMA,
                table: self.0,
            },
            provenance,
        )
    }
    fn text(&self, layout: &TextLayout) -> String {
        render(self.0, layout)
    }
}
