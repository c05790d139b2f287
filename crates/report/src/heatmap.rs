//! Matrices for the terminal, with cells coloured from best (green) to
//! worst (red) when colour is on.
//!
//! Colour codes are added after padding, so columns line up whether or not
//! the escape sequences are there. A matrix wider than the layout is dealt
//! into blocks of columns, each repeating the row labels (as `table` does).

use std::fmt::Write;

use crate::layout::TextLayout;
use crate::table::blocks;

/// A cell's text and where it sits between the best and worst value of its
/// matrix (0 = best, 1 = worst); `None` for empty cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub heat: Option<f64>,
}

/// 0..1 positions of `values` between their minimum and maximum, where
/// `higher_is_better` flips the scale (bandwidth).
pub fn heat(values: &[Option<f64>], higher_is_better: bool) -> Vec<Option<f64>> {
    let present = values.iter().flatten().copied();
    let min = present.clone().fold(f64::INFINITY, f64::min);
    let max = present.fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|v| {
            v.map(|v| {
                let t = if max > min { (v - min) / (max - min) } else { 0.0 };
                if higher_is_better {
                    1.0 - t
                } else {
                    t
                }
            })
        })
        .collect()
}

/// xterm-256 colours from green through yellow to red.
const RAMP: [u8; 6] = [46, 118, 190, 226, 208, 196];

