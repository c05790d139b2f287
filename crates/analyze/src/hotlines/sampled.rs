//! The decode-to-tally step of `hotlines`: each sample, as the collector
//! saw it and the decoder answered, becomes touches in a [`Tally`], with
//! the counts the notes need (skid, precise samples) and the stack
//! pointers that name "stack of TID". Pure, so it is tested on synthetic
//! samples; the cli only decodes and hands the answer here.

use std::collections::BTreeMap;

use numasleuth_model::perf::decoded::{AccessKind, Attributed, Decoded, Unknown};
use numasleuth_model::perf::sample::SampleRaw;

use super::{Tally, Touch};

/// Threads whose stack pointer is remembered (to name "stack of TID").
pub const MAX_STACKS: usize = 65_536;

/// What one sample carried, after decoding where there was code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A precise event's data address (`PERF_SAMPLE_ADDR`, or an SPE
    /// record's) and what the access did, where the sample said (`None`:
    /// not said, taken as a read).
    Precise { address: u64, access: Option<AccessKind> },
    /// A precise sample of an operation that touches no data memory (an
    /// SPE record of a branch or other operation).
    PreciseNoMemory,
    /// No code bytes could be read at the IP.
    CodeUnreadable,
    /// The thread was in the kernel: no user registers came.
    NoRegisters,
    /// The decoder's answer and which instruction it was about.
    Decoded(Decoded, Attributed),
}

/// One sample: who, where, its stack pointer when sampled, and what it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub tid: u32,
    pub cpu: Option<u32>,
    pub stack_pointer: Option<u64>,
    pub seen: Seen,
}

/// Everything a sampling run derives from its samples.
#[derive(Debug, Clone, Default)]
pub struct SampleTally {
    pub tally: Tally,
    /// CPU → node (`Topology::cpu_nodes`); a CPU not in it has no node.
    cpu_nodes: BTreeMap<u32, u32>,
    /// Each thread's last stack pointer, at most [`MAX_STACKS`] threads.
    pub stack_pointers: BTreeMap<u32, u64>,
    /// Samples attributed to the instruction just completed (skid).
    pub skid_attributed: u64,
    /// Samples that carried a hardware data address.
    pub precise_samples: u64,
}

impl SampleTally {
    pub fn new(cpu_nodes: BTreeMap<u32, u32>) -> Self {
        SampleTally {
            cpu_nodes,
            ..SampleTally::default()
        }
    }

    pub fn add(&mut self, s: &Sample) {
        if let Some(sp) = s.stack_pointer {
            if self.stack_pointers.len() < MAX_STACKS || self.stack_pointers.contains_key(&s.tid) {
                self.stack_pointers.insert(s.tid, sp);
            }
        }
        let node = s.cpu.and_then(|c| self.cpu_nodes.get(&c).copied());
        let touch = |address, access| Touch {
            tid: s.tid,
            cpu: s.cpu,
            node,
            address,
            access,
        };
        match &s.seen {
            Seen::Precise { address, access } => {
                self.precise_samples += 1;
                if *address == 0 {
                    self.tally.sample_unknown("no data address in the precise sample");
                    return;
                }
                self.tally
                    .sample_with(&[touch(*address, access.unwrap_or(AccessKind::Read))]);
            }
            Seen::PreciseNoMemory => {
                self.precise_samples += 1;
                self.tally.sample_without_memory();
            }
            Seen::CodeUnreadable => self.tally.sample_unknown(Unknown::CodeUnreadable.describe()),
            Seen::NoRegisters => self.tally.sample_unknown(Unknown::MissingRegister.describe()),
            Seen::Decoded(decoded, attributed) => {
                if *attributed == Attributed::Previous {
                    self.skid_attributed += 1;
                }
                match decoded {
                    Decoded::NoMemory => self.tally.sample_without_memory(),
                    Decoded::Unknown(why) => self.tally.sample_unknown(why.describe()),
                    Decoded::Unsupported => self.tally.sample_unknown("architecture not decoded"),
                    Decoded::Accesses(accesses) => {
                        let touches: Vec<Touch> = accesses.iter().map(|a| touch(a.address, a.kind)).collect();
                        self.tally.sample_with(&touches);
                    }
                }
            }
        }
    }

    /// What the reader must know about the sampling that the samples
    /// themselves say: how many decoded ones were skid-attributed, and
    /// accesses dropped past the line cap.
    pub fn notes(&self) -> (Option<String>, Option<String>) {
        // Only decoded samples can be attributed this way (precise ones
        // carry their address).
        let skid = (self.tally.samples > self.precise_samples).then(|| {
            format!(
                "{} of {} samples attributed to the instruction just completed (the timer lands after a slow access; see docs/hotlines.md)",
                self.skid_attributed, self.tally.samples
            )
        });
        let dropped = (self.tally.dropped > 0).then(|| {
            format!(
                "{} accesses to lines past the tracked maximum were not tallied",
                self.tally.dropped
            )
        });
        (skid, dropped)
    }

