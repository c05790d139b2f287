//! Timing: the cost of reading the clock (subtracted from samples and
//! reported), and the reference cycle rate used to print cycles next to ns.
//!
//! All samples are timed with `Instant` (CLOCK_MONOTONIC through the vDSO),
//! which is consistent across CPUs; that matters for the one-way
//! core-to-core variant, where the sender and receiver read it on
//! different CPUs.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Nanoseconds since `start`, saturating at `u64::MAX` (584 years), so a
/// sample's raw time fits the integer the documents carry.
pub fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Median cost of one `Instant::now()` in ns, from back-to-back reads.
pub fn timer_overhead_ns() -> f64 {
    const READS: usize = 2001;
    let mut deltas: Vec<u128> = Vec::with_capacity(READS);
    let mut last = Instant::now();
    for _ in 0..READS {
        let now = Instant::now();
        deltas.push(now.duration_since(last).as_nanos());
        last = now;
    }
    deltas.sort_unstable();
    deltas[READS / 2] as f64
}

/// A reference clock whose rate is known, for printing cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleClock {
    pub cycles_per_ns: f64,
    /// What the cycles are, e.g. "invariant TSC".
    pub source: String,
}

/// The invariant TSC rate on x86_64, measured against CLOCK_MONOTONIC over
/// `window_ms`. `Err` says why no cycle figure can be given. The TSC ticks
/// at a fixed rate (usually the base clock), so under boost the core's own
/// cycle count differs; the source text says so.
pub fn cycle_clock(window_ms: u64) -> Result<CycleClock, String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__cpuid, _rdtsc};
        // `__cpuid` is safe since Rust 1.87 (our rust-version is 1.88).
        let max_extended = __cpuid(0x8000_0000).eax;
        // Leaf 0x80000007 is read only when the maximum extended leaf has it.
        let invariant = max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0;
        if !invariant {
            return Err("the CPU reports no invariant TSC, so cycles are unknown".into());
        }
        let start = Instant::now();
        // SAFETY: rdtsc has no preconditions on x86_64.
        let tsc_start = unsafe { _rdtsc() };
        while start.elapsed().as_millis() < u128::from(window_ms.max(1)) {
            std::hint::spin_loop();
        }
        // SAFETY: as above.
        let tsc_end = unsafe { _rdtsc() };
        let ns = start.elapsed().as_nanos() as f64;
        Ok(CycleClock {
            cycles_per_ns: (tsc_end - tsc_start) as f64 / ns,
            source: "invariant TSC, a reference clock: the core clock differs under boost".into(),
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = window_ms;
        Err("no cycle counter whose rate is known on this architecture; times are in ns only".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_clock_is_plausible_or_explained() {
        match cycle_clock(5) {
            Ok(clock) => assert!(clock.cycles_per_ns > 0.1 && clock.cycles_per_ns < 20.0, "{clock:?}"),
            Err(reason) => assert!(!reason.is_empty()),
        }
    }
}
