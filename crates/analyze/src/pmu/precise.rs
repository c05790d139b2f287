//! Precise memory sampling, where the kernel offers it: the hardware
//! gives the data address of each sampled load or store, so no decoding
//! is needed. Intel's `cpu/mem-loads` (PEBS load-latency) and AMD's
//! `ibs_op` PMU are used through `PERF_SAMPLE_ADDR`; Arm's `arm_spe`
//! writes records of its own into perf's AUX buffer, which an aarch64
//! build reads (`probe::spe`) and decodes (`decode::spe`). VMs and most
//! clouds expose none of them; then only the ip-decode method runs, and
//! `hotlines` says why. Decided from the PMUs the kernel lists
//! (`kernel::sysfs::pmu::read_pmus`); nothing here opens an event.

use numasleuth_model::perf::pmu::EventSpec;
use numasleuth_parse::error::ParseError;
use numasleuth_parse::sysfs::pmu::{AliasError, Pmu, PmuReadings};
use numasleuth_parse::sysfs::pmu_format::{self, Term, TermValue};
use thiserror::Error;

/// Loads over the latency threshold between two samples (PEBS).
const MEM_LOADS_PERIOD: u64 = 1000;
/// Ops between two IBS samples (the hardware's minimum is 0x90 × 16).
const IBS_OP_PERIOD: u64 = 50_000;
/// Operations between two SPE samples: IBS's rate, rounded down to the
/// multiple of 256 the interval register holds (the driver would drop the
/// low bits), and raised by the driver to the PMU's minimum where that is
/// higher (`caps/min_interval`, 1024 on Neoverse N1).
const SPE_PERIOD: u64 = 49_920;
/// The `arm_spe` format fields set, each to 1, where `format/` has them:
/// timestamps (which close each record), only loads and stores kept
/// (their records carry the data address), and a random jitter on the
/// interval so a loop's period cannot alias with it. `pa_enable` (physical
/// addresses) stays 0: it needs CAP_PERFMON and the tally uses virtual
/// lines. `min_latency` stays 0: a latency floor would drop the stores a
/// writer makes to a line its own cache holds, one side of the contention.
const SPE_FIELDS: [&str; 4] = ["ts_enable", "load_filter", "store_filter", "jitter"];

/// How the chosen event's samples are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Sample records with `PERF_SAMPLE_ADDR` (PEBS, IBS).
    SampleAddr,
    /// SPE records in the AUX buffer.
    SpeAux,
}

/// Why no precise event is used here.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PreciseError {
    /// `why`: the PMU reader's reason.
    #[error("cpu/mem-loads cannot be encoded: {why}")]
    MemLoadsUnencodable { why: AliasError },
    #[error(
        "{pmu} is present, but only an aarch64 build reads its records (from the AUX buffer), and this build is \
         for another architecture"
    )]
    SpeNotRead { pmu: String },
    #[error("{pmu} cannot be encoded: {error}")]
    SpeUnencodable { pmu: String, error: ParseError },
    #[error(
        "precise memory sampling not available here (no cpu/mem-loads or cpu/mem-stores event, no ibs_op or \
         arm_spe PMU under /sys/bus/event_source/devices)"
    )]
    NotAvailable,
}

/// A precise event set up for sampling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precise {
    /// As reported in `method`: `precise:cpu/mem-loads`, `precise:ibs_op`
    /// or `precise:arm_spe_0`.
    pub method: String,
    pub event: EventSpec,
    pub period: u64,
    pub source: Source,
    /// What the reader must know about this event's coverage.
    pub note: String,
}

/// The precise-sampling sources present, by name (empty: none here).
pub fn available(readings: &PmuReadings) -> Vec<String> {
    let mut found = Vec::new();
    for pmu in &readings.pmus {
        if pmu.name == "cpu" {
            for event in ["mem-loads", "mem-stores"] {
                if pmu.events.iter().any(|e| e.name == event) {
                    found.push(format!("cpu/{event}"));
                }
            }
        } else if pmu.name == "ibs_op" || pmu.name.starts_with("arm_spe") {
            found.push(pmu.name.clone());
        }
    }
    found
}

fn spec(pmu: &Pmu, name: &str, config: &numasleuth_parse::sysfs::pmu_format::Config) -> EventSpec {
    super::plan::spec(name, pmu, *config)
}

/// The event to sample with, or why there is none usable here.
/// `reads_spe`: whether this build reads `arm_spe`'s AUX records
/// (`probe::spe::READS_SPE`, aarch64 builds).
pub fn choose(readings: &PmuReadings, reads_spe: bool) -> Result<Precise, PreciseError> {
    if let Some(ibs) = readings.pmus.iter().find(|p| p.name == "ibs_op") {
        return Ok(Precise {
            method: "precise:ibs_op".into(),
            event: spec(ibs, "ibs_op", &Default::default()),
            period: IBS_OP_PERIOD,
            source: Source::SampleAddr,
            note: "AMD IBS op sampling: loads and stores, told apart by the data source".into(),
        });
    }
    let cpu = readings.pmus.iter().find(|p| p.name == "cpu");
    if let Some((pmu, event)) = cpu.and_then(|p| Some((p, p.events.iter().find(|e| e.name == "mem-loads")?))) {
        let config = event
            .config
            .as_ref()
            .map_err(|why| PreciseError::MemLoadsUnencodable { why: why.clone() })?;
        return Ok(Precise {
            method: "precise:cpu/mem-loads".into(),
            event: spec(pmu, "mem-loads", config),
            period: MEM_LOADS_PERIOD,
            source: Source::SampleAddr,
            note: "PEBS load-latency sampling: loads only (stores are not sampled); a contended line shows as \
                   its readers' slow loads"
                .into(),
        });
    }
    if let Some(pmu) = readings.pmus.iter().find(|p| p.name.starts_with("arm_spe")) {
        if !reads_spe {
            return Err(PreciseError::SpeNotRead { pmu: pmu.name.clone() });
        }
        return spe(pmu);
    }
    Err(PreciseError::NotAvailable)
}

/// The `arm_spe_N` event: each of [`SPE_FIELDS`] the PMU's `format/` has,
/// set to 1; those it lacks are named in the note.
fn spe(pmu: &Pmu) -> Result<Precise, PreciseError> {
    let (present, missing): (Vec<&str>, Vec<&str>) = SPE_FIELDS.iter().partition(|f| pmu.formats.contains_key(**f));
    let terms: Vec<Term> = present
        .iter()
        .map(|name| Term {
            name: (*name).to_string(),
            value: TermValue::Number(1),
        })
        .collect();
    let config = pmu_format::encode(&terms, &pmu.formats).map_err(|error| PreciseError::SpeUnencodable {
        pmu: pmu.name.clone(),
        error,
    })?;
    let mut note = format!(
        "Arm SPE sampling: one operation in about {SPE_PERIOD} profiled, loads and stores kept, each with its data \
         address; its records are decoded from the published packet format and have not yet been checked on \
         SPE hardware"
    );
    if !missing.is_empty() {
        note.push_str(&format!(
            " ({}/format has no {}: left unset)",
            pmu.name,
            missing.join(", ")
        ));
    }
    Ok(Precise {
        method: format!("precise:{}", pmu.name),
        event: spec(pmu, &pmu.name, &config),
        period: SPE_PERIOD,
        source: Source::SpeAux,
        note,
    })
}

#[cfg(test)]
#[path = "precise_tests.rs"]
mod tests;
