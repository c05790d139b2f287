//! `mem`'s node×node matrices from the cells measured, and whether its
//! buffers sat where they were asked to be: one verdict over every
//! placement check, and a note per check that failed.

use crate::row_warnings::{timed_rows, RowSamples};
use crate::stats::Summary;
use crate::timing::{ByteSamples, TimedSamples};

/// A node×node matrix of figures: a row per initiator node, a column per
/// target node; a cell not measured (the run was stopped) is empty.
pub type NodeGrid = Vec<Vec<Option<Summary>>>;

/// The latency matrix of `shape` (rows, columns) from the cells chased,
/// each as ((row, column), name, samples) in the order chased, and the
/// warnings those cells call for.
pub fn latency_grid<'a>(
    shape: (usize, usize),
    cells: impl IntoIterator<Item = ((usize, usize), String, &'a TimedSamples)>,
) -> (NodeGrid, Vec<String>) {
    grid("latency cells", shape, cells)
}

/// The bandwidth matrix (bytes per second) of `shape` from the cells
/// streamed, as [`latency_grid`] takes them.
pub fn bandwidth_grid<'a>(
    shape: (usize, usize),
    cells: impl IntoIterator<Item = ((usize, usize), String, &'a ByteSamples)>,
) -> (NodeGrid, Vec<String>) {
    grid("bandwidth cells", shape, cells)
}

/// Each cell's summary put in its place, and the warnings the cells
/// (`noun`) call for.
fn grid<'a, S: RowSamples + 'a>(
    noun: &'static str,
    shape: (usize, usize),
    cells: impl IntoIterator<Item = ((usize, usize), String, &'a S)>,
) -> (NodeGrid, Vec<String>) {
    let (at, rows): (Vec<_>, Vec<_>) = cells.into_iter().map(|(at, name, s)| (at, (name, s))).unzip();
    let (summaries, warnings) = timed_rows(noun, rows);
    (place(shape, &at, summaries), warnings)
}

/// Each summary in its cell; a cell outside `shape` is left out (the
/// measure grids never give one).
fn place((rows, columns): (usize, usize), at: &[(usize, usize)], summaries: Vec<Option<Summary>>) -> NodeGrid {
    let mut grid = vec![vec![None; columns]; rows];
    for (&(row, column), summary) in at.iter().zip(summaries) {
        if let Some(cell) = grid.get_mut(row).and_then(|r| r.get_mut(column)) {
            *cell = summary;
        }
    }
    grid
}

/// The warning given when not every buffer could be verified on its node.
pub const UNVERIFIED_WARNING: &str =
    "not every buffer was verified to be on the node asked for (see placements); the matrix may mix nodes";

/// Verified only when there was at least one check and every one passed;
/// otherwise the warning to show, when some check failed (none when
/// nothing was measured).
pub fn placement_verdict(checks: impl IntoIterator<Item = bool>) -> (bool, Option<&'static str>) {
    let mut any = false;
    let mut all = true;
    for verified in checks {
        any = true;
        all &= verified;
    }
    let verified = any && all;
    // Nothing measured (stopped before the first cell): nothing to warn of.
    (verified, (any && !all).then_some(UNVERIFIED_WARNING))
}

/// Why one buffer's check failed: the kernel's reason when no page could be
/// checked, else where the pages were ("12 on node 1, 3 not present").
/// `elsewhere` is (node, pages).
pub fn placement_note(
    verified: bool,
    unverifiable: Option<&str>,
    elsewhere: &[(u32, usize)],
    pages_unknown: usize,
) -> Option<String> {
    if let Some(reason) = unverifiable {
        return Some(reason.to_string());
    }
    if verified {
        return None;
    }
    let elsewhere: Vec<String> = elsewhere
        .iter()
        .map(|(node, pages)| format!("{pages} on node {node}"))
        .collect();
    Some(format!("{}; {pages_unknown} not present", elsewhere.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chase(elapsed_ns: &[u64]) -> TimedSamples {
        TimedSamples {
            elapsed_ns: elapsed_ns.to_vec(),
            timer_overhead_ns: 0.0,
            timer_reads_per_sample: 1,
            ops_per_sample: 10,
        }
    }

    #[test]
    fn a_grid_puts_each_cell_in_place_and_leaves_the_rest_empty() {
        let (a, b) = (chase(&[1000, 1000, 1000]), chase(&[2000, 2000, 2000]));
        let (grid, warnings) = latency_grid(
            (2, 2),
            [
                ((1, 0), "node 1 → node 0".to_string(), &a),
                ((0, 1), "node 0 → node 1".to_string(), &b),
            ],
        );
        let medians: Vec<Vec<Option<f64>>> = grid
            .iter()
            .map(|row| row.iter().map(|c| c.map(|s| s.median)).collect())
            .collect();
        assert_eq!(medians, vec![vec![None, Some(200.0)], vec![Some(100.0), None]]);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_bandwidth_grid_is_in_bytes_per_second_and_warns_per_kind() {
        let one = ByteSamples {
            elapsed_ns: vec![1_000_000_000],
            bytes: vec![4096],
        };
        let (grid, warnings) = bandwidth_grid((1, 1), [((0, 0), "node 0 → node 0".to_string(), &one)]);
        assert_eq!(grid[0][0].map(|s| s.median), Some(4096.0));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("1 of 1 bandwidth cells"), "{warnings:?}");
    }

    #[test]
    fn the_verdict_needs_one_check_and_every_check() {
        assert_eq!(placement_verdict([true, true]), (true, None));
        assert_eq!(placement_verdict([true, false]), (false, Some(UNVERIFIED_WARNING)));
        // Issue 36: a run stopped before any cell warned of cells never measured.
        assert_eq!(placement_verdict([]), (false, None));
    }

    #[test]
    fn the_note_says_where_the_pages_were() {
        assert_eq!(placement_note(true, None, &[], 0), None);
        assert_eq!(
            placement_note(false, None, &[(1, 12), (2, 1)], 3).as_deref(),
            Some("12 on node 1, 1 on node 2; 3 not present")
        );
        assert_eq!(
            placement_note(false, Some("move_pages: ENOSYS"), &[], 0).as_deref(),
            Some("move_pages: ENOSYS")
        );
    }
}
