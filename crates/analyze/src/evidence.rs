//! One piece of evidence behind a finding: the sentence a person reads, the
//! file or measurement it came from, and the numbers themselves, so that
//! `doctor --json`, `serve` and fleet tooling read values, not prose.
//!
//! Value names carry their unit (`free_pages`, `latency_ns`,
//! `bandwidth_bytes_per_sec`, `ratio`); a count's name says what it counts.
//! `source` is a kernel path as read (`/proc/zoneinfo`,
//! `/sys/devices/system/node/node1/meminfo`), `measured:<what>` for numbers
//! numasleuth measured itself, or `reference` for the published figures and
//! thresholds a finding compares against.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// Where numbers measured by `mem` come from.
pub const MEASURED_MEM: &str = "measured:mem";
/// Thresholds and published figures a finding compares against.
pub const REFERENCE: &str = "reference";

/// A number in evidence. Integers stay integers in JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    /// A list of ids (CPUs, nodes) or of counts, one per id.
    List(Vec<i64>),
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Int(v) => serializer.serialize_i64(*v),
            // JSON has no NaN or infinity: an undefined ratio is null.
            Value::Float(v) if !v.is_finite() => serializer.serialize_none(),
            Value::Float(v) => serializer.serialize_f64(*v),
            Value::List(v) => v.serialize(serializer),
        }
    }
}

fn clamp_u64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(clamp_u64(v))
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Self {
        Value::Int(clamp_u64(v as u64))
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<&[u32]> for Value {
    fn from(v: &[u32]) -> Self {
        Value::List(v.iter().map(|x| i64::from(*x)).collect())
    }
}

impl From<Vec<u32>> for Value {
    fn from(v: Vec<u32>) -> Self {
        Value::from(v.as_slice())
    }
}

impl From<&[u64]> for Value {
    fn from(v: &[u64]) -> Self {
        Value::List(v.iter().map(|x| clamp_u64(*x)).collect())
    }
}

impl From<&numasleuth_parse::IdList> for Value {
    fn from(v: &numasleuth_parse::IdList) -> Self {
        Value::from(v.ids())
    }
}

/// Named values in the order they were added (people read the JSON too).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values(Vec<(&'static str, Value)>);

impl Values {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// An integer value, for tests and consumers that know the name.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn float(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            Value::Float(v) => Some(*v),
            Value::Int(v) => Some(*v as f64),
            Value::List(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.0.iter().map(|(n, v)| (*n, v))
    }
}

impl Serialize for Values {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The sentence a person reads.
    pub text: String,
    /// The kernel file or measurement the numbers came from.
    pub source: String,
    /// The numbers in `text`, named with their units.
    pub values: Values,
}

impl Evidence {
    pub fn new(source: impl Into<String>, text: impl Into<String>) -> Self {
        Evidence {
            text: text.into(),
            source: source.into(),
            values: Values::default(),
        }
    }

    /// Adds (or replaces) the value `name`.
    pub fn with(mut self, name: &'static str, value: impl Into<Value>) -> Self {
        let value = value.into();
        match self.values.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.values.0.push((name, value)),
        }
        self
    }

    /// A per-node count as two lists of one length: `nodes` and `name`
    /// (e.g. `pages_by_node`), in node order.
    pub fn by_node(self, name: &'static str, counts: &std::collections::BTreeMap<u32, u64>) -> Self {
        let nodes: Vec<u32> = counts.keys().copied().collect();
        let values: Vec<u64> = counts.values().copied().collect();
        self.with("nodes", nodes).with(name, values.as_slice())
    }

    /// Adds `value` when it is known.
    pub fn with_some(self, name: &'static str, value: Option<impl Into<Value>>) -> Self {
        match value {
            Some(v) => self.with(name, v),
            None => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_text_source_and_ordered_values() {
        let e = Evidence::new("/proc/zoneinfo", "free 1 page")
            .with("free_pages", 174188u64)
            .with("low_pages", 163915u64)
            .with("ratio", 0.5)
            .with("cpus", vec![0u32, 2])
            .with("nan_ratio", f64::NAN);
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"text":"free 1 page","source":"/proc/zoneinfo","values":{"free_pages":174188,"low_pages":163915,"ratio":0.5,"cpus":[0,2],"nan_ratio":null}}"#
        );
    }

    #[test]
    fn with_replaces_a_value_and_huge_counts_saturate() {
        let e = Evidence::new("x", "y").with("n", 1u64).with("n", u64::MAX);
        assert_eq!(e.values.len(), 1);
        assert_eq!(e.values.int("n"), Some(i64::MAX));
        assert_eq!(e.values.float("n"), Some(i64::MAX as f64));
        assert!(Evidence::new("x", "y").with_some("n", None::<u64>).values.is_empty());
    }
}
