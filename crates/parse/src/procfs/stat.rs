//! `/proc/stat`: the per-CPU time counters (`cpuN user nice system idle
//! iowait irq softirq steal guest guest_nice`, in USER_HZ ticks) from which
//! `top` computes per-node CPU utilisation. Only the `cpuN` lines are read;
//! the rest of the file (interrupt totals, boot time) is not needed.

use std::collections::BTreeMap;

use crate::error::{quote, ParseError};

pub const STAT: &str = "proc/stat";

/// One CPU's cumulative ticks, split into busy and idle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Every field but idle and iowait (guest time is already counted in
    /// user, so guest and guest_nice are left out to avoid counting twice).
    pub busy: u64,
    /// idle + iowait.
    pub idle: u64,
}

/// CPU id → ticks. The aggregate `cpu` line is skipped; a CPU that is
/// offline has no line.
pub fn parse(text: &str) -> Result<BTreeMap<u32, CpuTicks>, ParseError> {
    let mut cpus = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(id) = words.next().and_then(|w| w.strip_prefix("cpu")) else {
            continue;
        };
        if id.is_empty() {
            continue;
        }
        let id: u32 = id
            .parse()
            .map_err(|_| ParseError::new(format!("`cpu{}` is not a CPU line", quote(id))))?;
        let values = words
            .take(8)
            .map(|w| w.parse::<u64>())
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| ParseError::new(format!("cpu{id}: a tick count is not a number")))?;
        if values.len() < 4 {
            return Err(ParseError::new(format!("cpu{id}: fewer than 4 tick counts")));
        }
        let field = |i: usize| values.get(i).copied().unwrap_or(0);
        let idle = field(3).saturating_add(field(4));
        let busy = [0, 1, 2, 5, 6, 7]
            .iter()
            .fold(0u64, |sum, i| sum.saturating_add(field(*i)));
        cpus.insert(id, CpuTicks { busy, idle });
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of /proc/stat on this project's 2-CPU KVM guest (6.1).
    const CAPTURE: &str = "\
cpu  1201548 3461 178436 9021733 12093 0 6921 0 0 0
cpu0 601345 1720 89012 4510233 6011 0 5502 0 0 0
cpu1 600203 1741 89424 4511500 6082 0 1419 0 0 0
intr 51870281 0 9 0 0 0 0 0 0 0 0 0 0 156 0 0 0
ctxt 116931851
btime 1763900000
processes 383113
";

    #[test]
    fn per_cpu_lines_split_into_busy_and_idle() {
        let cpus = parse(CAPTURE).unwrap();
        assert_eq!(cpus.len(), 2);
        assert_eq!(
            cpus[&0],
            CpuTicks {
                busy: 601345 + 1720 + 89012 + 5502,
                idle: 4510233 + 6011
            }
        );
        assert_eq!(cpus[&1].idle, 4511500 + 6082);
    }

    #[test]
    fn old_kernels_with_four_fields_and_gaps_in_cpu_ids() {
        let cpus = parse("cpu 1 2 3 4\ncpu0 1 2 3 4\ncpu7 5 0 0 10\n").unwrap();
        assert_eq!(cpus[&0], CpuTicks { busy: 6, idle: 4 });
        assert_eq!(cpus[&7], CpuTicks { busy: 5, idle: 10 });
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        for bad in [
            "cpu0 1 2 3\n",
            "cpu0 1 2 x 4\n",
            "cpux 1 2 3 4\n",
            "cpu-1 1 2 3 4\n",
            "cpu99999999999 1 2 3 4\n",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let huge = parse("cpu0 18446744073709551615 18446744073709551615 1 1 1 18446744073709551615\n").unwrap();
        assert_eq!(huge[&0].busy, u64::MAX);
        assert!(parse("").unwrap().is_empty());
    }
}
