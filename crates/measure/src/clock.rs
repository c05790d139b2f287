//! Timing: the cost of reading the clock (subtracted from samples and
//! reported), and the reference cycle rate used to print cycles next to ns.
//!
//! All samples are timed with `Instant` (CLOCK_MONOTONIC through the vDSO),
//! which is consistent across CPUs; that matters for the one-way
//! core-to-core variant, where the sender and receiver read it on
//! different CPUs.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use thiserror::Error;

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

/// Why no cycle figure can be given next to the ns.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ClockError {
    #[error("the CPU reports no invariant TSC, so cycles are unknown")]
    NoInvariantTsc,
    #[error(
        "the generic timer (CNTVCT_EL0) ticks at {:.0} MHz, too coarse to express latencies in; times are in ns \
         only",
        ticks_per_ns * 1e3
    )]
    TooCoarse { ticks_per_ns: f64 },
    #[error("no cycle counter whose rate is known on this architecture; times are in ns only")]
    Unsupported,
}

/// The invariant TSC rate on x86_64, measured against CLOCK_MONOTONIC over
/// `window_ms`. `Err` says why no cycle figure can be given. The TSC ticks
/// at a fixed rate (usually the base clock), so under boost the core's own
/// cycle count differs; the source text says so.
pub fn cycle_clock(window_ms: u64) -> Result<CycleClock, ClockError> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__cpuid, _rdtsc};
        // `__cpuid` is safe since Rust 1.87 (our rust-version is 1.88).
        let max_extended = __cpuid(0x8000_0000).eax;
        // Leaf 0x80000007 is read only when the maximum extended leaf has it.
        let invariant = max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0;
        if !invariant {
            return Err(ClockError::NoInvariantTsc);
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
    #[cfg(target_arch = "aarch64")]
    {
        generic_timer(window_ms)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = window_ms;
        Err(ClockError::Unsupported)
    }
}

/// Below this rate a reference clock's ticks are too coarse to print
/// latencies in: a 25 MHz generic timer (Ampere Altra's) gives 100 ns as
/// 2.5 ticks. Armv8.6 and later tick at 1 GHz.
#[cfg(any(target_arch = "aarch64", test))]
const TICKS_PER_NS_MIN: f64 = 0.5;

/// Arm's generic timer: CNTVCT_EL0 counts at CNTFRQ_EL0 Hz, a fixed rate
/// the kernel lets user space read. Its rate is checked against
/// CLOCK_MONOTONIC over `window_ms` (firmware sets CNTFRQ; a wrong one is
/// not unheard of), and a slow one is declined.
#[cfg(target_arch = "aarch64")]
fn generic_timer(window_ms: u64) -> Result<CycleClock, ClockError> {
    fn read() -> (u64, u64) {
        let (count, frequency): (u64, u64);
        // SAFETY: reading CNTVCT_EL0 and CNTFRQ_EL0 has no side effects;
        // Linux enables both for EL0 (the vDSO's clock reads CNTVCT).
        unsafe {
            std::arch::asm!("isb", "mrs {c}, cntvct_el0", "mrs {f}, cntfrq_el0", c = out(reg) count, f = out(reg) frequency, options(nomem, nostack));
        }
        (count, frequency)
    }
    let start = Instant::now();
    let (first, frequency_hz) = read();
    while start.elapsed().as_millis() < u128::from(window_ms.max(1)) {
        std::hint::spin_loop();
    }
    let (last, _) = read();
    let ns = start.elapsed().as_nanos() as f64;
    let measured = last.wrapping_sub(first) as f64 / ns;
    judge_generic_timer(frequency_hz, measured)
}

/// The generic timer's figure from CNTFRQ_EL0 (`frequency_hz`) and the rate
/// measured against CLOCK_MONOTONIC (`measured_per_ns`).
#[cfg(any(target_arch = "aarch64", test))]
fn judge_generic_timer(frequency_hz: u64, measured_per_ns: f64) -> Result<CycleClock, ClockError> {
    let declared_per_ns = frequency_hz as f64 / 1e9;
    let agrees = declared_per_ns > 0.0 && (measured_per_ns / declared_per_ns - 1.0).abs() <= 0.05;
    let per_ns = if agrees { declared_per_ns } else { measured_per_ns };
    if !(per_ns.is_finite() && per_ns >= TICKS_PER_NS_MIN) {
        return Err(ClockError::TooCoarse { ticks_per_ns: per_ns });
    }
    let note = if agrees {
        String::new()
    } else {
        format!(" (CNTFRQ_EL0 says {:.0} MHz; measured)", declared_per_ns * 1e3)
    };
    Ok(CycleClock {
        cycles_per_ns: per_ns,
        source: format!(
            "Arm generic timer (CNTVCT_EL0) at {:.0} MHz{note}, a reference clock: not core cycles",
            per_ns * 1e3
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generic_timer_is_used_only_when_fine_enough_and_checked() {
        // Armv8.6's 1 GHz timer, as declared.
        let ghz = judge_generic_timer(1_000_000_000, 1.001).unwrap();
        assert_eq!(ghz.cycles_per_ns, 1.0);
        assert!(
            ghz.source.starts_with("Arm generic timer (CNTVCT_EL0) at 1000 MHz,"),
            "{}",
            ghz.source
        );
        // Ampere Altra's 25 MHz: declined, saying why.
        let slow = judge_generic_timer(25_000_000, 0.025).unwrap_err();
        assert_eq!(slow, ClockError::TooCoarse { ticks_per_ns: 0.025 });
        assert_eq!(
            slow.to_string(),
            "the generic timer (CNTVCT_EL0) ticks at 25 MHz, too coarse to express latencies in; times are in ns only"
        );
        // A CNTFRQ that disagrees with the clock: the measured rate wins.
        let wrong = judge_generic_timer(25_000_000, 1.0).unwrap();
        assert_eq!(wrong.cycles_per_ns, 1.0);
        assert!(
            wrong.source.contains("CNTFRQ_EL0 says 25 MHz; measured"),
            "{}",
            wrong.source
        );
    }

    #[test]
    fn cycle_clock_is_plausible_or_explained() {
        match cycle_clock(5) {
            Ok(clock) => assert!(clock.cycles_per_ns > 0.1 && clock.cycles_per_ns < 20.0, "{clock:?}"),
            Err(reason) => assert!(!reason.to_string().is_empty()),
        }
    }
}
