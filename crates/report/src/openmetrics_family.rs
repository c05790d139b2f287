//! A metric family whose series come out in one order on every scrape.
//!
//! `prometheus-client`'s `Family` keeps its series in a `HashMap` with a
//! random seed per map, so each scrape listed them in another order: a
//! diff of two scrapes, a golden test or a person reading `curl` output
//! saw noise. This family keeps its series in a list and encodes them
//! sorted by their label values, numbers as numbers (`node="2"` before
//! `node="10"`).

use std::cmp::Ordering;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::{MetricType, TypedMetric};

pub type Labels = Vec<(String, String)>;

#[derive(Debug, Default)]
pub struct SortedFamily<M> {
    series: Vec<(Labels, M)>,
}

impl<M: Default> SortedFamily<M> {
    /// The series with these labels, made on first use.
    pub fn get_or_create(&mut self, labels: &Labels) -> &M {
        let at = match self.series.iter().position(|(l, _)| l == labels) {
            Some(at) => at,
            None => {
                self.series.push((labels.clone(), M::default()));
                self.series.len() - 1
            }
        };
        &self.series[at].1
    }
}

/// Label sets in order of their values, a value that is a whole number
/// compared as one.
fn natural(a: &Labels, b: &Labels) -> Ordering {
    for ((ka, va), (kb, vb)) in a.iter().zip(b) {
        let by_value = match (va.parse::<u64>(), vb.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => va.cmp(vb),
        };
        let order = ka.cmp(kb).then(by_value);
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

impl<M: EncodeMetric + TypedMetric + std::fmt::Debug + Send + Sync + 'static> EncodeMetric for SortedFamily<M> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let mut order: Vec<&(Labels, M)> = self.series.iter().collect();
        order.sort_by(|a, b| natural(&a.0, &b.0));
        for (labels, metric) in order {
            metric.encode(encoder.encode_family(labels)?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        M::TYPE
    }

    /// No series: no descriptor either, as `Family` does.
    fn is_empty(&self) -> bool {
        self.series.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_sort_as_numbers_then_text() {
        let l =
            |pairs: &[(&str, &str)]| -> Labels { pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
        let mut all = [
            l(&[("node", "10")]),
            l(&[("node", "2")]),
            l(&[("node", "x")]),
            l(&[("node", "2"), ("zone", "Normal")]),
            l(&[("node", "2"), ("zone", "DMA32")]),
        ];
        all.sort_by(natural);
        let shown: Vec<String> = all.iter().map(|l| format!("{l:?}")).collect();
        assert_eq!(
            all,
            [
                l(&[("node", "2")]),
                l(&[("node", "2"), ("zone", "DMA32")]),
                l(&[("node", "2"), ("zone", "Normal")]),
                l(&[("node", "10")]),
                l(&[("node", "x")]),
            ],
            "{shown:?}"
        );
    }
}
