//! `probe-latency`'s derived numbers: each HDR histogram summed up as
//! percentiles, min, max, mean and spread, and the latency a spike must
//! reach to count at each percentile. The histograms are the raw record
//! (`measure::probe_latency`); everything said about them is computed here.

use hdrhistogram::Histogram;

/// The percentiles reported, as labels and quantiles.
pub const PERCENTILES: [(&str, f64); 5] = [
    ("50", 0.5),
    ("90", 0.9),
    ("99", 0.99),
    ("99.9", 0.999),
    ("99.99", 0.9999),
];

/// One histogram's summary, in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// In the order of [`PERCENTILES`].
    pub percentiles_ns: Vec<u64>,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
}

pub fn summary(histogram: &Histogram<u64>) -> Summary {
    Summary {
        percentiles_ns: PERCENTILES
            .iter()
            .map(|(_, q)| histogram.value_at_quantile(*q))
            .collect(),
        min_ns: histogram.min(),
        max_ns: histogram.max(),
        mean_ns: histogram.mean(),
        stdev_ns: histogram.stdev(),
    }
}

/// Each percentile's label with the latency, in ns, a spike must reach to
/// count at it. A raw latency reaches a percentile when it is in the same
/// HDR bucket or above, so this is the floor of the percentile's bucket,
/// not the (highest-equivalent) value the summary reports.
pub fn spike_floors(histogram: &Histogram<u64>, summary: &Summary) -> Vec<(String, u64)> {
    PERCENTILES
        .iter()
        .zip(&summary.percentiles_ns)
        .map(|((label, _), ns)| (label.to_string(), histogram.lowest_equivalent(*ns)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_spread_of_a_known_histogram() {
        let mut histogram = Histogram::<u64>::new(3).unwrap();
        for ns in 1..=1000u64 {
            histogram.record(ns * 1000).unwrap();
        }
        let s = summary(&histogram);
        assert_eq!(s.percentiles_ns.len(), PERCENTILES.len());
        // 3 significant digits: each value within 0.1% of the exact one.
        for ((_, q), got) in PERCENTILES.iter().zip(&s.percentiles_ns) {
            let exact = (q * 1000.0).ceil() * 1000.0;
            assert!(
                (*got as f64 - exact).abs() <= exact * 0.001 + 1.0,
                "p{q}: {got} vs {exact}"
            );
        }
        assert_eq!((s.min_ns, s.max_ns / 1000), (1000, 1000));
        assert!((s.mean_ns - 500_500.0).abs() < 1000.0, "{}", s.mean_ns);
        assert!(s.stdev_ns > 280_000.0 && s.stdev_ns < 300_000.0, "{}", s.stdev_ns);
    }

    #[test]
    fn a_spike_floor_is_its_bucket_floor() {
        let mut histogram = Histogram::<u64>::new(2).unwrap();
        histogram.record(123_456).unwrap();
        let s = summary(&histogram);
        let floors = spike_floors(&histogram, &s);
        assert_eq!(floors[0].0, "50");
        for (_, floor) in &floors {
            // The recorded value is in the bucket, at or above its floor.
            assert!(*floor <= 123_456 && *floor <= s.percentiles_ns[0]);
            assert_eq!(histogram.lowest_equivalent(123_456), *floor);
        }
    }
}
