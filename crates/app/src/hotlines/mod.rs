//! Sampling a process's cache lines without a PMU: timer samples with
//! registers and code bytes (`probe`), each decoded to the address it is
//! about to touch (`decode`), tallied and ranked per line
//! (`analyze::hotlines`), and named by symbol or region ([`names`]).
//! `hotlines` prints what this returns; `doctor -p` joins it with the
//! process's other observations. See docs/hotlines.md.

pub mod error;
pub mod names;
pub mod spe;

use std::time::Duration;

use numasleuth_analyze::hotlines::sampled::{Sample, SampleTally, Seen};
use numasleuth_analyze::hotlines::spe_notes::spe_notes;
use numasleuth_analyze::hotlines::NamedLine;
use numasleuth_analyze::hotlines::{false_sharing, rank, AccessKind, Tally, LINE_BYTES};
use numasleuth_analyze::pmu::precise::{self, Precise, Source};
use numasleuth_decode::{Arch, Registers};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::sysfs::pmu::{read_pmus, PmuReadings};
use numasleuth_kernel::Root;
use numasleuth_model::perf::pmu::EventSpec;
use numasleuth_model::perf::sample::{SampleRaw, SpeRecordTotals};
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;
use numasleuth_probe::sample::{sample, Hooks, RegSample, SampleEvent, SampleSpec};
use numasleuth_probe::spe::SpeSpec;
use numasleuth_probe::ProbeError;

use crate::limits;
use crate::Observer;
pub use error::HotlinesError;
use names::Namer;

/// How lines are sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Precise memory sampling where the kernel offers it (cpu/mem-loads,
    /// ibs_op), else ip-decode; arm_spe only through `Precise`.
    Auto,
    /// Timer samples, the sampled instruction decoded (works in VMs).
    IpDecode,
    /// Precise memory sampling only: an error where there is none.
    Precise,
}

const RING_PAGES: usize = 64;
const RESCAN: Duration = Duration::from_millis(100);

/// One perf sample in `analyze::hotlines::sampled`'s terms: the stack
/// pointer, and the precise address or the decoder's answer.
fn seen(arch: Arch, s: &RegSample<'_>) -> Sample {
    let registers = Registers::from_perf(s.regs_mask, s.regs);
    let seen = match (s.addr, s.code) {
        (Some(address), _) => Seen::Precise {
            address,
            access: s
                .is_store
                .map(|store| if store { AccessKind::Write } else { AccessKind::Read }),
        },
        (None, None) => Seen::CodeUnreadable,
        (None, Some(_)) if s.regs.is_empty() => Seen::NoRegisters,
        (None, Some(code)) => {
            let (decoded, attributed) = arch.decode_sample(s.ip, code, s.code_back, &registers);
            Seen::Decoded(decoded, attributed)
        }
    };
    Sample {
        tid: s.tid,
        cpu: s.cpu,
        stack_pointer: registers.get(arch.stack_pointer()),
        seen,
    }
}

/// What a run samples with: perf sample records (the timer, PEBS, IBS),
/// or SPE's records in the AUX buffer.
enum Plan {
    Samples(SampleEvent),
    Spe { event: EventSpec, period: u64 },
}

/// A precise event as a plan, with its `method` name and note.
fn precise_plan(p: Precise) -> (Plan, String, String) {
    let plan = match p.source {
        Source::SampleAddr => Plan::Samples(SampleEvent::Precise {
            event: p.event,
            period: p.period,
        }),
        Source::SpeAux => Plan::Spe {
            event: p.event,
            period: p.period,
        },
    };
    (plan, p.method, p.note)
}

