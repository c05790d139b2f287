//! The incident's "diff every event between a good and a bad run and look
//! at the top": each event normalised the same way in both runs, ranked by
//! how far apart they are, |ln(B/A)| largest first.
//!
//! Normalising: per second of the run (default), per occurrence of one
//! event (per instruction, say), or per operation when the user knows how
//! many each run did. Raw totals would rank a longer run's every event.
//!
//! Zeros, defined once:
//! - an event below `min_count` in both runs is too rare to rank (a count
//!   of 3 against 7 is noise, not a 2.3× change) and is listed apart;
//! - zero in both: nothing to compare, listed apart;
//! - zero in one run and at least `min_count` in the other: an infinite
//!   ratio, ranked first ("only in B > 0");
//! - an event counted in only one file (absent, or without a value) is
//!   listed apart as only in A or only in B.

use std::collections::BTreeMap;

use numasleuth_model::perf::catalog;
use serde::Serialize;
use thiserror::Error;

/// Counts below this in both runs are too few to rank.
pub const DEFAULT_MIN_COUNT: f64 = 100.0;

/// The shortest run per-second rates are taken over. perf cannot count
/// anything in less than a microsecond (opening and enabling the events
/// alone takes longer), and dividing by a subnormal such as `5e-324` turns
/// every count into infinity.
pub const MIN_DURATION_S: f64 = 1e-6;

/// Why two runs cannot be compared. `side` is `A` or `B`.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DiffError {
    #[error("{side}: event `{name}` has value {value}, not a count")]
    NotACount {
        side: &'static str,
        name: String,
        value: f64,
    },
    #[error("{side}: event `{key}` is listed twice")]
    ListedTwice { side: &'static str, key: String },
    #[error(
        "{side}: duration_s is {duration_s}; per-second rates need a run of at least {MIN_DURATION_S} s (no run is \
         shorter)",
        MIN_DURATION_S = MIN_DURATION_S
    )]
    TooShort { side: &'static str, duration_s: f64 },
    #[error("--per op needs positive --ops-good and --ops-bad")]
    OpsNotPositive,
    #[error("`{name}` is 0 in {side}: cannot count per {name}; choose an event both runs counted, or --per second")]
    DivisorZero { name: String, side: &'static str },
    #[error(
        "`{name}` was not counted in {side}: cannot count per {name}; choose an event both runs counted, or --per \
         second"
    )]
    DivisorMissing { name: String, side: &'static str },
    #[error(
        "`{key}` per {per} is {a:e} in A and {b:e} in B, too large to compare; these are not the counts of a real run"
    )]
    TooLarge { key: String, per: String, a: f64, b: f64 },
}

