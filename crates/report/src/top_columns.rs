//! `top`'s columns and which of them a terminal's width keeps: each has a
//! rank, and a narrow terminal drops the highest ranks first, so at 60
//! columns a node still shows its free memory and state, and a process
//! its CPU%, resident and remote memory.

/// A column: its header, its width, and its rank (kept first when the
/// terminal is narrow: lower ranks).
pub(crate) struct Column {
    pub header: &'static str,
    pub width: u16,
    rank: u8,
}

/// The columns that fit `width` (one space between), by rank, in their
/// display order.
pub(crate) fn fitting(columns: &[Column], width: u16) -> Vec<usize> {
    let mut by_rank: Vec<usize> = (0..columns.len()).collect();
    by_rank.sort_by_key(|&c| columns[c].rank);
    let mut kept = Vec::new();
    let mut used = 0u16;
    for c in by_rank {
        let need = columns[c].width + u16::from(!kept.is_empty());
        // Strictly by rank: a less telling column never shows while a
        // more telling one is left out.
        if used + need > width {
            break;
        }
        kept.push(c);
        used += need;
    }
    kept.sort_unstable();
    kept
}

pub(crate) const NODE_COLUMNS: [Column; 8] = [
    Column {
        header: "NODE",
        width: 7,
        rank: 0,
    },
    Column {
        header: "CPUS",
        width: 8,
        rank: 4,
    },
    Column {
        header: "CPU",
        width: 5,
        rank: 2,
    },
    Column {
        header: "FREE",
        width: 9,
        rank: 1,
    },
    Column {
        header: "MIN/LOW/HIGH",
        width: 18,
        rank: 5,
    },
    Column {
        header: "STATE",
        width: 10,
        rank: 3,
    },
    Column {
        header: "MISS",
        width: 8,
        rank: 6,
    },
    Column {
        header: "FOREIGN",
        width: 8,
        rank: 7,
    },
];

/// `MEMORY BY NODE` is last and takes what the others leave: on a machine
/// of many nodes, a wide terminal shows every node's share.
pub(crate) const PROC_COLUMNS: [Column; 10] = [
    Column {
        header: "PID",
        width: 7,
        rank: 0,
    },
    Column {
        header: "COMM",
        width: 15,
        rank: 1,
    },
    Column {
        header: "THR",
        width: 4,
        rank: 7,
    },
    // After memory, what a top user looks for first: it shows from 60
    // columns on, and at 80 it takes THR's place.
    Column {
        header: "CPU%",
        width: 5,
        rank: 4,
    },
    Column {
        header: "RUNS ON",
        width: 7,
        rank: 5,
    },
    Column {
        header: "RESIDENT",
        width: 9,
        rank: 2,
    },
    Column {
        header: "REMOTE",
        width: 9,
        rank: 3,
    },
    Column {
        header: "NODE MV",
        width: 7,
        rank: 8,
    },
    Column {
        header: "CPU MV",
        width: 6,
        rank: 9,
    },
    Column {
        header: "MEMORY BY NODE",
        width: 18,
        rank: 6,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_widths_keep_the_lowest_ranks_in_display_order() {
        assert_eq!(fitting(&NODE_COLUMNS, 80).len(), NODE_COLUMNS.len());
        let kept = fitting(&NODE_COLUMNS, 60);
        let headers: Vec<&str> = kept.iter().map(|&c| NODE_COLUMNS[c].header).collect();
        assert_eq!(headers, ["NODE", "CPUS", "CPU", "FREE", "STATE"]);
        let kept = fitting(&PROC_COLUMNS, 40);
        let headers: Vec<&str> = kept.iter().map(|&c| PROC_COLUMNS[c].header).collect();
        assert_eq!(headers, ["PID", "COMM", "RESIDENT"]);
        let headers = |width| -> Vec<&str> {
            fitting(&PROC_COLUMNS, width)
                .iter()
                .map(|&c| PROC_COLUMNS[c].header)
                .collect()
        };
        assert_eq!(headers(60), ["PID", "COMM", "CPU%", "RUNS ON", "RESIDENT", "REMOTE"]);
        assert_eq!(
            headers(80),
            ["PID", "COMM", "CPU%", "RUNS ON", "RESIDENT", "REMOTE", "MEMORY BY NODE"]
        );
        assert_eq!(headers(200).len(), PROC_COLUMNS.len());
    }
}
