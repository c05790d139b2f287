//! Tables that fit the text layout's width.
//!
//! Left-aligned columns two spaces apart. When a table is wider than the
//! layout, its free-text columns give way first, the widest first: a path
//! becomes `…/libpython3.11.so.1.0`, a command or symbol is cut with `…`,
//! and other text wraps onto more lines at spaces. No column narrows below
//! its longest unbreakable word, and a number is never parted from its
//! unit (`1.6 MiB`), so values are never split. When the numbers alone are
//! still too wide (a 16-CPU matrix in 60 columns), the columns are dealt
//! into blocks, one under the other, each repeating the key columns (the
//! shortest run of leading columns that tells the rows apart: `op`,
//! `layout`, `placement`, `threads` in the lab's table, the row label in a
//! matrix), so every row stays readable by its key.

use crate::layout::{display_width, TextLayout};

/// How a column gives way when the table is too wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// Wraps at spaces, never below its longest word; the default. A
    /// column of numbers is never narrowed.
    Wrap,
    /// A file path, shortened from the left to its last components.
    Path,
    /// A command, symbol or name, shortened at its end.
    Name,
}

/// A path or name column keeps at least this many columns.
const PATH_FLOOR: usize = 16;
const NAME_FLOOR: usize = 10;
const GAP: usize = 2;

/// A table whose columns all wrap at spaces.
pub fn columns(rows: &[Vec<String>], layout: &TextLayout) -> String {
    table(rows, &[], layout)
}

/// A table fitted to `layout.width`; `kinds[c]` says how column `c` gives
/// way (missing entries: [`Col::Wrap`]).
pub fn table(rows: &[Vec<String>], kinds: &[Col], layout: &TextLayout) -> String {
    let count = rows.iter().map(Vec::len).max().unwrap_or(0);
    if count == 0 {
        return String::new();
    }
    let kind = |c: usize| kinds.get(c).copied().unwrap_or(Col::Wrap);
    let column_cells = |c: usize| rows.iter().filter_map(move |r| r.get(c));
    let widths: Vec<usize> = (0..count)
        .map(|c| column_cells(c).map(|s| display_width(s)).max().unwrap_or(0))
        .collect();
    let floors: Vec<usize> = (0..count)
        .map(|c| match kind(c) {
            Col::Wrap => column_cells(c).map(|s| longest_token(s)).max().unwrap_or(0),
            Col::Path => widths[c].min(PATH_FLOOR),
            Col::Name => widths[c].min(NAME_FLOOR),
        })
        .collect();
    // Blocks only when even the floors do not fit; then each block is
    // fitted on its own, so a path keeps what room its block leaves.
    let blocks = if total(&floors) > layout.width {
        blocks(&floors, key_count(rows, &floors, layout.width), layout.width)
    } else {
        vec![(0..count).collect()]
    };
    let mut out = String::new();
    for (index, block) in blocks.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let mut block_widths: Vec<usize> = block.iter().map(|&c| widths[c]).collect();
        let block_floors: Vec<usize> = block.iter().map(|&c| floors[c]).collect();
        fit(&mut block_widths, &block_floors, layout.width);
        for row in rows {
            render_row(row, block, &block_widths, &kind, &mut out);
        }
    }
    out
}

fn total(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + GAP * widths.len().saturating_sub(1)
}

/// Narrows the widest column that can give way, step by step, until the
/// table fits `limit` or every column is at its floor.
fn fit(widths: &mut [usize], floors: &[usize], limit: usize) {
    while total(widths) > limit {
        let mut order: Vec<usize> = (0..widths.len()).filter(|&c| widths[c] > floors[c]).collect();
        order.sort_by_key(|&c| std::cmp::Reverse(widths[c]));
        let Some(&widest) = order.first() else {
            return;
        };
        let next = order.get(1).map_or(0, |&c| widths[c]);
        let excess = total(widths) - limit;
        let target = widths[widest]
            .saturating_sub(excess)
            .max(next)
            .max(floors[widest])
            .min(widths[widest] - 1);
        widths[widest] = target.max(floors[widest]);
    }
}

/// How many leading columns are the rows' key, repeated in every block:
/// the fewest that tell the rows apart (a matrix: its label; the lab: op,
/// layout, placement and threads), or, when no run does, the run that
/// tells most apart. The keys leave room for the widest value column
/// beside them, so every block fits; column 0 is always a key.
fn key_count(rows: &[Vec<String>], floors: &[usize], limit: usize) -> usize {
    let mut best = (0, 1);
    for keys in 1..floors.len() {
        let widest_value = floors[keys..].iter().copied().max().unwrap_or(0);
        if keys > 1 && total(&floors[..keys]) + GAP + widest_value > limit {
            break;
        }
        let distinct: std::collections::HashSet<&[String]> = rows.iter().map(|r| &r[..keys.min(r.len())]).collect();
        if distinct.len() > best.0 {
            best = (distinct.len(), keys);
        }
        if distinct.len() == rows.len() {
            break;
        }
    }
    best.1
}

