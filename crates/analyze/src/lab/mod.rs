//! The contention lab's arithmetic and verdicts, kept pure so a run's raw
//! samples can be replayed: rates from operation counts and spans,
//! slowdowns with an honest range, and the "what this means" sentences,
//! each built from the numbers it states and never canned.

pub mod documents;
pub mod false_sharing;
pub mod locks;
pub mod remote_global;

use serde::Serialize;

use crate::stats::{summarize, Summary};

/// One sample as a workload measured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Raw {
    pub span_ns: u64,
    pub ops_per_thread: Vec<u64>,
    /// CPU time each thread got; empty or 0 when unknown.
    pub cpu_ns_per_thread: Vec<u64>,
}

impl Raw {
    /// The smallest share of the wall time any thread had its CPU: near
    /// 1 on a quiet machine, lower when other work took turns on it.
    pub fn cpu_share(&self) -> Option<f64> {
        if self.span_ns == 0 || self.cpu_ns_per_thread.is_empty() || self.cpu_ns_per_thread.contains(&0) {
            return None;
        }
        let least = self.cpu_ns_per_thread.iter().copied().min()?;
        Some((least as f64 / self.span_ns as f64).min(1.0))
    }

    fn ops_per_sec(&self) -> Option<f64> {
        if self.span_ns == 0 {
            return None;
        }
        Some(self.ops_per_thread.iter().sum::<u64>() as f64 * 1e9 / self.span_ns as f64)
    }

    fn threads(&self) -> f64 {
        self.ops_per_thread.len().max(1) as f64
    }
}

/// Throughput of one configuration over its samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Throughput {
    /// All threads together.
    pub ops_per_sec: Summary,
    /// The total shared evenly: what one thread achieved.
    pub ops_per_sec_per_thread: Summary,
    /// [`Raw::cpu_share`] over the samples; `None` when unknown.
    pub cpu_share: Option<Summary>,
}

pub fn throughput(raw: &[Raw]) -> Option<Throughput> {
    let total: Vec<f64> = raw.iter().filter_map(Raw::ops_per_sec).collect();
    let per_thread: Vec<f64> = raw
        .iter()
        .filter_map(|r| Some(r.ops_per_sec()? / r.threads()))
        .collect();
    let shares: Vec<f64> = raw.iter().filter_map(Raw::cpu_share).collect();
    Some(Throughput {
        ops_per_sec: summarize(&total)?,
        ops_per_sec_per_thread: summarize(&per_thread)?,
        cpu_share: summarize(&shares),
    })
}

/// Below this median share of its CPU, a configuration's threads were
/// crowded by other work.
pub const CPU_SHARE_LIMIT: f64 = 0.9;

/// One sentence for all configurations whose threads did not have their
/// CPUs to themselves, naming the worst.
pub fn cpu_share_warning<'a>(rows: impl Iterator<Item = (String, Option<&'a Summary>)>) -> Option<String> {
    let mut crowded: Vec<(String, f64)> = Vec::new();
    let mut total = 0;
    for (name, share) in rows {
        total += 1;
        if let Some(share) = share.filter(|s| s.median < CPU_SHARE_LIMIT) {
            crowded.push((name, share.median));
        }
    }
    let (name, share) = crowded.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(format!(
        "{} of {total} configurations ran with a thread that had its CPU less than {:.0}% of the time (worst: \
         {name}, {:.0}%, from CLOCK_THREAD_CPUTIME_ID): other processes, or more threads than CPUs, took turns \
         on these CPUs, so those rates are lower and noisier than this machine can do",
        crowded.len(),
        CPU_SHARE_LIMIT * 100.0,
        share * 100.0
    ))
}

/// How many times slower one configuration is than another, with the
/// widest range their middle 80% allow: (fast p10 / slow p90) to
/// (fast p90 / slow p10). Only a `low` above 1 is a clear slowdown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

/// `fast` and `slow` are rates (higher is better); the ratio is fast/slow.
pub fn slowdown(slow: &Summary, fast: &Summary) -> Option<Ratio> {
    if slow.median <= 0.0 || slow.p10 <= 0.0 || slow.p90 <= 0.0 {
        return None;
    }
    Some(Ratio {
        median: fast.median / slow.median,
        low: fast.p10 / slow.p90,
        high: fast.p90 / slow.p10,
    })
}

/// A clear difference needs the whole range beyond this factor: a
/// small margin over 1 so run-to-run jitter is not called an effect.
pub const CLEAR_FACTOR: f64 = 1.10;

impl Ratio {
    pub fn clearly_slower(&self) -> bool {
        self.low > CLEAR_FACTOR
    }

    pub fn clearly_faster(&self) -> bool {
        self.high < 1.0 / CLEAR_FACTOR
    }

    /// "3.2× (2.9–3.6)".
    pub fn describe(&self) -> String {
        format!("{}× ({}–{})", factor(self.median), factor(self.low), factor(self.high))
    }
}

