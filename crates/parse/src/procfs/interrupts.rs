//! `/proc/interrupts` and `/proc/irq/N/*`: who serves each interrupt.
//!
//! The header names only the CPUs that are online (`CPU0 CPU2` when CPU 1
//! is offline), so counts are matched to CPU ids by column, never by
//! position in the machine.

use crate::cpulist::IdList;
use crate::error::{quote, ParseError};

pub const PATH: &str = "proc/interrupts";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterruptLine {
    /// `24`, or a named source such as `LOC` or `NMI`.
    pub id: String,
    /// The IRQ number for numbered lines.
    pub irq: Option<u32>,
    /// Count per CPU id, for the CPUs in the header.
    pub counts: Vec<(u32, u64)>,
    /// Interrupt controller, e.g. `IR-PCI-MSIX-0000:03:00.0` or `IO-APIC`.
    pub chip: Option<String>,
    /// Hardware IRQ and trigger, e.g. `524288-edge`.
    pub hwirq: Option<String>,
    /// Handler names (`eth0-TxRx-0`, `nvme0q1`) or, for named lines, the
    /// description (`Local timer interrupts`).
    pub actions: String,
}

impl InterruptLine {
    /// Saturates: a corrupt file's counts must not overflow the sum.
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |sum, (_, c)| sum.saturating_add(*c))
    }
}

pub fn parse(text: &str) -> Result<Vec<InterruptLine>, ParseError> {
    let mut lines = text.lines();
    let header = lines.next().ok_or_else(|| ParseError::new("empty file"))?;
    let cpus: Vec<u32> = header
        .split_whitespace()
        .map(|w| {
            w.strip_prefix("CPU")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| ParseError::new(format!("header word `{}` is not CPUn", quote(w))))
        })
        .collect::<Result<_, _>>()?;
    if cpus.is_empty() {
        return Err(ParseError::new("header names no CPUs"));
    }
    let mut out = Vec::new();
    for (index, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (id, rest) = line
            .split_once(':')
            .ok_or_else(|| ParseError::new(format!("line {}: no `IRQ:` in `{}`", index + 2, quote(line.trim()))))?;
        let id = id.trim().to_string();
        let mut words = rest.split_whitespace().peekable();
        let mut counts = Vec::new();
        for cpu in &cpus {
            match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                Some(count) => {
                    counts.push((*cpu, count));
                    words.next();
                }
                None => break,
            }
        }
        let tail: Vec<&str> = words.collect();
        let irq = id.parse().ok();
        let (chip, hwirq, actions) = match (irq, tail.iter().position(|w| is_hwirq(w))) {
            (Some(_), Some(at)) => (
                Some(tail[..at].join(" ")).filter(|c| !c.is_empty()),
                Some(tail[at].to_string()),
                tail[at + 1..].join(" "),
            ),
            _ => (None, None, tail.join(" ")),
        };
        out.push(InterruptLine {
            id,
            irq,
            counts,
            chip,
            hwirq,
            actions,
        });
    }
    Ok(out)
}

/// `5-edge`, `524288-edge`, `0-level`, `9-fasteoi`.
fn is_hwirq(word: &str) -> bool {
    match word.split_once('-') {
        Some((number, trigger)) => {
            !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) && trigger.chars().all(char::is_alphabetic)
        }
        None => false,
    }
}

/// `/proc/irq/N`: where an IRQ may be served and where it really is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IrqAffinity {
    pub irq: u32,
    pub affinity: Option<IdList>,
    /// Where the interrupt controller actually delivers it; updated only
    /// after the next interrupt following a change.
    pub effective: Option<IdList>,
    /// The node the kernel associates with the IRQ, -1 read as `None`.
    pub node: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Abridged from this project's development VM (virtio devices, 2 CPUs).
    const VM: &str = "           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 28:          0          0 PCI-MSIX-0000:00:01.0   0-edge      virtio0-config
 30:        120       7000 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
NMI:          0          0   Non-maskable interrupts
LOC:     316853     292547   Local timer interrupts
ERR:          0
";

    #[test]
    fn numbered_and_named_lines() {
        let lines = parse(VM).unwrap();
        assert_eq!(lines.len(), 6);
        let net = &lines[2];
        assert_eq!(net.irq, Some(30));
        assert_eq!(net.counts, vec![(0, 120), (1, 7000)]);
        assert_eq!(net.chip.as_deref(), Some("PCI-MSIX-0000:00:03.0"));
        assert_eq!(net.hwirq.as_deref(), Some("1-edge"));
        assert_eq!(net.actions, "virtio2-input.0");
        assert_eq!(lines[4].actions, "Local timer interrupts");
        assert_eq!(lines[4].total(), 316853 + 292547);
        // ERR has one count, not one per CPU.
        assert_eq!(lines[5].counts, vec![(0, 0)]);
    }

    #[test]
    fn sparse_cpu_columns() {
        // CPU 1 offline: the header skips it.
        let lines = parse("  CPU0 CPU2\n 40: 5 9 IR-PCI-MSI 524288-edge nvme0q1\n").unwrap();
        assert_eq!(lines[0].counts, vec![(0, 5), (2, 9)]);
        assert_eq!(lines[0].actions, "nvme0q1");
    }

    #[test]
    fn malformed() {
        assert!(parse("").is_err());
        assert!(parse("garbage header\n").is_err());
        assert!(parse("CPU0\n 24 1 2\n").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "( *CPU[0-9]){0,3}\n[ A-Za-z0-9:-]{0,60}\n?") {
            let _ = parse(&text);
        }
    }

    /// Found by fuzzing (`interrupts` target; the crasher is in
    /// fuzz/regressions/interrupts/): two counts that add past u64::MAX
    /// made `total` panic with overflow checks on and wrap without them.
    #[test]
    fn total_of_huge_counts_saturates() {
        let lines = parse("CPU0 CPU1\n0: 18446744073709551615 1\n").unwrap();
        assert_eq!(lines[0].total(), u64::MAX);
    }
}
