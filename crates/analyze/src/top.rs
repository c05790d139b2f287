//! `top`'s node rows from two readings a refresh apart: CPU utilisation
//! over each node's CPUs, free memory against the watermarks, and the
//! numa_miss / numa_foreign and machine-wide reclaim rates. The first
//! frame has no rates (there is nothing to difference against), and a
//! process's first row no CPU%.

use std::collections::BTreeMap;

use numasleuth_model::top::{CpuBefore, Frame, NodeRow, ProcReading, ProcRow};
use numasleuth_parse::procfs::stat::CpuTicks;
use numasleuth_parse::IdList;

use crate::memwatch::{NodeSample, Sample};
use crate::migrations::refresh::moves_between;
use crate::rates::{cpu_util_percent, per_sec};
use numasleuth_model::process::remote_bytes;

/// What one refresh read: each CPU's ticks and, when readable, the memory
/// signals.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub ticks: BTreeMap<u32, CpuTicks>,
    pub signals: Option<Sample>,
}

/// The frame's node rows and reclaim rates; `before` is the previous
/// reading and the seconds since it. Processes and notes are the caller's.
pub fn frame(nodes: &[(u32, IdList)], before: Option<(&Reading, f64)>, now: &Reading, page_bytes: u64) -> Frame {
    let mut frame = Frame::default();
    let dt_s = before.map(|(_, dt_s)| dt_s.max(1e-3));
    let empty = Reading::default();
    let then = before.map_or(&empty, |(reading, _)| reading);
    let pages = |p: u64| p.saturating_mul(page_bytes);
    for (node, cpus) in nodes {
        let signal = node_signal(&now.signals, *node);
        let previous = node_signal(&then.signals, *node);
        let rate =
            |pick: fn(&NodeSample) -> Option<u64>| per_sec(signal.and_then(pick), previous.and_then(pick), dt_s?);
        frame.nodes.push(NodeRow {
            node: *node,
            cpus: cpus.to_string(),
            cpu_util_percent: cpu_util_percent(&then.ticks, &now.ticks, cpus),
            free_bytes: signal.map(|s| pages(s.free_pages)),
            min_bytes: signal.map(|s| pages(s.min_pages)),
            low_bytes: signal.map(|s| pages(s.low_pages)),
            high_bytes: signal.map(|s| pages(s.high_pages)),
            numa_miss_per_sec: rate(|n| n.numa_miss),
            numa_foreign_per_sec: rate(|n| n.numa_foreign),
        });
    }
    if let (Some(now_s), Some(then_s), Some(dt_s)) = (&now.signals, &then.signals, dt_s) {
        frame.kswapd_scan_per_sec = per_sec(
            Some(now_s.machine.pgscan_kswapd),
            Some(then_s.machine.pgscan_kswapd),
            dt_s,
        );
        frame.direct_scan_per_sec = per_sec(
            Some(now_s.machine.pgscan_direct),
            Some(then_s.machine.pgscan_direct),
            dt_s,
        );
        frame.allocstall_per_sec = per_sec(Some(now_s.machine.allocstall), Some(then_s.machine.allocstall), dt_s);
    }
    frame
}

fn node_signal(signals: &Option<Sample>, node: u32) -> Option<&NodeSample> {
    signals.as_ref()?.nodes.iter().find(|n| n.node == node)
}

/// A process's row: the nodes its threads run on, the threads that moved
/// since the previous refresh, its memory on nodes none of them run on,
/// and its CPU%. `cpu_node` maps a CPU to its node; a CPU it lacks has no
/// node. `ticks_per_sec` is the unit of its CPU times (`_SC_CLK_TCK`).
pub fn proc_row(reading: &ProcReading, cpu_node: &BTreeMap<u32, u32>, ticks_per_sec: u64) -> ProcRow {
    let thread_nodes: std::collections::BTreeSet<u32> = reading
        .thread_cpus
        .iter()
        .filter_map(|(_, cpu)| cpu_node.get(cpu).copied())
        .collect();
    let (cpu_moves, node_moves) = moves_between(&reading.thread_cpus_before, &reading.thread_cpus, cpu_node);
    let remote_bytes = reading
        .bytes_by_node
        .as_ref()
        .and_then(|by_node| remote_bytes(by_node, &thread_nodes.iter().copied().collect()));
    ProcRow {
        pid: reading.pid,
        comm: reading.comm.clone(),
        threads: reading.thread_cpus.len(),
        thread_nodes,
        bytes_by_node: reading.bytes_by_node.clone(),
        remote_bytes,
        cpu_moves,
        node_moves,
        cpu_percent: cpu_percent(reading.cpu_ticks, reading.cpu_before, ticks_per_sec),
    }
}