/// `text` right-aligned in `width` chars (as `{:>width$}` pads), coloured
/// by its heat when colour is on, appended to `out`.
fn push_painted(out: &mut String, text: &str, width: usize, heat: Option<f64>, colour: bool) {
    let paint = heat.filter(|_| colour).map(|h| {
        let index = ((h.clamp(0.0, 1.0) * (RAMP.len() - 1) as f64).round()) as usize;
        RAMP[index]
    });
    if let Some(code) = paint {
        let _ = write!(out, "\x1b[38;5;{code}m");
    }
    push_padded(out, text, width, Align::Right);
    if paint.is_some() {
        out.push_str("\x1b[0m");
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// What `{:<width$}` or `{:>width$}` writes (padding counts chars), without
/// a String per cell.
fn push_padded(out: &mut String, text: &str, width: usize, align: Align) {
    let pad = width.saturating_sub(text.chars().count());
    let spaces = |out: &mut String| out.extend(std::iter::repeat_n(' ', pad));
    if align == Align::Right {
        spaces(out);
    }
    out.push_str(text);
    if align == Align::Left {
        spaces(out);
    }
}

/// Ends the line begun at `start` as `trim_end` then a newline would.
fn end_line(out: &mut String, start: usize) {
    let kept = out[start..].trim_end().len();
    out.truncate(start + kept);
    out.push('\n');
}

/// Lays out a header row and labelled rows of cells, two spaces apart,
/// right-aligning the cells (numbers) and left-aligning the labels. Every
/// line is written straight into the one output string.
pub fn grid<L: AsRef<str>>(header: &[String], rows: &[(L, Vec<Cell>)], layout: &TextLayout) -> String {
    let columns = header
        .len()
        .max(rows.iter().map(|(_, cells)| cells.len() + 1).max().unwrap_or(0));
    let mut widths = vec![0; columns];
    let mut measure = |column: usize, text: &str| widths[column] = widths[column].max(text.chars().count());
    for (column, text) in header.iter().enumerate() {
        measure(column, text);
    }
    for (label, cells) in rows {
        measure(0, label.as_ref());
        for (column, cell) in cells.iter().enumerate() {
            measure(column + 1, &cell.text);
        }
    }
    let line_bytes: usize = widths.iter().map(|w| w + 2).sum::<usize>() + 1;
    let mut out = String::with_capacity(line_bytes * (rows.len() + 1));
    for (index, block) in blocks(&widths, 1, layout.width).iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let start = out.len();
        for &column in block {
            let text = header.get(column).map_or("", String::as_str);
            if column == 0 {
                push_padded(&mut out, text, widths[0], Align::Left);
            } else {
                out.push_str("  ");
                push_padded(&mut out, text, widths[column], Align::Right);
            }
        }
        end_line(&mut out, start);
        for (label, cells) in rows {
            let start = out.len();
            push_padded(&mut out, label.as_ref(), widths[0], Align::Left);
            for &column in block.iter().skip(1) {
                let Some(cell) = cells.get(column - 1) else {
                    continue;
                };
                out.push_str("  ");
                push_painted(&mut out, &cell.text, widths[column], cell.heat, layout.colour);
            }
            end_line(&mut out, start);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_runs_from_best_to_worst() {
        assert_eq!(
            heat(&[Some(1.0), None, Some(3.0), Some(2.0)], false),
            [Some(0.0), None, Some(1.0), Some(0.5)]
        );
        assert_eq!(heat(&[Some(1.0), Some(3.0)], true), [Some(1.0), Some(0.0)]);
        assert_eq!(heat(&[Some(5.0)], false), [Some(0.0)]);
    }

    /// `grid` as it was, a String per cell and per line: the oracle for
    /// the one-buffer version.
    fn grid_before(header: &[String], rows: &[(String, Vec<Cell>)], layout: &TextLayout) -> String {
        let columns = header
            .len()
            .max(rows.iter().map(|(_, c)| c.len() + 1).max().unwrap_or(0));
        let mut widths = vec![0; columns];
        let mut measure = |column: usize, text: &str| widths[column] = widths[column].max(text.chars().count());
        header
            .iter()
            .enumerate()
            .for_each(|(column, text)| measure(column, text));
        for (label, cells) in rows {
            measure(0, label);
            cells
                .iter()
                .enumerate()
                .for_each(|(column, cell)| measure(column + 1, &cell.text));
        }
        let paint = |text: &str, heat: Option<f64>| match heat {
            Some(h) if layout.colour => {
                let index = ((h.clamp(0.0, 1.0) * (RAMP.len() - 1) as f64).round()) as usize;
                format!("\x1b[38;5;{}m{text}\x1b[0m", RAMP[index])
            }
            _ => text.to_string(),
        };
        let mut out = String::new();
        for (index, block) in blocks(&widths, 1, layout.width).iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            let mut line = String::new();
            for &column in block {
                let text = header.get(column).map_or("", String::as_str);
                if column == 0 {
                    line.push_str(&format!("{text:<w$}", w = widths[0]));
                } else {
                    line.push_str(&format!("  {text:>w$}", w = widths[column]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            for (label, cells) in rows {
                let mut line = format!("{label:<w$}", w = widths[0]);
                for &column in block.iter().skip(1) {
                    let Some(cell) = cells.get(column - 1) else { continue };
                    line.push_str("  ");
                    line.push_str(&paint(&format!("{:>w$}", cell.text, w = widths[column]), cell.heat));
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn one_buffer_grid_writes_what_the_old_one_did() {
        let texts = ["92.1", "", "-", "1,234.50", "µs ↔", "trailing ", "表示", " "];
        let header: Vec<String> = ["", "node 0", "node 1", "total", "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rows: Vec<(String, Vec<Cell>)> = (0..24)
            .map(|r| {
                let cells = (0..(r % 5))
                    .map(|c| Cell {
                        text: texts[(r * 3 + c) % texts.len()].repeat(1 + (r + c) % 3),
                        heat: [None, Some(0.0), Some(0.4), Some(1.7)][(r + c) % 4],
                    })
                    .collect();
                (
                    ["MemTotal", "Active(file)", "", "label ", "ラベル"][r % 5].to_string(),
                    cells,
                )
            })
            .collect();
        for width in [40, 60, 100, 1000] {
            for colour in [false, true] {
                let layout = TextLayout::new(width, colour);
                assert_eq!(
                    grid(&header, &rows, &layout),
                    grid_before(&header, &rows, &layout),
                    "{width} {colour}"
                );
                assert_eq!(
                    grid(&header[..2], &rows, &layout),
                    grid_before(&header[..2], &rows, &layout)
                );
            }
        }
    }

    #[test]
    fn columns_line_up_with_and_without_colour() {
        let header = vec!["node".to_string(), "0".to_string(), "1".to_string()];
        let rows = vec![(
            "0".to_string(),
            vec![
                Cell {
                    text: "92.1".into(),
                    heat: Some(0.0),
                },
                Cell {
                    text: "150.0".into(),
                    heat: Some(1.0),
                },
            ],
        )];
        let plain = grid(&header, &rows, &TextLayout::new(80, false));
        assert_eq!(plain, "node     0      1\n0     92.1  150.0\n");
        let coloured = grid(&header, &rows, &TextLayout::new(80, true));
        assert!(coloured.contains("\x1b[38;5;46m92.1\x1b[0m"), "{coloured:?}");
        assert!(coloured.contains("\x1b[38;5;196m150.0\x1b[0m"));
        let stripped = coloured
            .replace("\x1b[38;5;46m", "")
            .replace("\x1b[38;5;196m", "")
            .replace("\x1b[0m", "");
        assert_eq!(stripped, plain);
    }
}
