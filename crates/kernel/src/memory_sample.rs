//! The one reader of the per-node memory signals: `/proc/zoneinfo`, each
//! node's `numastat` (and, when asked, its `vmstat` and `meminfo`),
//! `/proc/vmstat` and `vm.zone_reclaim_mode`. memwatch, top, serve and
//! probe-latency's sampler all read through [`memory_sample`]; what they
//! derive from it (rates, events) is computed in analyze.
//!
//! Only cheap files are read: never /proc/slabinfo, which takes allocator
//! locks. A part that cannot be read is kept in [`MemorySample::unread`]
//! with its name, so the exporter can count it and go on with the rest,
//! while the watching commands stop at the first one
//! ([`MemorySample::complete`]).

pub use numasleuth_parse::memory_sample::*;

use crate::error::ReadError;
use crate::procfs::meminfo;
use crate::procfs::settings;
use crate::procfs::zoneinfo;
use crate::root::Root;
use crate::sysfs::node::{self, NODE_DIR};

/// Reads one sample of `parts`. Never fails as a whole: what cannot be
/// read is listed in `unread`.
pub fn memory_sample(root: &Root, parts: Parts) -> MemorySample {
    let mut sample = MemorySample::default();
    let mut unread = Vec::new();
    sample.zones = keep(&mut unread, "zoneinfo".into(), zoneinfo::read(root)).unwrap_or_default();
    // A kernel built without NUMA has no node directory: everything is
    // node 0, and /proc/meminfo is its meminfo.
    let numa = root.exists(NODE_DIR);
    for n in sample.nodes() {
        if parts.node_meminfo {
            let path = if n == 0 && !numa {
                "proc/meminfo".to_string()
            } else {
                format!("{NODE_DIR}/node{n}/meminfo")
            };
            if let Some(info) = keep(&mut unread, format!("node{n}/meminfo"), meminfo::read(root, &path)) {
                sample.node_meminfo.insert(n, info);
            }
        }
        let counters = keep(
            &mut unread,
            format!("node{n}/numastat"),
            node::read_counters(root, [n], "numastat"),
        );
        sample.numastat.extend(counters.into_iter().flatten());
        if parts.node_vmstat {
            let counters = keep(
                &mut unread,
                format!("node{n}/vmstat"),
                node::read_counters(root, [n], "vmstat"),
            );
            sample.node_vmstat.extend(counters.into_iter().flatten());
        }
    }
    sample.vmstat = keep(&mut unread, "vmstat".into(), settings::read_vmstat(root));
    if parts.zone_reclaim_mode {
        sample.zone_reclaim_mode = keep(
            &mut unread,
            "zone_reclaim_mode".into(),
            settings::read_zone_reclaim_mode(root),
        )
        .flatten();
    }
    sample.unread = unread;
    sample
}

/// The value, or `None` with the failure listed under `name`.
fn keep<T>(unread: &mut Vec<(String, ReadError)>, name: String, result: Result<T, ReadError>) -> Option<T> {
    result.map_err(|e| unread.push((name, e))).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::fixture;

    #[test]
    fn a_tree_without_numa_gives_node_zero_the_machine_meminfo() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        };
        write(
            "proc/zoneinfo",
            "Node 0, zone   Normal\n  pages free     100\n        min      1\n        low      2\n        \
             high     3\n        spanned  10\n        present  10\n        managed  10\n",
        );
        write("proc/meminfo", "MemTotal:  1000 kB\nMemFree:  400 kB\n");
        write("proc/vmstat", "pgscan_kswapd 5\n");
        let sample = memory_sample(&Root::directory(dir.path()).unwrap(), Parts::EXPORT);
        assert!(sample.unread.is_empty(), "{:?}", sample.unread);
        assert_eq!(sample.nodes().into_iter().collect::<Vec<_>>(), [0]);
        assert_eq!(sample.node_meminfo[&0].total_bytes(), Some(1000 * 1024));
        assert!(sample.numastat.is_empty());
        assert_eq!(sample.vmstat.unwrap()["pgscan_kswapd"], 5);
    }

    #[test]
    fn what_cannot_be_read_is_named_and_complete_refuses_it() {
        let dir = tempfile::tempdir().unwrap();
        let sample = memory_sample(&Root::directory(dir.path()).unwrap(), Parts::WATCH);
        let names: Vec<&str> = sample.unread.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["zoneinfo", "vmstat"]);
        assert!(sample.complete().is_err());
    }

    #[test]
    fn every_fixture_tree_reads_whole() {
        for name in ["qemu-two-nodes", "qemu-four-nodes-asymmetric", "zone-reclaim-incident"] {
            let root = fixture(name);
            let sample = memory_sample(&root, Parts::WATCH).complete().unwrap();
            assert!(!sample.nodes().is_empty(), "{name}");
            // The incident's capture kept no numastat: absent, not an error.
            let with_numastat = name != "zone-reclaim-incident";
            assert!(
                sample
                    .nodes()
                    .iter()
                    .all(|n| sample.numastat.contains_key(n) == with_numastat),
                "{name}"
            );
        }
    }
}