/// CPU time between two readings in percent of one CPU's time over the
/// same span, as top's %CPU; `None` without both readings or a span.
pub fn cpu_percent(cpu_ticks: Option<u64>, before: Option<CpuBefore>, ticks_per_sec: u64) -> Option<f64> {
    let before = before.filter(|b| b.elapsed_s > 0.0 && ticks_per_sec > 0)?;
    // A counter that went backwards cannot be this process's (the start
    // time already tells a reused PID): no figure rather than 0.
    let used_ticks = cpu_ticks?.checked_sub(before.cpu_ticks)?;
    Some(used_ticks as f64 / ticks_per_sec as f64 / before.elapsed_s * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memwatch::MachineCounters;

    fn reading(busy_ticks: u64, free_pages: u64, numa_miss: u64, pgscan_kswapd: u64) -> Reading {
        let ticks = (0..2)
            .map(|cpu| {
                (
                    cpu,
                    CpuTicks {
                        busy: busy_ticks,
                        idle: 100,
                    },
                )
            })
            .collect();
        let node = NodeSample {
            node: 0,
            free_pages,
            min_pages: 10,
            low_pages: 20,
            high_pages: 30,
            numa_miss: Some(numa_miss),
            ..NodeSample::default()
        };
        Reading {
            ticks,
            signals: Some(Sample {
                t_s: 0.0,
                nodes: vec![node],
                machine: MachineCounters {
                    pgscan_kswapd,
                    ..MachineCounters::default()
                },
                zone_reclaim_mode: None,
            }),
        }
    }

    #[test]
    fn the_first_frame_has_levels_and_no_rates() {
        let nodes = [(0, IdList::parse("0-1").unwrap())];
        let first = frame(&nodes, None, &reading(0, 1000, 5, 0), 4096);
        assert_eq!(first.nodes[0].free_bytes, Some(1000 * 4096));
        assert_eq!(first.nodes[0].low_bytes, Some(20 * 4096));
        assert_eq!(first.nodes[0].numa_miss_per_sec, None);
        assert_eq!(first.nodes[0].cpu_util_percent, None);
        assert_eq!(first.kswapd_scan_per_sec, None);
    }

    #[test]
    fn rates_are_over_the_time_between_readings() {
        let nodes = [(0, IdList::parse("0-1").unwrap())];
        let before = reading(0, 1000, 5, 100);
        let now = reading(100, 900, 25, 300);
        let second = frame(&nodes, Some((&before, 2.0)), &now, 4096);
        assert_eq!(second.nodes[0].numa_miss_per_sec, Some(10.0));
        assert_eq!(second.kswapd_scan_per_sec, Some(100.0));
        // 100 busy ticks of 100 busy + 0 idle more per CPU: fully busy.
        assert_eq!(second.nodes[0].cpu_util_percent, Some(100.0));
        // A node the readings do not know has levels and rates unknown.
        let missing = frame(&[(7, IdList::parse("2").unwrap())], Some((&before, 2.0)), &now, 4096);
        assert_eq!(
            (missing.nodes[0].free_bytes, missing.nodes[0].numa_miss_per_sec),
            (None, None)
        );
    }

    #[test]
    fn a_process_row_derives_nodes_moves_and_remote_bytes() {
        let cpu_node: BTreeMap<u32, u32> = [(0, 0), (1, 0), (2, 1), (3, 1)].into_iter().collect();
        let reading = ProcReading {
            pid: 7,
            comm: "w".into(),
            // 10 moved within node 0, 11 moved to node 1, 12 is new, 13 is
            // on a CPU with no known node.
            thread_cpus: vec![(10, 1), (11, 2), (12, 0), (13, 9)],
            thread_cpus_before: [(10, 0), (11, 0)].into_iter().collect(),
            bytes_by_node: Some([(0, 4096), (1, 8192), (2, 100)].into_iter().collect()),
            ..ProcReading::default()
        };
        let row = proc_row(&reading, &cpu_node, 100);
        assert_eq!((row.pid, row.threads), (7, 4));
        assert_eq!(row.thread_nodes, [0, 1].into_iter().collect());
        assert_eq!((row.cpu_moves, row.node_moves), (2, 1));
        assert_eq!(row.remote_bytes, Some(100));
        let unread = ProcReading {
            bytes_by_node: None,
            ..reading.clone()
        };
        assert_eq!(proc_row(&unread, &cpu_node, 100).remote_bytes, None);
        let nowhere = ProcReading {
            thread_cpus: vec![(13, 9)],
            ..reading
        };
        assert_eq!(proc_row(&nowhere, &cpu_node, 100).remote_bytes, None);
    }

    #[test]
    fn cpu_percent_is_ticks_used_over_ticks_elapsed() {
        let cpu_node = BTreeMap::new();
        let second = ProcReading {
            pid: 7,
            cpu_ticks: Some(150),
            cpu_before: Some(CpuBefore {
                cpu_ticks: 100,
                elapsed_s: 1.0,
            }),
            ..ProcReading::default()
        };
        // 50 ticks in 1 s at 100 Hz: half of one CPU.
        assert_eq!(proc_row(&second, &cpu_node, 100).cpu_percent, Some(50.0));
        // Two CPUs busy for 2 s at 250 Hz: 1000 ticks, 200%.
        let two_cpus = cpu_percent(
            Some(1000),
            Some(CpuBefore {
                cpu_ticks: 0,
                elapsed_s: 2.0,
            }),
            250,
        );
        assert_eq!(two_cpus, Some(200.0));
        // An idle process reads 0, not unknown.
        let idle = CpuBefore {
            cpu_ticks: 150,
            elapsed_s: 1.0,
        };
        assert_eq!(cpu_percent(Some(150), Some(idle), 100), Some(0.0));
    }

    #[test]
    fn without_an_earlier_reading_cpu_percent_is_unknown_not_zero() {
        let cpu_node = BTreeMap::new();
        // A first reading, or a reused PID (the scan drops what came
        // before): no earlier ticks.
        let first = ProcReading {
            pid: 7,
            cpu_ticks: Some(150),
            cpu_before: None,
            ..ProcReading::default()
        };
        assert_eq!(proc_row(&first, &cpu_node, 100).cpu_percent, None);
        let before = CpuBefore {
            cpu_ticks: 100,
            elapsed_s: 1.0,
        };
        assert_eq!(cpu_percent(None, Some(before), 100), None, "unreadable now");
        assert_eq!(cpu_percent(Some(50), Some(before), 100), None, "went backwards");
        let no_time = CpuBefore {
            elapsed_s: 0.0,
            ..before
        };
        assert_eq!(cpu_percent(Some(150), Some(no_time), 100), None);
        assert_eq!(cpu_percent(Some(150), Some(before), 0), None);
    }
}
