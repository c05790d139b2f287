//! Golden test of `topo` (text at each width and JSON) on a hand-built
//! machine with what the captured fixtures lack: HMAT access classes, a
//! device with and without PCI ids, a cache type this build does not know,
//! a cgroup that limits CPUs and nodes, an offline CPU and hugetlb pages.
//! `INSTA_UPDATE=always cargo test -p numasleuth-report --test it
//! golden_topo` rewrites it after a deliberate change.

use crate::common;

use common::golden_all;
use numasleuth_analyze::topology::warnings;
use numasleuth_model::{CacheDomain, CacheKind, Cpu, Device, DeviceKind, Node, NumaSource, Restrictions, Topology};
use numasleuth_parse::sysfs::node::AccessClass;
use numasleuth_parse::IdList;
use numasleuth_report::export::TextJson;
use numasleuth_report::{topo_json, topo_text};

fn ids(list: &[u32]) -> IdList {
    IdList::new(list.to_vec())
}

fn cpu(id: u32, node: u32, online: bool) -> Cpu {
    Cpu {
        id,
        node: Some(node),
        online,
        package: Some(node),
        die: Some(0),
        cluster: None,
        core: Some(id / 2),
        thread_siblings: online.then(|| ids(&[id - id % 2, id - id % 2 + 1])),
    }
}

fn nodes() -> Vec<Node> {
    let gib = 1u64 << 30;
    vec![
        Node {
            id: 0,
            cpus: ids(&[0, 1, 2, 3]),
            memory_total_bytes: Some(16 * gib),
            memory_free_bytes: Some(9 * gib),
            hugetlb_bytes: Some(2 * gib),
            distances: vec![Some(10), Some(21), None],
            has_memory: Some(true),
            access: vec![AccessClass {
                class: 0,
                initiators: ids(&[0]),
                read_latency_ns: Some(90),
                write_latency_ns: Some(100),
                read_bandwidth_mb_per_sec: Some(40_960),
                write_bandwidth_mb_per_sec: Some(20_480),
            }],
        },
        Node {
            id: 1,
            cpus: IdList::default(),
            memory_total_bytes: Some(64 * gib),
            memory_free_bytes: Some(60 * gib),
            hugetlb_bytes: None,
            distances: vec![Some(21), Some(10), None],
            has_memory: None,
            access: vec![AccessClass {
                class: 1,
                initiators: ids(&[0]),
                read_latency_ns: Some(250),
                write_latency_ns: None,
                read_bandwidth_mb_per_sec: None,
                write_bandwidth_mb_per_sec: Some(8_192),
            }],
        },
    ]
}

fn machine() -> Topology {
    Topology {
        numa: NumaSource::Sysfs,
        nodes: nodes(),
        cpus: vec![cpu(0, 0, true), cpu(1, 0, true), cpu(2, 0, true), cpu(3, 0, false)],
        caches: vec![
            CacheDomain {
                level: 2,
                kind: CacheKind::Other("Trace".into()),
                size_bytes: None,
                line_size_bytes: None,
                cpus: ids(&[0, 1]),
            },
            CacheDomain {
                level: 3,
                kind: CacheKind::Unified,
                size_bytes: Some(32 << 20),
                line_size_bytes: Some(64),
                cpus: ids(&[0, 1, 2, 3]),
            },
        ],
        devices: vec![
            Device {
                kind: DeviceKind::Net,
                name: "eth0".into(),
                pci: "0000:10:01.0".into(),
                node: Some(1),
                local_cpus: Some(IdList::default()),
                class: Some(0x02_0000),
                vendor: Some(0x8086),
                device: Some(0x100e),
            },
            Device {
                kind: DeviceKind::Block,
                name: "vda".into(),
                pci: "0000:00:05.0".into(),
                node: None,
                local_cpus: None,
                class: None,
                vendor: None,
                device: None,
            },
        ],
        restrictions: Restrictions {
            allowed_cpus: Some(ids(&[0, 1, 2])),
            allowed_mems: Some(ids(&[0, 1])),
            cgroup_version: Some(2),
            cgroup_path: Some("/system.slice/db.service".into()),
            cgroup_cpus: Some(ids(&[0, 1, 2])),
            cgroup_mems: None,
        },
        cpu_model: Some("Made-up CPU @ 2.00GHz".into()),
        cpu_vendor: Some("GenuineIntel".into()),
        memory_total_bytes: Some(80 << 30),
    }
}

#[test]
fn topo_of_a_machine_with_hmat_devices_and_a_cgroup() {
    let topo = machine();
    let mut all = vec!["could not read /sys/devices/system/node/node1/meminfo: permission denied".to_string()];
    all.extend(warnings(&topo));
    golden_all(
        "topo",
        &TextJson::new(topo_json::build(&topo, all), |layout| {
            topo_text::render(&topo, &warnings(&topo), layout)
        }),
    );
}
