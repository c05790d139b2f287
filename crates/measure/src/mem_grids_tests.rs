use super::*;

/// Short sampling: these tests check the grids' order and stopping, not
/// the figures.
const QUICK: Sampling = Sampling {
    samples: 2,
    sample_ns: 100_000,
};

fn cells(list: &[(usize, usize)]) -> Vec<Cell> {
    list.iter().map(|&(row, column)| Cell { row, column }).collect()
}

/// Runs `grid` with a stop requested while its `n`th cell runs (a Ctrl-C
/// then), and checks that it measured exactly the cells it observed.
/// Returns those cells and what the grid gave.
fn stopped_after<T>(
    n: usize,
    grid: impl FnOnce(&Stop, &mut dyn FnMut(&Cell)) -> T,
    measured: impl Fn(&T) -> Vec<Cell>,
) -> (Vec<Cell>, T) {
    let stop = Stop::new();
    let mut seen = Vec::new();
    let done = grid(&stop, &mut |cell| {
        seen.push(*cell);
        if seen.len() == n {
            stop.request();
        }
    });
    assert_eq!(measured(&done), seen, "the cells measured are the cells begun");
    (seen, done)
}

#[test]
fn latency_goes_by_column_and_bandwidth_by_row() {
    assert_eq!(
        by_column(2, 3),
        cells(&[(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)])
    );
    assert_eq!(by_row(2, 3), cells(&[(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]));
    assert!(by_column(0, 3).is_empty() && by_row(2, 0).is_empty());
}

#[test]
fn a_stopped_latency_grid_keeps_the_cells_chased_and_their_buffers() {
    let cpu = crate::affinity::allowed_cpus().unwrap()[0];
    // Two rows chasing from the same CPU, two columns on node 0: two
    // buffers, since each column sets up its own.
    let cpus = [cpu, cpu];
    let plan = ChasePlan {
        cpus: &cpus,
        targets: &[0, 0],
        buffer_bytes: 64 << 10,
        pages: PageKind::Small,
        sampling: QUICK,
    };
    let (seen, done) = stopped_after(
        3,
        |stop, observe| latency_cells(plan, stop, observe).unwrap(),
        |done| done.cells.iter().map(|(cell, _)| *cell).collect(),
    );
    assert_eq!(seen, cells(&[(0, 0), (1, 0), (0, 1)]));
    assert!(done
        .cells
        .iter()
        .all(|(_, s)| s.cpu == cpu && s.node == 0 && s.size_bytes == 64 << 10 && s.elapsed_ns.len() == 2));
    let columns: Vec<usize> = done.buffers.iter().map(|(column, _)| *column).collect();
    assert_eq!(columns, vec![0, 1]);
}

#[test]
fn a_latency_buffer_too_small_fails_in_setup_at_its_first_cell() {
    let cpus = [crate::affinity::allowed_cpus().unwrap()[0]];
    let plan = ChasePlan {
        cpus: &cpus,
        targets: &[0],
        buffer_bytes: 64,
        pages: PageKind::Small,
        sampling: QUICK,
    };
    let err = latency_cells(plan, &Stop::new(), &mut |_| {}).unwrap_err();
    assert_eq!(err.step, Cell { row: 0, column: 0 });
    assert!(matches!(err.error, PhaseError::Setup(_)), "{:?}", err.error);
}

#[test]
fn a_stopped_bandwidth_grid_keeps_the_cells_streamed() {
    let cpu = crate::affinity::allowed_cpus().unwrap()[0];
    let cpus_by_row = [vec![cpu], vec![cpu]];
    let plan = StreamPlan {
        cpus_by_row: &cpus_by_row,
        targets: &[0, 0],
        mix: Mix::Read,
        total_bytes: 64 << 10,
        pages: PageKind::Small,
        sampling: QUICK,
    };
    let (seen, done) = stopped_after(
        2,
        |stop, observe| bandwidth_cells(plan, stop, observe).unwrap(),
        |done| done.iter().map(|(cell, _)| *cell).collect(),
    );
    assert_eq!(seen, cells(&[(0, 0), (0, 1)]));
    assert!(done
        .iter()
        .all(|(_, s)| s.cpus == [cpu] && s.node == 0 && s.bytes.len() == 2 && s.placements.len() == 1));
}

#[test]
fn a_bandwidth_row_without_cpus_names_its_cell() {
    let cpus_by_row = [Vec::new()];
    let plan = StreamPlan {
        cpus_by_row: &cpus_by_row,
        targets: &[0],
        mix: Mix::Read,
        total_bytes: 64 << 10,
        pages: PageKind::Small,
        sampling: QUICK,
    };
    let err = bandwidth_cells(plan, &Stop::new(), &mut |_| {}).unwrap_err();
    assert_eq!(err.step, Cell { row: 0, column: 0 });
}

#[test]
fn some_cells_can_be_measured_again_each_column_with_its_own_buffer() {
    let cpu = crate::affinity::allowed_cpus().unwrap()[0];
    let cpus = [cpu, cpu];
    let chase = ChasePlan {
        cpus: &cpus,
        targets: &[0, 0],
        buffer_bytes: 64 << 10,
        pages: PageKind::Small,
        sampling: QUICK,
    };
    let again = latency_cells_at(chase, cells(&[(1, 0), (0, 1), (1, 1)]), &Stop::new(), &mut |_| {}).unwrap();
    let chased: Vec<Cell> = again.cells.iter().map(|(c, _)| *c).collect();
    assert_eq!(chased, cells(&[(1, 0), (0, 1), (1, 1)]));
    let columns: Vec<usize> = again.buffers.iter().map(|(column, _)| *column).collect();
    assert_eq!(columns, vec![0, 1]);
    let cpus_by_row = [vec![cpu], vec![cpu]];
    let stream = StreamPlan {
        cpus_by_row: &cpus_by_row,
        targets: &[0, 0],
        mix: Mix::Read,
        total_bytes: 64 << 10,
        pages: PageKind::Small,
        sampling: QUICK,
    };
    let again = bandwidth_cells_at(stream, cells(&[(1, 1)]), &Stop::new(), &mut |_| {}).unwrap();
    assert_eq!(again.iter().map(|(c, _)| *c).collect::<Vec<_>>(), cells(&[(1, 1)]));
}
