//! `probe-latency --readers`: each latency spike next to the opens of
//! lock-taking kernel files that came just before it. In the zone-reclaim
//! incident the 10–40 ms stalls lined up with a monitor's reads of
//! /proc/slabinfo; this puts the two side by side.

use numasleuth_model::readers::{Ancestor, LockFile, ReadersRaw, Target};
use serde::Serialize;

use crate::latency_spikes::Spike;

/// Reads listed per spike at most (the nearest ones).
pub const MAX_READS_PER_SPIKE: usize = 4;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpikeRead {
    pub t_s: f64,
    /// How long before the spike the file was opened (negative: during it).
    pub before_ms: f64,
    pub pid: u32,
    pub comm: String,
    pub parent: Option<Ancestor>,
    pub file: LockFile,
    pub target: Target,
}

/// Attaches to each spike the opens from `before_s` ahead of it to its
/// end, nearest first. A process's reads of its own smaps are left out.
pub fn attach(spikes: &mut [Spike], raw: &ReadersRaw, before_s: f64) {
    for spike in spikes.iter_mut() {
        let end_s = spike.t_s + spike.latency_ns as f64 / 1e9;
        let mut near: Vec<SpikeRead> = raw
            .opens
            .iter()
            .filter(|o| o.target != Target::Own && o.t_s >= spike.t_s - before_s && o.t_s <= end_s)
            .map(|o| {
                let who = raw.processes.iter().find(|p| p.pid == o.pid);
                SpikeRead {
                    t_s: o.t_s,
                    before_ms: (spike.t_s - o.t_s) * 1e3,
                    pid: o.pid,
                    comm: who.map_or_else(|| "?".to_string(), |p| p.comm.clone()),
                    parent: who.and_then(|p| p.parents.first().cloned()),
                    file: o.file,
                    target: o.target,
                }
            })
            .collect();
        near.sort_by(|a, b| a.before_ms.abs().total_cmp(&b.before_ms.abs()));
        near.truncate(MAX_READS_PER_SPIKE);
        spike.readers = near;
    }
}

/// "2.1 ms earlier PID 4242 (`ss`, child of `node-agent`) opened /proc/slabinfo".
pub fn describe(read: &SpikeRead) -> String {
    let when = if read.before_ms >= 0.0 {
        format!("{:.1} ms earlier", read.before_ms)
    } else {
        format!("{:.1} ms into it", -read.before_ms)
    };
    let parent = read
        .parent
        .as_ref()
        .map_or(String::new(), |p| format!(", child of `{}`", p.comm));
    let path = match read.target {
        Target::Process(pid) => format!("/proc/{pid}/{}", read.file.name()),
        _ => read.file.path(),
    };
    format!("{when} PID {} (`{}`{parent}) opened {path}", read.pid, read.comm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numasleuth_model::readers::{Method, Open, ReaderProcess};

    fn raw(times: &[f64]) -> ReadersRaw {
        ReadersRaw {
            method: Method::Kprobe,
            files: vec![LockFile::Slabinfo],
            duration_s: 20.0,
            opens: times
                .iter()
                .map(|t| Open {
                    t_s: *t,
                    pid: 4242,
                    tid: 4242,
                    file: LockFile::Slabinfo,
                    target: Target::System,
                })
                .chain(std::iter::once(Open {
                    t_s: 12.2,
                    pid: 7,
                    tid: 7,
                    file: LockFile::Smaps,
                    target: Target::Own,
                }))
                .collect(),
            opens_dropped: 0,
            processes: vec![ReaderProcess {
                pid: 4242,
                comm: "ss".into(),
                cmdline: Some("ss -s".into()),
                parents: vec![Ancestor {
                    pid: 40,
                    comm: "node-agent".into(),
                }],
            }],
            targets: vec![],
            lost_records: 0,
            notes: vec![],
        }
    }

    fn spike(t_s: f64, latency_ns: u64) -> Spike {
        Spike {
            t_s,
            latency_ns,
            percentile: None,
            coincident_events: vec![],
            readers: vec![],
        }
    }

    #[test]
    fn reads_just_before_a_spike_are_listed_nearest_first() {
        let mut spikes = [spike(12.3, 41_000_000), spike(18.0, 1_000_000)];
        attach(&mut spikes, &raw(&[10.0, 11.5, 12.2979, 12.31, 12.5]), 1.0);
        let got: Vec<String> = spikes[0].readers.iter().map(describe).collect();
        assert_eq!(
            got,
            [
                "2.1 ms earlier PID 4242 (`ss`, child of `node-agent`) opened /proc/slabinfo",
                "10.0 ms into it PID 4242 (`ss`, child of `node-agent`) opened /proc/slabinfo",
                "800.0 ms earlier PID 4242 (`ss`, child of `node-agent`) opened /proc/slabinfo",
            ]
        );
        // 12.5 is after the first spike's end; 10.0 is more than 1 s before it.
        assert!(spikes[1].readers.is_empty(), "nothing read before the second one");
    }

    #[test]
    fn at_most_a_few_reads_per_spike() {
        let times: Vec<f64> = (0..100).map(|i| 11.5 + f64::from(i) * 0.008).collect();
        let mut spikes = [spike(12.3, 41_000_000)];
        attach(&mut spikes, &raw(&times), 1.0);
        assert_eq!(spikes[0].readers.len(), MAX_READS_PER_SPIKE);
        assert!(spikes[0].readers.iter().all(|r| r.before_ms.abs() < 40.0));
    }
}
