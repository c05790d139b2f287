//! `/proc/interrupts`: the CPU header and one line per source.

use numasleuth_kernel::procfs::interrupts;

use crate::text;

pub fn run(data: &[u8]) {
    let text = text(data);
    let Ok(lines) = interrupts::parse(&text) else {
        return;
    };
    let header: Vec<u32> = text
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("CPU")?.parse().ok())
        .collect();
    for line in &lines {
        let _ = line.total();
        assert!(line.counts.len() <= header.len());
        // Counts are matched to header CPUs by column, in order.
        for ((cpu, _), expected) in line.counts.iter().zip(&header) {
            assert_eq!(cpu, expected, "count for CPU{cpu} in the column of CPU{expected}");
        }
        if line.irq.is_none() {
            assert!(
                line.chip.is_none() && line.hwirq.is_none(),
                "a named line `{}` has a chip",
                line.id
            );
        }
    }
}
