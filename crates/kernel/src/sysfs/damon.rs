//! Reading `sysfs::damon`; its format, types and parser are `numasleuth_parse::sysfs::damon`.

pub use numasleuth_parse::sysfs::damon::*;

use crate::error::ReadError;
use crate::root::Root;

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