    /// What the reader must know about how complete the run was, in the
    /// order shown: skid, then `naming`'s notes (the caller's, about
    /// naming lines), the process's exit, lost samples, the collector's
    /// problems, and lines past the tracked maximum.
    pub fn run_notes(&self, raw: &SampleRaw, naming: &[String]) -> Vec<String> {
        let (skid, dropped) = self.notes();
        let mut notes: Vec<String> = skid.into_iter().collect();
        notes.extend(naming.iter().cloned());
        if raw.process_exited {
            notes.push(format!(
                "process {} exited after {:.1} s: showing what was sampled until then",
                raw.pid, raw.duration_s
            ));
        }
        let lost = raw
            .threads
            .iter()
            .fold(0u64, |sum, t| sum.saturating_add(t.lost_samples));
        if lost > 0 {
            notes.push(format!("{lost} samples lost (full ring buffer)"));
        }
        notes.extend(raw.problems.iter().cloned());
        notes.extend(dropped);
        notes
    }
}

#[cfg(test)]
mod tests {
    use numasleuth_model::perf::decoded::MemoryAccess;

    use super::*;

    fn sample(tid: u32, cpu: Option<u32>, seen: Seen) -> Sample {
        Sample {
            tid,
            cpu,
            stack_pointer: Some(0x7000 + u64::from(tid)),
            seen,
        }
    }

    #[test]
    fn each_kind_of_sample_lands_where_it_belongs() {
        let mut t = SampleTally::new([(0, 0), (1, 1)].into_iter().collect());
        let rmw = |address| MemoryAccess {
            address,
            size_bytes: 8,
            kind: AccessKind::ReadModifyWrite,
        };
        let decoded = Decoded::Accesses(vec![rmw(0x1000), rmw(0x2040)]);
        t.add(&sample(7, Some(1), Seen::Decoded(decoded, Attributed::Previous)));
        t.add(&sample(7, Some(9), Seen::Decoded(Decoded::NoMemory, Attributed::AtIp)));
        let store = Seen::Precise {
            address: 0x1008,
            access: Some(AccessKind::Write),
        };
        t.add(&sample(8, Some(0), store));
        t.add(&sample(
            8,
            None,
            Seen::Precise {
                address: 0,
                access: None,
            },
        ));
        t.add(&sample(9, None, Seen::CodeUnreadable));
        t.add(&sample(9, None, Seen::NoRegisters));
        assert_eq!((t.tally.samples, t.tally.no_memory), (6, 1));
        assert_eq!((t.skid_attributed, t.precise_samples), (1, 2));
        let line = &t.tally.lines[&0x1000];
        assert_eq!((line.samples, line.reads, line.writes, line.rmw), (2, 1, 2, 1));
        assert_eq!(line.nodes.iter().copied().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(t.tally.lines[&0x2040].samples, 1);
        let unknown: u64 = t.tally.unknown.values().sum();
        assert_eq!(unknown, 3);
        // 6 samples, 1 at no memory, 3 unknown: 2 accesses found.
        assert_eq!(t.tally.accesses(), 2);
        assert_eq!(t.stack_pointers[&9], 0x7009);
        let (skid, dropped) = t.notes();
        assert!(skid.is_some_and(|s| s.starts_with("1 of 6 samples")));
        assert_eq!(dropped, None);
    }

    #[test]
    fn spe_atomics_count_as_read_modify_writes_and_branches_as_no_memory() {
        let mut t = SampleTally::new([(0, 0), (4, 1)].into_iter().collect());
        let rmw = Seen::Precise {
            address: 0x2000,
            access: Some(AccessKind::ReadModifyWrite),
        };
        t.add(&sample(1, Some(0), rmw));
        let load = Seen::Precise {
            address: 0x2008,
            access: Some(AccessKind::Read),
        };
        t.add(&sample(2, Some(4), load));
        t.add(&sample(2, Some(4), Seen::PreciseNoMemory));
        assert_eq!((t.tally.samples, t.tally.no_memory, t.precise_samples), (3, 1, 3));
        let line = &t.tally.lines[&0x2000];
        assert_eq!((line.samples, line.reads, line.writes, line.rmw), (2, 2, 1, 1));
        assert_eq!(line.nodes.iter().copied().collect::<Vec<_>>(), [0, 1]);
        // Every sample was precise: no skid note.
        assert_eq!(t.notes().0, None);
    }

    #[test]
    fn a_cpu_without_a_node_gives_a_touch_without_one() {
        let mut t = SampleTally::new(BTreeMap::new());
        let load = Seen::Precise {
            address: 0x40,
            access: None,
        };
        t.add(&sample(1, Some(3), load));
        let line = &t.tally.lines[&0x40];
        assert!(line.nodes.is_empty());
        assert_eq!((line.reads, line.writes), (1, 0));
        // Only precise samples: no skid note.
        assert_eq!(t.notes().0, None);
    }

    #[test]
    fn run_notes_say_exit_losses_and_problems_in_order() {
        use numasleuth_model::perf::sample::ThreadSamples;
        let thread = |tid, lost_samples| ThreadSamples {
            tid,
            samples: 10,
            lost_samples,
            exited: false,
        };
        let mut raw = SampleRaw {
            pid: 42,
            duration_s: 1.26,
            threads: vec![thread(1, 3), thread(2, u64::MAX)],
            process_exited: true,
            problems: vec!["thread 7 not attached".into()],
            aux: None,
        };
        let t = SampleTally::new(BTreeMap::new());
        assert_eq!(
            t.run_notes(&raw, &["names: maps unreadable".into()]),
            [
                "names: maps unreadable",
                "process 42 exited after 1.3 s: showing what was sampled until then",
                "18446744073709551615 samples lost (full ring buffer)",
                "thread 7 not attached",
            ]
        );
        raw.process_exited = false;
        raw.threads = vec![thread(1, 0)];
        raw.problems.clear();
        assert!(t.run_notes(&raw, &[]).is_empty());
    }
}
