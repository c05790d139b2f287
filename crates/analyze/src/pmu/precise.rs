//! Precise memory sampling, where the kernel offers it: the hardware
//! gives the data address of each sampled load or store, so no decoding
//! is needed. Intel's `cpu/mem-loads` (PEBS load-latency) and AMD's
//! `ibs_op` PMU are used through `PERF_SAMPLE_ADDR`; Arm's `arm_spe`
//! delivers its records through the AUX buffer, which this build does not
//! read. VMs and most clouds expose none of them; then only the ip-decode
//! method runs, and `hotlines` says why. Decided from the PMUs the kernel
//! lists (`kernel::sysfs::pmu::read_pmus`); nothing here opens an event.

use numasleuth_model::perf::pmu::EventSpec;
use numasleuth_parse::sysfs::pmu::{Pmu, PmuReadings};

/// Loads over the latency threshold between two samples (PEBS).
const MEM_LOADS_PERIOD: u64 = 1000;
/// Ops between two IBS samples (the hardware's minimum is 0x90 × 16).
const IBS_OP_PERIOD: u64 = 50_000;

/// A precise event set up for sampling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precise {
    /// As reported in `method`: `precise:cpu/mem-loads` or `precise:ibs_op`.
    pub method: String,
    pub event: EventSpec,
    pub period: u64,
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
pub fn choose(readings: &PmuReadings) -> Result<Precise, String> {
    if let Some(ibs) = readings.pmus.iter().find(|p| p.name == "ibs_op") {
        return Ok(Precise {
            method: "precise:ibs_op".into(),
            event: spec(ibs, "ibs_op", &Default::default()),
            period: IBS_OP_PERIOD,
            note: "AMD IBS op sampling: loads and stores, told apart by the data source".into(),
        });
    }
    let cpu = readings.pmus.iter().find(|p| p.name == "cpu");
    if let Some((pmu, event)) = cpu.and_then(|p| Some((p, p.events.iter().find(|e| e.name == "mem-loads")?))) {
        let config = event
            .config
            .as_ref()
            .map_err(|why| format!("cpu/mem-loads cannot be encoded: {why}"))?;
        return Ok(Precise {
            method: "precise:cpu/mem-loads".into(),
            event: spec(pmu, "mem-loads", config),
            period: MEM_LOADS_PERIOD,
            note: "PEBS load-latency sampling: loads only (stores are not sampled); a contended line shows as \
                   its readers' slow loads"
                .into(),
        });
    }
    if readings.pmus.iter().any(|p| p.name.starts_with("arm_spe")) {
        return Err(
            "arm_spe is present, but its records come through the AUX buffer, which this build does not read".into(),
        );
    }
    Err(not_available())
}

fn not_available() -> String {
    "precise memory sampling not available here (no cpu/mem-loads or cpu/mem-stores event, no ibs_op or \
     arm_spe PMU under /sys/bus/event_source/devices)"
        .to_string()
}

#[cfg(test)]
#[path = "precise_tests.rs"]
mod tests;
