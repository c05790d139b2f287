//! The working-set rule on real machines' caches: hwloc's Linux test
//! captures (`../shared/fixtures/hwloc`, or `$NUMASLEUTH_HWLOC_FIXTURES`),
//! read through the same readers and model `mem` uses.
//!
//! The captures stay outside the repository, so the test is `#[ignore]`d
//! with the reason and fails, saying where it looked, when run with
//! `--ignored` and no captures. Four captures have their expected sizes
//! written out (from their sysfs files, by hand); every capture with cache
//! sizes must satisfy the rule's promise: at least 4× any one cache the
//! measuring CPUs reach. `--nocapture` prints the table quoted in
//! bench/RESULTS.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use numasleuth_analyze::working_set::{choose, largest_cache, WorkingSet, CACHE_FACTOR};
use numasleuth_kernel::gather::read_topology;
use numasleuth_kernel::Root;
use numasleuth_model::Topology;

const MIB: u64 = 1 << 20;

fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("NUMASLEUTH_HWLOC_FIXTURES") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/hwloc"),
    };
    dir.is_dir().then_some(dir)
}

/// Unpacks `NAME.tar.bz2` (on tmpfs when there is one) and builds its
/// topology; `None` when the capture cannot be read as a machine.
fn topology(dir: &Path, name: &str) -> Option<(tempfile::TempDir, Topology)> {
    let scratch = match Path::new("/dev/shm").is_dir() {
        true => tempfile::Builder::new().prefix("numasleuth-ws-").tempdir_in("/dev/shm"),
        false => tempfile::tempdir(),
    }
    .unwrap();
    let status = Command::new("tar")
        .arg("-xjf")
        .arg(dir.join(format!("{name}.tar.bz2")))
        .arg("-C")
        .arg(scratch.path())
        .status()
        .expect("cannot run tar");
    assert!(status.success(), "tar -xjf {name}.tar.bz2 failed");
    let top = std::fs::read_dir(scratch.path()).unwrap().next()?.ok()?.path();
    let readings = read_topology(&Root::directory(&top).ok()?).ok()?;
    let topo = Topology::build(&readings).ok()?;
    Some((scratch, topo))
}

/// The rule as `mem` applies it to node `node`'s CPUs: its bandwidth
/// threads (all of them) and its chasing CPU (the first).
fn sizes(topo: &Topology, node: u32) -> Option<(WorkingSet, WorkingSet)> {
    let cpus: Vec<u32> = topo.nodes.iter().find(|n| n.id == node)?.cpus.iter().collect();
    let first = *cpus.first()?;
    let bandwidth = choose(largest_cache(&topo.caches, &[&cpus]), &[], cpus.len() as u64, None);
    let latency = choose(largest_cache(&topo.caches, &[&[first]]), &[], 1, None);
    Some((bandwidth, latency))
}

fn describe(set: &WorkingSet) -> String {
    match &set.sized_from {
        Some(from) => format!("{} MiB, 4× {}", set.working_set_bytes / MIB, from.describe()),
        None => format!("{} MiB (fallback)", set.working_set_bytes / MIB),
    }
}

#[test]
#[ignore = "needs hwloc's captures in ../shared/fixtures/hwloc or $NUMASLEUTH_HWLOC_FIXTURES; scripts/test-all runs it with --ignored where they exist"]
fn working_sets_on_hwloc_captures() {
    let Some(dir) = fixtures_dir() else {
        panic!("hwloc's captures not found: put them in ../shared/fixtures/hwloc or set $NUMASLEUTH_HWLOC_FIXTURES");
    };
    // (capture, node 0's bandwidth set, its chase) in MiB, from the
    // captures' cache/index*/size and shared_cpu_list files.
    let expected: [(&str, u64, u64); 5] = [
        // The largest L3 of the captures: 32 MiB shared by CPUs 0-31.
        ("128arm-2pa2n8cluster4co", 128, 128),
        // 30 MiB L3 shared by the node's 10 interleaved CPUs 0-36:4.
        ("40intel64-4n10c+pci-conflicts", 120, 120),
        // Hybrid: 24 MiB L3 over P and E cores; 96 MiB over 20 threads
        // is 4.8 MiB each, rounded up to 6 MiB (whole huge pages).
        ("20em64t-hybrid-1p6c2t+2ca4co1t", 120, 96),
        // Eight 2 MiB L2s outweigh the 6 MiB L3 for 8 threads; one
        // chasing CPU reaches one L3.
        ("64amd64-4s2n4ca2co", 64, 24),
        // No L3: two private 1 MiB L2s.
        ("16amd64-8n2c", 8, 4),
    ];
    let mut table = vec!["capture | node 0 bandwidth set | chase".to_string()];
    for (name, bandwidth_mib, chase_mib) in expected {
        let (_scratch, topo) = topology(&dir, name).unwrap_or_else(|| panic!("{name}: not readable"));
        let (bandwidth, latency) = sizes(&topo, 0).unwrap_or_else(|| panic!("{name}: no node 0"));
        table.push(format!("{name} | {} | {}", describe(&bandwidth), describe(&latency)));
        assert_eq!(
            bandwidth.working_set_bytes,
            bandwidth_mib * MIB,
            "{name}: {bandwidth:?}"
        );
        assert_eq!(latency.working_set_bytes, chase_mib * MIB, "{name}: {latency:?}");
    }
    println!("{}", table.join("\n"));
}

#[test]
#[ignore = "needs hwloc's captures in ../shared/fixtures/hwloc or $NUMASLEUTH_HWLOC_FIXTURES; scripts/test-all runs it with --ignored where they exist"]
fn every_capture_gets_at_least_four_times_any_cache_its_cpus_reach() {
    let Some(dir) = fixtures_dir() else {
        panic!("hwloc's captures not found: put them in ../shared/fixtures/hwloc or set $NUMASLEUTH_HWLOC_FIXTURES");
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".tar.bz2").map(String::from))
        .collect();
    names.sort();
    let (mut checked, mut unsized_captures) = (0, Vec::new());
    for name in &names {
        let Some((_scratch, topo)) = topology(&dir, name) else {
            continue;
        };
        for node in topo.nodes.iter().filter(|n| !n.cpus.is_empty()) {
            let cpus: Vec<u32> = node.cpus.iter().collect();
            let Some((bandwidth, _)) = sizes(&topo, node.id) else {
                continue;
            };
            // Independently of the rule: the largest single cache any of
            // these CPUs uses.
            let biggest = topo
                .caches
                .iter()
                .filter(|c| c.kind.holds_data() && cpus.iter().any(|cpu| c.cpus.contains(*cpu)))
                .filter_map(|c| c.size_bytes)
                .max();
            match biggest {
                Some(cache) => {
                    assert!(
                        bandwidth.working_set_bytes >= CACHE_FACTOR * cache,
                        "{name} node {}: {bandwidth:?}",
                        node.id
                    );
                    checked += 1;
                }
                None => {
                    assert_eq!(
                        bandwidth.chosen_by,
                        numasleuth_analyze::working_set::ChosenBy::Fallback,
                        "{name}"
                    );
                    unsized_captures.push(name.clone());
                }
            }
        }
    }
    unsized_captures.dedup();
    println!(
        "{checked} nodes checked; without cache sizes (fallback): {}",
        unsized_captures.join(", ")
    );
    assert!(checked > 30, "only {checked} nodes had cache sizes");
}
