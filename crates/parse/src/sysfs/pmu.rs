//! The PMUs the kernel exposes under `/sys/bus/event_source/devices`, each
//! with its perf `type`, its `format/` fields and its `events/` aliases
//! encoded into the config words `perf_event_open` takes.
//!
//! A real machine has a few dozen PMUs (core, uncore per socket and unit,
//! power, cstate, msr) with at most a few hundred aliases; a snapshot or a
//! broken driver could list far more, so PMUs and aliases are capped and
//! the cap is said, never silently applied. An alias that cannot be used
//! (malformed, a field missing from `format/`, a value only the user can
//! give) stays in the list with the reason, so the report can say why it
//! was not counted.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::error::{ParseError, ReadError};
use crate::sysfs::pmu_format::{Config, FormatField};
use crate::unread::Unread;

pub const MAX_PMUS: usize = 256;
pub const MAX_EVENTS_PER_PMU: usize = 4096;
/// Format fields per PMU; Intel's core PMU has about fifteen.
pub const MAX_FORMAT_FIELDS: usize = 256;

/// Why an alias cannot be counted: its file could not be read, or what it
/// says cannot be encoded with the PMU's `format/` fields.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AliasError {
    #[error(transparent)]
    Read(#[from] ReadError),
    /// `path` is shown as the user would see it (`display_path`).
    #[error("{path}: {error}")]
    Malformed { path: String, error: ParseError },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmuEvent {
    /// The alias file's name, e.g. `cpu-cycles`, `cas_count_read`.
    pub name: String,
    /// The encoded config, or why the alias cannot be counted.
    pub config: Result<Config, AliasError>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pmu {
    /// The directory name: `cpu`, `msr`, `uncore_imc_0`, `armv8_pmuv3_0`.
    pub name: String,
    /// `type`: the value for `perf_event_attr.type`.
    pub type_id: u32,
    /// A `cpumask` file: the PMU counts a whole package or the system
    /// (uncore, power, cstate) and cannot count one process.
    pub system_wide: bool,
    pub formats: BTreeMap<String, FormatField>,
    /// Sorted by name; at most [`MAX_EVENTS_PER_PMU`].
    pub events: Vec<PmuEvent>,
    /// How many aliases the directory listed, when more than were kept.
    pub events_listed: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PmuReadings {
    pub pmus: Vec<Pmu>,
    /// How many PMUs the directory listed, when more than were kept.
    pub pmus_listed: Option<usize>,
    /// Files that exist but could not be used; their PMU or alias is left
    /// out (a PMU) or listed as not countable (an alias).
    pub unread: Vec<Unread>,
}