/// The event to sample on, its `method` name, and what to say about it.
/// `pmus`: the PMU list, read once per run, or why it could not be read;
/// `reads_spe`: whether this build reads SPE (`probe::spe::READS_SPE`).
fn choose_event(
    pmus: Result<&PmuReadings, &String>,
    args: &Sampling,
    reads_spe: bool,
) -> Result<(Plan, String, String), HotlinesError> {
    // The PMU list's reading failed with text of its own, so both reasons
    // are carried as the text they print.
    let choose_precise = || {
        pmus.map_err(String::clone)
            .and_then(|p| precise::choose(p, reads_spe).map_err(|e| e.to_string()))
    };
    let ip_decode = |why: String| {
        if Arch::HOST.is_none() {
            return Err(HotlinesError::NoDecoder { why });
        }
        let event = SampleEvent::CpuClock {
            period_ns: 1_000_000_000 / args.frequency,
        };
        Ok((Plan::Samples(event), "ip-decode".to_string(), why))
    };
    match args.method {
        Method::IpDecode => ip_decode("--method ip-decode was asked for".into()),
        Method::Precise => {
            let p = choose_precise().map_err(|why| HotlinesError::NoPrecise { why })?;
            Ok(precise_plan(p))
        }
        Method::Auto => match choose_precise() {
            Ok(p) if p.source == Source::SampleAddr => Ok(precise_plan(p)),
            // SPE's reading has not met hardware: ip-decode, which has, stays
            // the default, and SPE runs only when asked for by name.
            Ok(p) => ip_decode(format!(
                "{} is read only with --method precise (its reading has not met hardware yet): using ip-decode",
                p.method.trim_start_matches("precise:")
            )),
            Err(why) => ip_decode(format!("{why}: using ip-decode")),
        },
    }
}

/// How to sample: `hotlines`' flags, or `doctor -p`'s short probe.
pub struct Sampling {
    pub duration: Duration,
    pub top: usize,
    pub frequency: u64,
    pub method: Method,
}

impl Sampling {
    /// Its values within their limits, before anything is opened.
    fn check(&self) -> Result<(), limits::OutOfRange> {
        let window = (limits::SAMPLE_MIN, limits::SAMPLE_MAX);
        limits::duration("the sampling duration", self.duration, window)?;
        limits::count("the lines ranked", self.top as u64, (1, limits::TOP_MAX))?;
        limits::count(
            "the sampling rate in Hz",
            self.frequency,
            (limits::HZ_MIN, limits::HZ_MAX),
        )
    }
}

/// What one sampling of a process found: its lines ranked and named, the
/// raw counts, and what the reader must know.
pub struct Sampled {
    pub method: String,
    pub precise: Vec<String>,
    pub raw: SampleRaw,
    pub tally: Tally,
    pub lines: Vec<NamedLine>,
    pub notes: Vec<String>,
}

/// Samples every thread of `pid` as `how` says (until `stop`), and ranks
/// and names the lines; `observer` hears the "sampling…" line.
pub fn sample_process(
    root: &Root,
    (pid, topo): (u32, &Topology),
    how: &Sampling,
    stop: &Stop,
    observer: &dyn Observer,
) -> Result<Sampled, HotlinesError> {
    how.check()?;
    if !root.is_live() {
        return Err(HotlinesError::NotLive);
    }
    if read_process_stat(root, pid)?.is_kernel_thread() {
        return Err(HotlinesError::KernelThread { pid });
    }
    let pmus = read_pmus(root).map_err(|e| format!("cannot list the PMUs: {e}"));
    let precise = pmus.as_ref().map(precise::available).unwrap_or_default();
    let (plan, method, method_note) = choose_event(pmus.as_ref(), how, numasleuth_probe::spe::READS_SPE)?;
    let namer = Namer::load(root, pid);
    observer.progress(&format!(
        "numasleuth: sampling every thread of process {pid} ({method}) {}…",
        crate::how_long(Some(how.duration))
    ));
    let mut collector = SampleTally::new(topo.cpu_nodes());
    let paranoid = numasleuth_kernel::procfs::settings::perf_event_paranoid(root);
    let (raw, spe_totals) = run_plan(plan, (pid, how.duration, paranoid), &namer, &mut collector, stop)
        .map_err(|e| HotlinesError::sampling(e, &method))?;
    let mut notes = vec![method_note];
    notes.extend(collector.run_notes(&raw, &namer.notes));
    if let (Some(aux), Some(records)) = (raw.aux, spe_totals) {
        notes.extend(spe_notes(&aux, &records));
    }
    let lines = name_lines(&collector, &namer, how.top);
    Ok(Sampled {
        method,
        precise,
        raw,
        tally: collector.tally,
        lines,
        notes,
    })
}

