//! Reading `cgroup`; its format, types and parser are `numasleuth_parse::cgroup`.

pub use numasleuth_parse::cgroup::*;

use crate::cpulist::IdList;
use crate::error::ReadError;
use crate::read;
use crate::root::Root;

/// `Ok(None)` when no cpuset hierarchy is mounted or we cannot tell our
/// place in it; neither is an error on a plain machine.
pub fn read(root: &Root) -> Result<Option<CpusetCgroup>, ReadError> {
    let Some(mounts) = root.read_optional("proc/mounts")? else {
        return Ok(None);
    };
    let mounts = parse_mounts(&mounts);
    let v1 = mounts
        .iter()
        .find(|m| m.fs_type == "cpuset" || (m.fs_type == "cgroup" && m.options.iter().any(|o| o == "cpuset")));
    if let Some(mount) = v1 {
        if let Some(path) = root.read_optional("proc/self/cpuset")? {
            let dir = relative(&mount.mount_point, path.trim());
            // The bare `cpus` names come from the old standalone cpuset fs.
            let cpus = first_list(
                root,
                &dir,
                &["cpuset.effective_cpus", "cpuset.cpus", "cpus"],
                read::list,
            )?;
            let mems = first_list(
                root,
                &dir,
                &["cpuset.effective_mems", "cpuset.mems", "mems"],
                read::node_list,
            )?;
            return Ok(Some(CpusetCgroup {
                version: CgroupVersion::V1,
                path: path.trim().to_string(),
                effective_cpus: cpus,
                effective_mems: mems,
            }));
        }
    }
    let Some(mount) = mounts.iter().find(|m| m.fs_type == "cgroup2") else {
        return Ok(None);
    };
    let path = match root
        .read_optional("proc/self/cgroup")?
        .as_deref()
        .and_then(parse_v2_path)
    {
        Some(path) => path,
        None => match root.read_optional("proc/self/cpuset")? {
            Some(path) => path.trim().to_string(),
            None => return Ok(None),
        },
    };
    let dir = relative(&mount.mount_point, &path);
    Ok(Some(CpusetCgroup {
        version: CgroupVersion::V2,
        effective_cpus: first_list(root, &dir, &["cpuset.cpus.effective"], read::list)?,
        effective_mems: first_list(root, &dir, &["cpuset.mems.effective"], read::node_list)?,
        path,
    }))
}
/// The first of `names` that exists in `dir`, read with `read_list`.
fn first_list(
    root: &Root,
    dir: &str,
    names: &[&str],
    read_list: fn(&Root, &str) -> Result<Option<IdList>, ReadError>,
) -> Result<Option<IdList>, ReadError> {
    for name in names {
        if let Some(list) = read_list(root, &format!("{dir}/{name}"))? {
            return Ok(Some(list));
        }
    }
    Ok(None)
}
