//! The cpuset cgroup this process lives in, v2 or v1.
//!
//! A container or a Slurm job sees every node in sysfs but may only use
//! some; `topo` must say so. We locate the cpuset hierarchy through
//! `/proc/mounts` and our place in it through `/proc/self/cgroup` (v2) or
//! `/proc/self/cpuset` (v1), then read the effective sets.

use crate::cpulist::IdList;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpusetCgroup {
    pub version: CgroupVersion,
    /// The cgroup's path inside its hierarchy, e.g. `/user.slice`.
    pub path: String,
    pub effective_cpus: Option<IdList>,
    pub effective_mems: Option<IdList>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub mount_point: String,
    pub fs_type: String,
    pub options: Vec<String>,
}

/// `/proc/mounts`: `device mountpoint fstype options dump pass`.
pub fn parse_mounts(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let mount_point = unescape_octal(fields.next()?);
            let fs_type = fields.next()?.to_string();
            let options = fields.next().unwrap_or("").split(',').map(String::from).collect();
            Some(Mount {
                mount_point,
                fs_type,
                options,
            })
        })
        .collect()
}

/// Mount points escape spaces and tabs as `\040` and `\011`.
fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = std::str::from_utf8(&bytes[i + 1..i + 4]).ok();
            if let Some(value) = digits.and_then(|d| u8::from_str_radix(d, 8).ok()) {
                out.push(value);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The v2 path from `/proc/self/cgroup` (`0::/path`).
pub fn parse_v2_path(text: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(|p| p.trim().to_string())
}

/// `path` under `mount_point`, relative to the root (no leading `/`).
pub fn relative(mount_point: &str, path: &str) -> String {
    let joined = format!("{}/{}", mount_point.trim_matches('/'), path.trim_matches('/'));
    joined.trim_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mounts_find_cpuset_v1() {
        // From this project's development VM (cgroup v1 cpuset plus unified).
        let text = "cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n\
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        let mounts = parse_mounts(text);
        assert_eq!(mounts.len(), 2);
        assert!(mounts[0].options.contains(&"cpuset".to_string()));
        assert_eq!(mounts[1].fs_type, "cgroup2");
    }

    #[test]
    fn escaped_mount_points() {
        assert_eq!(parse_mounts("x /mnt/a\\040b tmpfs rw 0 0")[0].mount_point, "/mnt/a b");
    }

    #[test]
    fn v2_path() {
        assert_eq!(
            parse_v2_path("0::/user.slice/session-1.scope\n").as_deref(),
            Some("/user.slice/session-1.scope")
        );
        assert_eq!(parse_v2_path("3:cpuset:/\n"), None);
    }

    #[test]
    fn relative_paths_join() {
        assert_eq!(relative("/sys/fs/cgroup", "/"), "sys/fs/cgroup");
        assert_eq!(relative("/cgroup/unified", "/uid_1/job"), "cgroup/unified/uid_1/job");
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,120}") {
            let _ = parse_mounts(&text);
            let _ = parse_v2_path(&text);
        }
    }
}
