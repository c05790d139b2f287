//! DAMON's sysfs admin tree (`/sys/kernel/mm/damon/admin`): which kdamonds
//! exist and what they watch, and the regions a `stat` scheme last tried,
//! each with its access frequency (`nr_accesses`) and `age`.
//!
//! Why it is read before anything is written: `hotpages` must never touch a
//! kdamond that something else set up, and the kernel's interface cannot
//! add one beside a running one (writing `nr_kdamonds` rebuilds every
//! kdamond directory and is refused while any runs). So the reader says
//! exactly what is there; the writes that start and stop monitoring live in
//! the probe crate (`numasleuth_probe::damon`).
//!
//! Every file is small and every count is capped: a hostile or broken tree
//! (a snapshot, a fixture) gives an error naming the file, never a huge
//! allocation.

use serde::Serialize;

use crate::error::{quote, ParseError};

/// The admin directory, relative to the root.
pub const ADMIN: &str = "sys/kernel/mm/damon/admin";
/// `kdamonds/` inside it.
pub const KDAMONDS: &str = "sys/kernel/mm/damon/admin/kdamonds";

/// Most kdamonds read. The kernel sets no limit, but each is a kernel
/// thread; a machine runs a handful.
pub const MAX_KDAMONDS: u64 = 64;
/// Most contexts or targets read per kdamond (the kernel runs one context
/// per kdamond today).
pub const MAX_PER_KDAMOND: u64 = 64;
/// Most tried regions read from one snapshot. DAMON's own cap on regions
/// is `max_regions` (default 1000); numasleuth never asks for more than
/// this.
pub const MAX_REGIONS: u64 = 10_000;

/// What `kdamonds/N/state` says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KdamondState {
    On,
    Off,
    /// Anything else, as the kernel wrote it.
    Other(String),
}

impl KdamondState {
    pub fn parse(text: &str) -> KdamondState {
        match text.trim() {
            "on" => KdamondState::On,
            "off" => KdamondState::Off,
            other => KdamondState::Other(other.chars().take(64).collect()),
        }
    }
}

/// One context of a kdamond.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextReading {
    /// `operations`: `vaddr`, `fvaddr` or `paddr`.
    pub operations: Option<String>,
    /// `avail_operations`: what this kernel was built with; `None` on
    /// kernels without the file.
    pub avail_operations: Option<Vec<String>>,
    /// `targets/N/pid_target` of each target (`None` where unreadable or
    /// not a pid, as for `paddr`).
    pub target_pids: Vec<Option<u32>>,
}

/// One `kdamonds/N` directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KdamondReading {
    pub index: u64,
    pub state: KdamondState,
    /// The kernel thread's pid while it runs (`pid` is -1 otherwise).
    pub pid: Option<u32>,
    pub contexts: Vec<ContextReading>,
}

/// The admin tree as found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DamonAdmin {
    pub nr_kdamonds: u64,
    pub kdamonds: Vec<KdamondReading>,
}

impl DamonAdmin {
    /// The operation sets this kernel offers, from the first context that
    /// lists them (the file is the same in every context).
    pub fn avail_operations(&self) -> Option<&[String]> {
        self.kdamonds
            .iter()
            .flat_map(|k| &k.contexts)
            .find_map(|c| c.avail_operations.as_deref())
    }
}

/// A region DAMON reported: `start..end` (virtual or physical addresses),
/// how many of the last aggregation's samples found it accessed, and for
/// how many aggregations its access pattern has held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DamonRegion {
    pub start: u64,
    pub end: u64,
    pub nr_accesses: u64,
    pub age: u64,
}

impl DamonRegion {
    pub fn bytes(&self) -> u64 {
        self.end - self.start
    }
}

/// Monitoring attributes of a context (`monitoring_attrs/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DamonAttrs {
    pub sample_us: u64,
    pub aggr_us: u64,
    pub update_us: u64,
    pub min_regions: u64,
    pub max_regions: u64,
}

/// A decimal number as the kernel writes it (`%lu`, `%u`).
pub fn parse_number(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    t.parse()
        .map_err(|_| ParseError::new(format!("`{}` is not a number", quote(t))))
}

/// A pid file: `-1` (none) or a pid.
pub fn parse_pid(text: &str) -> Result<Option<u32>, ParseError> {
    let t = text.trim();
    let value: i64 = t
        .parse()
        .map_err(|_| ParseError::new(format!("`{}` is not a pid", quote(t))))?;
    Ok(u32::try_from(value).ok().filter(|&p| p > 0))
}

/// `avail_operations`: names separated by newlines (or spaces), at most
/// 16 of at most 32 bytes each.
pub fn parse_operations(text: &str) -> Result<Vec<String>, ParseError> {
    let names: Vec<&str> = text.split_whitespace().collect();
    if names.len() > 16 || names.iter().any(|n| n.len() > 32) {
        return Err(ParseError::new("more than 16 names, or a name over 32 bytes"));
    }
    Ok(names.into_iter().map(str::to_string).collect())
}

/// A region from its four files; `end` must be past `start`.
pub fn parse_region(start: &str, end: &str, nr_accesses: &str, age: &str) -> Result<DamonRegion, ParseError> {
    let region = DamonRegion {
        start: parse_number(start)?,
        end: parse_number(end)?,
        nr_accesses: parse_number(nr_accesses)?,
        age: parse_number(age)?,
    };
    if region.end <= region.start {
        return Err(ParseError::new(format!(
            "region ends ({:#x}) at or before it starts ({:#x})",
            region.end, region.start
        )));
    }
    Ok(region)
}

/// The directory of a scheme's tried regions.
pub fn tried_regions_dir(index: u64, context: u64, scheme: u64) -> String {
    format!("{KDAMONDS}/{index}/contexts/{context}/schemes/{scheme}/tried_regions")
}