/// Runs the plan's sampler for `(pid, duration, perf_event_paranoid)`,
/// tallying into `collector`; SPE runs also give their record totals.
fn run_plan(
    plan: Plan,
    (pid, duration, paranoid): (u32, Duration, Option<i32>),
    namer: &Namer,
    collector: &mut SampleTally,
    stop: &Stop,
) -> Result<(SampleRaw, Option<SpeRecordTotals>), ProbeError> {
    match plan {
        Plan::Samples(event) => {
            // Only ip-decode needs the registers and the decoder (its
            // choice checked that this build has one).
            let arch = Arch::HOST.unwrap_or(Arch::X86_64);
            let spec = SampleSpec {
                pid,
                duration,
                event,
                regs_mask: arch.sample_mask(),
                rescan_interval: RESCAN,
                ring_pages: RING_PAGES,
                paranoid,
            };
            let hooks = &mut Hooks {
                function_start: &|ip| code_start(arch, namer, ip),
                on_sample: &mut |s| collector.add(&seen(arch, s)),
            };
            Ok((sample(&spec, hooks, stop)?, None))
        }
        Plan::Spe { event, period } => {
            let spec = SpeSpec {
                pid,
                duration,
                event,
                period,
                rescan_interval: RESCAN,
                paranoid,
            };
            let (raw, totals) = spe::sample_spe(&spec, collector, stop)?;
            Ok((raw, Some(totals)))
        }
    }
}

/// Where to read a sample's code from: its function's start on x86-64 (to
/// find the instruction just before the IP by decoding forward); on A64,
/// whose instructions are 4 bytes, just the one before the IP, unless the
/// IP starts its function (the one before is then another function's).
fn code_start(arch: Arch, namer: &Namer, ip: u64) -> Option<u64> {
    let start = namer.function_start(ip);
    match arch {
        Arch::X86_64 => start,
        Arch::Aarch64 if start == Some(ip) => start,
        Arch::Aarch64 => ip.checked_sub(4),
    }
}

/// The `top` ranked lines with their symbols, region and false sharing.
fn name_lines(collector: &SampleTally, namer: &Namer, top: usize) -> Vec<NamedLine> {
    rank(&collector.tally, top)
        .into_iter()
        .map(|line| {
            let on_line = namer.symbols_on(line.address, LINE_BYTES);
            let (uses, is_false) = match collector.tally.lines.get(&line.address) {
                Some(tally) => false_sharing(tally, &on_line),
                None => (Vec::new(), false),
            };
            NamedLine {
                symbols: on_line.into_iter().map(|(name, _)| name).collect(),
                region: namer.region(line.address, &collector.stack_pointers),
                symbol_use: uses,
                false_sharing: is_false,
                line,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An aarch64 machine's PMU list with Arm SPE (`arm_spe_0`, its type
    /// and the format fields the event is encoded from).
    fn spe_machine() -> (tempfile::TempDir, PmuReadings) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("sys/bus/event_source/devices");
        for (path, text) in [
            ("software/type", "1\n"),
            ("arm_spe_0/type", "8\n"),
            ("arm_spe_0/format/ts_enable", "config:0\n"),
            ("arm_spe_0/format/load_filter", "config:33\n"),
            ("arm_spe_0/format/store_filter", "config:34\n"),
        ] {
            std::fs::create_dir_all(base.join(path).parent().unwrap()).unwrap();
            std::fs::write(base.join(path), text).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        let readings = read_pmus(&Root::directory(dir.path()).unwrap()).unwrap();
        (dir, readings)
    }

    fn sampling(method: Method) -> Sampling {
        Sampling {
            duration: Duration::from_secs(1),
            top: 10,
            frequency: 1000,
            method,
        }
    }

    /// SPE's reading has not met hardware: the default keeps to ip-decode
    /// and says why; asked for by name, SPE is what runs.
    #[test]
    fn spe_only_when_asked_for() {
        let (_dir, pmus) = spe_machine();
        let (plan, method, why) = choose_event(Ok(&pmus), &sampling(Method::Auto), true).unwrap();
        assert!(matches!(plan, Plan::Samples(SampleEvent::CpuClock { .. })));
        assert_eq!(method, "ip-decode");
        assert!(why.contains("arm_spe_0 is read only with --method precise"), "{why}");
        let (plan, method, _) = choose_event(Ok(&pmus), &sampling(Method::Precise), true).unwrap();
        assert!(matches!(plan, Plan::Spe { .. }));
        assert_eq!(method, "precise:arm_spe_0");
    }
}
