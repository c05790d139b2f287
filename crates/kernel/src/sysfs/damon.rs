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

use crate::error::{quote, ParseError, ReadError};
use crate::root::Root;

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

fn number_at(root: &Root, relative: &str) -> Result<u64, ReadError> {
    let text = root.read(relative)?;
    parse_number(&text).map_err(|e| ReadError::malformed(relative, e.0))
}

/// A count file, capped: more than `cap` is an error naming the file.
fn count_at(root: &Root, relative: &str, cap: u64) -> Result<u64, ReadError> {
    let n = number_at(root, relative)?;
    if n > cap {
        return Err(ReadError::malformed(relative, format!("{n} is more than {cap}")));
    }
    Ok(n)
}

/// The admin tree, or `None` when this kernel has no DAMON sysfs interface
/// (`CONFIG_DAMON_SYSFS` off, or DAMON not built at all).
pub fn read_admin(root: &Root) -> Result<Option<DamonAdmin>, ReadError> {
    let nr_path = format!("{KDAMONDS}/nr_kdamonds");
    let nr_kdamonds = match root.read_optional(&nr_path)? {
        None => return Ok(None),
        Some(text) => parse_number(&text).map_err(|e| ReadError::malformed(&nr_path, e.0))?,
    };
    if nr_kdamonds > MAX_KDAMONDS {
        return Err(ReadError::malformed(
            &nr_path,
            format!("{nr_kdamonds} is more than {MAX_KDAMONDS}"),
        ));
    }
    let kdamonds = (0..nr_kdamonds)
        .map(|index| read_kdamond(root, index))
        .collect::<Result<_, _>>()?;
    Ok(Some(DamonAdmin { nr_kdamonds, kdamonds }))
}

/// `kdamonds/INDEX`.
pub fn read_kdamond(root: &Root, index: u64) -> Result<KdamondReading, ReadError> {
    let dir = format!("{KDAMONDS}/{index}");
    let state = KdamondState::parse(&root.read(&format!("{dir}/state"))?);
    let pid_path = format!("{dir}/pid");
    let pid = parse_pid(&root.read(&pid_path)?).map_err(|e| ReadError::malformed(&pid_path, e.0))?;
    let nr_contexts = count_at(root, &format!("{dir}/contexts/nr_contexts"), MAX_PER_KDAMOND)?;
    let contexts = (0..nr_contexts)
        .map(|c| read_context(root, &format!("{dir}/contexts/{c}")))
        .collect::<Result<_, _>>()?;
    Ok(KdamondReading {
        index,
        state,
        pid,
        contexts,
    })
}

fn read_context(root: &Root, dir: &str) -> Result<ContextReading, ReadError> {
    let operations = root
        .read_optional(&format!("{dir}/operations"))?
        .map(|t| t.trim().chars().take(32).collect());
    let avail_path = format!("{dir}/avail_operations");
    let avail_operations = root
        .read_optional(&avail_path)?
        .map(|t| parse_operations(&t).map_err(|e| ReadError::malformed(&avail_path, e.0)))
        .transpose()?;
    let nr_targets = count_at(root, &format!("{dir}/targets/nr_targets"), MAX_PER_KDAMOND)?;
    let mut target_pids = Vec::new();
    for t in 0..nr_targets {
        let text = root.read_optional(&format!("{dir}/targets/{t}/pid_target"))?;
        target_pids.push(text.and_then(|t| parse_pid(&t).ok().flatten()));
    }
    Ok(ContextReading {
        operations,
        avail_operations,
        target_pids,
    })
}

/// `monitoring_attrs/` of context `context` of kdamond `index`.
pub fn read_attrs(root: &Root, index: u64, context: u64) -> Result<DamonAttrs, ReadError> {
    let dir = format!("{KDAMONDS}/{index}/contexts/{context}/monitoring_attrs");
    Ok(DamonAttrs {
        sample_us: number_at(root, &format!("{dir}/intervals/sample_us"))?,
        aggr_us: number_at(root, &format!("{dir}/intervals/aggr_us"))?,
        update_us: number_at(root, &format!("{dir}/intervals/update_us"))?,
        min_regions: number_at(root, &format!("{dir}/nr_regions/min"))?,
        max_regions: number_at(root, &format!("{dir}/nr_regions/max"))?,
    })
}

/// The directory of a scheme's tried regions.
pub fn tried_regions_dir(index: u64, context: u64, scheme: u64) -> String {
    format!("{KDAMONDS}/{index}/contexts/{context}/schemes/{scheme}/tried_regions")
}

/// The regions a scheme last tried (after `update_schemes_tried_regions`
/// was written to the kdamond's `state`), in address order. More than
/// [`MAX_REGIONS`] is an error.
pub fn read_tried_regions(root: &Root, index: u64, context: u64, scheme: u64) -> Result<Vec<DamonRegion>, ReadError> {
    let dir = tried_regions_dir(index, context, scheme);
    let names = root.list(&dir)?.unwrap_or_default();
    let mut ids: Vec<u64> = names.iter().filter_map(|n| n.parse().ok()).collect();
    if ids.len() as u64 > MAX_REGIONS {
        return Err(ReadError::malformed(
            &dir,
            format!("{} regions, more than {MAX_REGIONS}", ids.len()),
        ));
    }
    ids.sort_unstable();
    let mut regions = Vec::with_capacity(ids.len());
    for id in ids {
        let file = |name: &str| root.read(&format!("{dir}/{id}/{name}"));
        let region = parse_region(&file("start")?, &file("end")?, &file("nr_accesses")?, &file("age")?)
            .map_err(|e| ReadError::malformed(&format!("{dir}/{id}"), e.0))?;
        regions.push(region);
    }
    regions.sort_by_key(|r| r.start);
    Ok(regions)
}

#[cfg(test)]
#[path = "damon_tests.rs"]
mod tests;