/// One event of one run, as read back from a `numasleuth.pmu/1` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    pub name: String,
    pub pmu: String,
    /// `None`: opened but never counted.
    pub scaled_value: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunCounts {
    pub duration_s: f64,
    pub events: Vec<Counted>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Per {
    Second,
    /// Per occurrence of this event (its key, e.g. `instructions`).
    Event(String),
    Op {
        ops_a: f64,
        ops_b: f64,
    },
}

impl Per {
    pub fn label(&self) -> String {
        match self {
            Per::Second => "second".into(),
            Per::Event(name) => name.clone(),
            Per::Op { .. } => "op".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    A,
    B,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffRow {
    /// `page-faults` for generic events, `PMU/alias` for the others.
    pub name: String,
    pub pmu: String,
    /// Normalised values.
    pub a: f64,
    pub b: f64,
    /// b / a; `None` when a is 0 (infinite).
    pub ratio: Option<f64>,
    /// ln(b / a); `None` when either is 0.
    pub log_ratio: Option<f64>,
    /// The run where this event was 0 while the other counted it.
    pub zero_in: Option<Side>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PmuDiff {
    pub per: String,
    pub min_count: f64,
    pub rows: Vec<DiffRow>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub both_zero: Vec<String>,
    pub too_few: Vec<String>,
}

/// How an event is named across files: generic names alone, sysfs aliases
/// with their PMU (`msr/tsc`).
pub fn key(name: &str, pmu: &str) -> String {
    if [catalog::PMU_HARDWARE, catalog::PMU_HW_CACHE, catalog::PMU_SOFTWARE].contains(&pmu) {
        name.to_string()
    } else {
        format!("{pmu}/{name}")
    }
}

/// Counted events by key; an event listed twice is an error, not a guess.
fn by_key<'a>(run: &'a RunCounts, side: &'static str) -> Result<BTreeMap<String, &'a Counted>, DiffError> {
    let mut out = BTreeMap::new();
    for event in &run.events {
        if let Some(v) = event.scaled_value {
            // Scaling multiplies a whole count by enabled/running (at least
            // 1), so a counted event is 0 or at least 1.
            if !v.is_finite() || v < 0.0 || (v > 0.0 && v < 1.0) {
                return Err(DiffError::NotACount {
                    side,
                    name: event.name.clone(),
                    value: v,
                });
            }
        }
        if out.insert(key(&event.name, &event.pmu), event).is_some() {
            return Err(DiffError::ListedTwice {
                side,
                key: key(&event.name, &event.pmu),
            });
        }
    }
    Ok(out)
}

/// What each run's counts are divided by.
fn divisors(
    a: &BTreeMap<String, &Counted>,
    b: &BTreeMap<String, &Counted>,
    ra: &RunCounts,
    rb: &RunCounts,
    per: &Per,
) -> Result<(f64, f64), DiffError> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    match per {
        Per::Second => {
            for (side, d) in [("A", ra.duration_s), ("B", rb.duration_s)] {
                if !positive(d) || d < MIN_DURATION_S {
                    return Err(DiffError::TooShort { side, duration_s: d });
                }
            }
            Ok((ra.duration_s, rb.duration_s))
        }
        Per::Op { ops_a, ops_b } => {
            if !positive(*ops_a) || !positive(*ops_b) {
                return Err(DiffError::OpsNotPositive);
            }
            Ok((*ops_a, *ops_b))
        }
        Per::Event(name) => {
            let get =
                |side: &'static str, map: &BTreeMap<String, &Counted>| match map.get(name).and_then(|e| e.scaled_value)
                {
                    Some(v) if positive(v) => Ok(v),
                    Some(_) => Err(DiffError::DivisorZero {
                        name: name.clone(),
                        side,
                    }),
                    None => Err(DiffError::DivisorMissing {
                        name: name.clone(),
                        side,
                    }),
                };
            Ok((get("A", a)?, get("B", b)?))
        }
    }
}

/// One ranked row. Every number in it must be finite: a rank on infinity
/// (or JSON's `null` for it) says nothing, so counts or divisors no real
/// run has are refused here rather than ranked.
fn row(key: &str, pmu: &str, na: f64, nb: f64, per: &Per) -> Result<DiffRow, DiffError> {
    let zero_in = if na == 0.0 {
        Some(Side::A)
    } else if nb == 0.0 {
        Some(Side::B)
    } else {
        None
    };
    let ratio = (na > 0.0).then(|| nb / na);
    let log_ratio = (na > 0.0 && nb > 0.0).then(|| (nb / na).ln());
    let finite = [Some(na), Some(nb), ratio, log_ratio]
        .into_iter()
        .flatten()
        .all(f64::is_finite);
    if !finite {
        return Err(DiffError::TooLarge {
            key: key.to_string(),
            per: per.label(),
            a: na,
            b: nb,
        });
    }
    Ok(DiffRow {
        name: key.to_string(),
        pmu: pmu.to_string(),
        a: na,
        b: nb,
        ratio,
        log_ratio,
        zero_in,
    })
}

pub fn diff(a: &RunCounts, b: &RunCounts, per: &Per, min_count: f64) -> Result<PmuDiff, DiffError> {
    let (map_a, map_b) = (by_key(a, "A")?, by_key(b, "B")?);
    let (div_a, div_b) = divisors(&map_a, &map_b, a, b, per)?;
    let mut out = PmuDiff {
        per: per.label(),
        min_count,
        rows: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        both_zero: Vec::new(),
        too_few: Vec::new(),
    };
    let skip = match per {
        Per::Event(name) => Some(name.as_str()),
        _ => None,
    };
    for (key, event_a) in &map_a {
        if Some(key.as_str()) == skip {
            continue;
        }
        let (Some(va), Some(vb)) = (event_a.scaled_value, map_b.get(key).and_then(|e| e.scaled_value)) else {
            if event_a.scaled_value.is_some() {
                out.only_in_a.push(key.clone());
            }
            continue;
        };
        if va == 0.0 && vb == 0.0 {
            out.both_zero.push(key.clone());
            continue;
        }
        if va.max(vb) < min_count {
            out.too_few.push(key.clone());
            continue;
        }
        out.rows.push(row(key, &event_a.pmu, va / div_a, vb / div_b, per)?);
    }
    for (key, event_b) in &map_b {
        let counted_in_a = map_a.get(key).is_some_and(|e| e.scaled_value.is_some());
        if event_b.scaled_value.is_some() && !counted_in_a && Some(key.as_str()) != skip {
            out.only_in_b.push(key.clone());
        }
    }
    out.rows.sort_by(|x, y| {
        let rank = |r: &DiffRow| r.log_ratio.map_or(f64::INFINITY, f64::abs);
        rank(y).total_cmp(&rank(x)).then_with(|| x.name.cmp(&y.name))
    });
    Ok(out)
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