/// A factor with two significant decimals below 10, whole above.
pub fn factor(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// A rate for people: "12.3 M ops/s".
pub fn rate(ops_per_sec: f64) -> String {
    let (scaled, unit) = if ops_per_sec >= 1e9 {
        (ops_per_sec / 1e9, "G")
    } else if ops_per_sec >= 1e6 {
        (ops_per_sec / 1e6, "M")
    } else if ops_per_sec >= 1e3 {
        (ops_per_sec / 1e3, "k")
    } else {
        (ops_per_sec, "")
    };
    let digits = if scaled >= 100.0 || unit.is_empty() { 0 } else { 1 };
    if unit.is_empty() {
        format!("{scaled:.digits$} ops/s")
    } else {
        format!("{scaled:.digits$} {unit} ops/s")
    }
}

/// Threads that took turns on CPUs make every rate suspect.
pub fn oversubscribed_warning(oversubscribed: bool) -> Option<String> {
    oversubscribed.then(|| {
        "more threads than CPUs: threads took turns on CPUs, so these rates include scheduling and spinning \
         waiters that slept; compare them with care"
            .to_string()
    })
}

/// One sentence for all configurations too noisy to trust (naming the
/// worst), rather than one per row; and one for the rows too thin to judge.
pub fn spread_warning<'a>(rows: impl Iterator<Item = (String, &'a Summary)>) -> Vec<String> {
    crate::stats::rows_spread_warning("configurations", rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(median: f64, p10: f64, p90: f64) -> Summary {
        Summary {
            median,
            p10,
            p90,
            samples: 5,
        }
    }

    #[test]
    fn rates_come_from_counts_and_spans() {
        let raw = vec![
            Raw {
                span_ns: 1_000_000,
                ops_per_thread: vec![1000, 3000],
                cpu_ns_per_thread: vec![1_000_000, 500_000],
            },
            Raw {
                span_ns: 2_000_000,
                ops_per_thread: vec![2000, 2000],
                cpu_ns_per_thread: vec![],
            },
        ];
        let t = throughput(&raw).unwrap();
        assert_eq!(t.ops_per_sec.samples, 2);
        // 4M ops/s and 2M ops/s.
        assert_eq!(t.ops_per_sec.median, 3e6);
        assert_eq!(t.ops_per_sec_per_thread.median, 1.5e6);
        // Only the first sample knows its CPU time; its slower thread had half.
        assert_eq!(t.cpu_share.unwrap().median, 0.5);
        assert_eq!(t.cpu_share.unwrap().samples, 1);
        assert_eq!(
            throughput(&[Raw {
                span_ns: 0,
                ops_per_thread: vec![1],
                cpu_ns_per_thread: vec![1],
            }]),
            None
        );
    }

    #[test]
    fn slowdown_range_is_conservative() {
        let slow = summary(10.0, 9.0, 11.0);
        let fast = summary(30.0, 27.0, 33.0);
        let r = slowdown(&slow, &fast).unwrap();
        assert_eq!(r.median, 3.0);
        assert!((r.low - 27.0 / 11.0).abs() < 1e-12);
        assert!((r.high - 33.0 / 9.0).abs() < 1e-12);
        assert!(r.clearly_slower());
        assert_eq!(r.describe(), "3.00× (2.45–3.67)");
        let same = slowdown(&slow, &summary(10.5, 8.0, 12.0)).unwrap();
        assert!(!same.clearly_slower() && !same.clearly_faster());
        assert_eq!(slowdown(&summary(0.0, 0.0, 0.0), &fast), None);
    }

    #[test]
    fn human_rates() {
        assert_eq!(rate(12_345_678.0), "12.3 M ops/s");
        assert_eq!(rate(950.0), "950 ops/s");
        assert_eq!(rate(2.5e9), "2.5 G ops/s");
    }

    #[test]
    fn crowded_cpus_are_named() {
        let quiet = summary(0.99, 0.98, 1.0);
        let crowded = summary(0.5, 0.45, 0.55);
        let rows = vec![
            ("a".to_string(), Some(&quiet)),
            ("b".to_string(), Some(&crowded)),
            ("c".to_string(), None),
        ];
        let text = cpu_share_warning(rows.into_iter()).unwrap();
        assert!(text.starts_with("1 of 3 configurations"), "{text}");
        assert!(text.contains("worst: b, 50%"), "{text}");
        assert_eq!(
            cpu_share_warning(vec![("a".to_string(), Some(&quiet))].into_iter()),
            None
        );
    }

    #[test]
    fn one_warning_names_the_worst_noisy_row() {
        let tight = summary(100.0, 99.0, 101.0);
        let noisy = summary(100.0, 50.0, 150.0);
        let text = spread_warning(vec![("a".to_string(), &tight), ("b".to_string(), &noisy)].into_iter());
        assert_eq!(text.len(), 1, "{text:?}");
        assert!(text[0].starts_with("1 of 2 configurations"), "{text:?}");
        assert!(text[0].contains("worst: b, 100%"), "{text:?}");
        assert!(spread_warning(vec![("a".to_string(), &tight)].into_iter()).is_empty());
    }
}
