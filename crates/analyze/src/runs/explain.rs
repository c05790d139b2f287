//! Which observed attribute of a run (start node, where .bss landed, …)
//! tells the slow runs from the fast ones.
//!
//! **Separation** is the balanced leave-one-out accuracy of the rule "a
//! run falls in the cluster most other runs with the same value fell in":
//! each run is predicted from the *other* runs only, a tie or a value no
//! other run has predicts nothing (counted wrong), and the recalls of the
//! slow and fast clusters are averaged. So:
//! - a value that splits the clusters exactly scores 1.0;
//! - a value unique to each run (a run counter, 12 start CPUs in 12 runs)
//!   predicts nothing and scores 0, where plain purity would give it 1.0;
//! - an attribute equal in every run says nothing and is marked constant;
//! - a run whose value is unknown counts against its attribute.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::attributes::{Attributes, RunAttribute};

/// Separation from which an attribute is said to explain the modes: at
/// most one run in five of each cluster mispredicted on average.
pub const EXPLAINS: f64 = 0.8;

/// How one attribute lines up with the clusters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub attribute: RunAttribute,
    /// Balanced leave-one-out accuracy, 0 to 1.
    pub separation: f64,
    /// Values seen more often in slow runs than in fast ones, and the
    /// reverse; a value seen equally often in both is in neither.
    pub slow_values: Vec<String>,
    pub fast_values: Vec<String>,
    /// Slow runs with a slow value, of all slow runs; the same for fast.
    pub slow_matching: usize,
    pub slow_total: usize,
    pub fast_matching: usize,
    pub fast_total: usize,
    /// Runs for which the attribute was not observed.
    pub unknown: usize,
    /// One known value in every run where it is known.
    pub constant: bool,
}

impl Explanation {
    pub fn explains(&self) -> bool {
        !self.constant && self.separation >= EXPLAINS
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    slow: usize,
    fast: usize,
}

/// Every attribute any run has, ranked by separation (then by fewer
/// values, then in [`RunAttribute::reading_rank`]). `slow[i]` says whether run `i` is in the slow
/// cluster; `attributes[i]` are run `i`'s observations.
pub fn explain(attributes: &[Attributes], slow: &[bool]) -> Vec<Explanation> {
    let names: BTreeSet<RunAttribute> = attributes.iter().flat_map(|a| a.keys().copied()).collect();
    let mut ranked: Vec<Explanation> = names.into_iter().map(|name| one(name, attributes, slow)).collect();
    ranked.sort_by(|a, b| {
        b.separation
            .total_cmp(&a.separation)
            .then((a.slow_values.len() + a.fast_values.len()).cmp(&(b.slow_values.len() + b.fast_values.len())))
            .then(a.attribute.reading_rank().cmp(&b.attribute.reading_rank()))
    });
    ranked
}

fn one(name: RunAttribute, attributes: &[Attributes], slow: &[bool]) -> Explanation {
    let value = |i: usize| attributes.get(i).and_then(|a| a.get(&name));
    let mut tallies: BTreeMap<&String, Tally> = BTreeMap::new();
    for (i, is_slow) in slow.iter().enumerate() {
        if let Some(v) = value(i) {
            let tally = tallies.entry(v).or_default();
            if *is_slow {
                tally.slow += 1;
            } else {
                tally.fast += 1;
            }
        }
    }
    let slow_total = slow.iter().filter(|s| **s).count();
    let fast_total = slow.len() - slow_total;
    let (mut slow_right, mut fast_right) = (0usize, 0usize);
    for (i, is_slow) in slow.iter().enumerate() {
        let Some(t) = value(i).and_then(|v| tallies.get(v)) else {
            continue;
        };
        // The other runs with this value, leaving run i out.
        let (others_slow, others_fast) = if *is_slow {
            (t.slow - 1, t.fast)
        } else {
            (t.slow, t.fast - 1)
        };
        match (is_slow, others_slow.cmp(&others_fast)) {
            (true, std::cmp::Ordering::Greater) => slow_right += 1,
            (false, std::cmp::Ordering::Less) => fast_right += 1,
            _ => {}
        }
    }
    let recall = |right: usize, total: usize| if total == 0 { 0.0 } else { right as f64 / total as f64 };
    let constant = tallies.len() <= 1;
    let separation = if constant {
        0.0
    } else {
        (recall(slow_right, slow_total) + recall(fast_right, fast_total)) / 2.0
    };
    let pick = |f: fn(&Tally) -> bool| -> Vec<String> {
        tallies
            .iter()
            .filter(|(_, t)| f(t))
            .map(|(v, _)| (*v).clone())
            .collect()
    };
    let slow_values = pick(|t| t.slow > t.fast);
    let fast_values = pick(|t| t.fast > t.slow);
    let sum = |values: &[String], f: fn(&Tally) -> usize| -> usize {
        values.iter().filter_map(|v| tallies.get(v)).map(f).sum()
    };
    Explanation {
        attribute: name,
        separation,
        slow_matching: sum(&slow_values, |t| t.slow),
        fast_matching: sum(&fast_values, |t| t.fast),
        slow_values,
        fast_values,
        slow_total,
        fast_total,
        unknown: (0..slow.len()).filter(|i| value(*i).is_none()).count(),
        constant,
    }
}
