//! `meminfo` for people and programs: each node's meminfo in MiB side by
//! side with a total column, as `numastat -m` prints it, and the same rows
//! in bytes as JSON.

use std::fmt::Write;

use numasleuth_analyze::meminfo::MeminfoTable;
use serde::Serialize;

use crate::export::{with_provenance, Exporter};
use crate::heatmap::{grid, Cell};
use crate::layout::TextLayout;
use crate::provenance::Provenance;

pub const SCHEMA: &str = "numasleuth.meminfo/1";

const MIB: f64 = 1024.0 * 1024.0;
const MIB_SHIFT: u32 = 20;

/// MiB with two decimals, as numastat prints them: `{:.2}` of the f64
/// quotient, which rounds the exact value half to even. Below 2^53 bytes
/// that quotient is exact, so integers give the same digits without f64
/// formatting (a third of this report's rendering before); above, the f64
/// itself is used, rounding and all.
fn mib(bytes: u64) -> String {
    if bytes >= 1 << f64::MANTISSA_DIGITS {
        return format!("{:.2}", bytes as f64 / MIB);
    }
    let fraction_mask = (1u64 << MIB_SHIFT) - 1;
    let scaled = (bytes & fraction_mask) * 100;
    let (mut hundredths, rest) = (scaled >> MIB_SHIFT, scaled & fraction_mask);
    let half = 1u64 << (MIB_SHIFT - 1);
    if rest > half || (rest == half && hundredths % 2 == 1) {
        hundredths += 1;
    }
    let whole = (bytes >> MIB_SHIFT) + hundredths / 100;
    let mut text = decimal(whole);
    text.push('.');
    text.push(char::from(b'0' + (hundredths % 100 / 10) as u8));
    text.push(char::from(b'0' + (hundredths % 10) as u8));
    text
}

/// `whole` in decimal, with room for the two decimals after it; `format!`
/// costs several times this per cell.
fn decimal(mut whole: u64) -> String {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (whole % 10) as u8;
        whole /= 10;
        if whole == 0 {
            break;
        }
    }
    let mut text = String::with_capacity(digits.len() - start + 3);
    text.extend(digits[start..].iter().map(|d| char::from(*d)));
    text
}

pub fn render(table: &MeminfoTable, layout: &TextLayout) -> String {
    let mut out = String::from("Per-node memory in MiB, from /sys/devices/system/node/node*/meminfo");
    if let Some(page) = table.huge_page_bytes {
        let _ = write!(
            out,
            "; HugePages_* are counts times the {} huge page",
            crate::format::bytes(page)
        );
    }
    out.push_str("\n\n");
    let mut header = vec![String::new()];
    header.extend(table.nodes.iter().map(|n| format!("node {n}")));
    header.push("total".into());
    let rows: Vec<(&str, Vec<Cell>)> = table
        .rows
        .iter()
        .map(|row| {
            let mut cells: Vec<Cell> = Vec::with_capacity(table.nodes.len() + 1);
            cells.extend(table.nodes.iter().map(|n| Cell {
                text: row.bytes_by_node.get(n).map_or_else(|| "-".to_string(), |b| mib(*b)),
                heat: None,
            }));
            cells.push(Cell {
                text: mib(row.total_bytes),
                heat: None,
            });
            (row.name.as_str(), cells)
        })
        .collect();
    out.push_str(&grid(&header, &rows, layout));
    for note in &table.notes {
        let _ = writeln!(out, "note: {note}");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fraction of a MiB, under a few whole parts, and the edge where
    /// the f64 stops being exact: the same text as `{:.2}` of the f64.
    #[test]
    fn mib_in_integers_matches_f64_formatting() {
        let f64_text = |bytes: u64| format!("{:.2}", bytes as f64 / MIB);
        for whole in [0u64, 1, 99, 24_053, (1 << 33) - 1] {
            for fraction in 0..1u64 << MIB_SHIFT {
                let bytes = (whole << MIB_SHIFT) | fraction;
                assert_eq!(mib(bytes), f64_text(bytes), "{bytes}");
            }
        }
        for bytes in [
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            (1 << 53) + 0x1_2345,
            u64::MAX - 1,
            u64::MAX,
        ] {
            assert_eq!(mib(bytes), f64_text(bytes), "{bytes}");
        }
    }
}