/// Columns dealt into blocks that each fit `limit`, every block after the
/// first repeating the first `keys` columns (the row's key).
pub(crate) fn blocks(widths: &[usize], keys: usize, limit: usize) -> Vec<Vec<usize>> {
    let keys = keys.clamp(1, widths.len().max(1));
    if total(widths) <= limit || widths.len() < keys + 2 {
        return vec![(0..widths.len()).collect()];
    }
    let key_columns: Vec<usize> = (0..keys).collect();
    let key_width = total(&widths[..keys]);
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut current = key_columns.clone();
    let mut used = key_width;
    for (c, &width) in widths.iter().enumerate().skip(keys) {
        if current.len() > keys && used + GAP + width > limit {
            out.push(std::mem::replace(&mut current, key_columns.clone()));
            used = key_width;
        }
        current.push(c);
        used += GAP + width;
    }
    out.push(current);
    out
}

/// One row of a block: `block` names the columns, `widths[k]` is the
/// width of `block[k]`.
fn render_row(row: &[String], block: &[usize], widths: &[usize], kind: &impl Fn(usize) -> Col, out: &mut String) {
    let cells: Vec<Vec<String>> = block
        .iter()
        .zip(widths)
        .map(|(&c, &width)| {
            let cell = row.get(c).map_or("", String::as_str);
            match kind(c) {
                Col::Wrap => wrap_cell(cell, width),
                Col::Path => vec![shorten_path(cell, width)],
                Col::Name => vec![shorten_end(cell, width)],
            }
        })
        .collect();
    let height = cells.iter().map(Vec::len).max().unwrap_or(1);
    let last = block.iter().rposition(|&c| c < row.len());
    for line_index in 0..height {
        let mut line = String::new();
        for (k, cell_lines) in cells.iter().enumerate() {
            if last.is_none_or(|last| k > last) {
                break;
            }
            let part = cell_lines.get(line_index).map_or("", String::as_str);
            line.push_str(part);
            if Some(k) != last {
                let pad = widths[k].saturating_sub(display_width(part)) + GAP;
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The widest run of a cell that must stay on one line: a word, a number
/// with its unit, or one item of a comma list.
fn longest_token(cell: &str) -> usize {
    pieces(cell).iter().map(|p| display_width(&p.text)).max().unwrap_or(0)
}

/// A run of a cell that stays on one line, and whether a space joins it
/// to the run before (else it follows a comma directly).
struct Piece {
    text: String,
    spaced: bool,
}

/// A cell's break points: spaces (never between a number and its unit,
/// `1.6 MiB`) and after the commas of a list (`0,2,4,…`).
fn pieces(cell: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for word in cell.split(' ').filter(|w| !w.is_empty()) {
        if let Some(previous) = out.last_mut() {
            if crate::layout::is_unit_after(last_word(&previous.text), word) {
                previous.text.push(' ');
                previous.text.push_str(word);
                continue;
            }
        }
        for (k, item) in word.split_inclusive(',').enumerate() {
            out.push(Piece {
                text: item.to_string(),
                spaced: k == 0,
            });
        }
    }
    out
}

fn last_word(text: &str) -> &str {
    text.rsplit(' ').next().unwrap_or(text)
}

/// A cell as lines of at most `width` columns, broken between pieces; a
/// piece wider than the column is split (only when called narrower than
/// the column's floor), so every character is kept.
fn wrap_cell(cell: &str, width: usize) -> Vec<String> {
    if width == 0 || display_width(cell) <= width {
        return vec![cell.to_string()];
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    for piece in pieces(cell) {
        let used = display_width(&line);
        let gap = usize::from(used > 0 && piece.spaced);
        if used + gap + display_width(&piece.text) <= width {
            if gap == 1 {
                line.push(' ');
            }
            line.push_str(&piece.text);
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        let mut rest = piece.text.as_str();
        while display_width(rest) > width {
            let (head, tail) = split_at_width(rest, width);
            lines.push(head.to_string());
            rest = tail;
        }
        line.push_str(rest);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The longest prefix of `text` at most `width` columns wide (at least one
/// character), and the rest.
fn split_at_width(text: &str, width: usize) -> (&str, &str) {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width && at > 0 {
            return text.split_at(at);
        }
        used += w;
    }
    (text, "")
}

/// `text` cut to `width` columns with a trailing `…`.
pub fn shorten_end(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let (head, _) = split_at_width(text, width - 1);
    let head = if display_width(head) > width - 1 { "" } else { head };
    format!("{head}…")
}

/// A path cut from the left to the last components that fit behind `…`
/// (`…/libpython3.11.so.1.0`); when even the file name does not fit, its
/// start, cut with `…`. Text without a `/` is cut at its end.
pub fn shorten_path(path: &str, width: usize) -> String {
    if display_width(path) <= width {
        return path.to_string();
    }
    let Some(slash) = path.rfind('/') else {
        return shorten_end(path, width);
    };
    // The `…` takes one column: a tail fits when it is narrower than width.
    let mut start = slash;
    while let Some(previous) = path[..start].rfind('/') {
        if display_width(&path[previous..]) >= width {
            break;
        }
        start = previous;
    }
    let tail = &path[start..];
    if display_width(tail) < width {
        return format!("…{tail}");
    }
    let name = &path[slash + 1..];
    match width {
        0..=3 => shorten_end(name, width),
        _ => format!("…/{}", shorten_end(name, width - 2)),
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
