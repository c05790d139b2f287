//! `topo` for people: one screen, summarised rather than dumped.

use numasleuth_parse::IdList;
use std::collections::BTreeMap;

use numasleuth_model::{CacheKind, NumaSource, Topology};

use crate::format::{bytes, optional_bytes};
use crate::layout::TextLayout;
use crate::table::{columns, table, Col};

pub fn render(topo: &Topology, warnings: &[String], layout: &TextLayout) -> String {
    let mut out = String::new();
    out.push_str(&headline(topo));
    out.push('\n');
    out.push_str(&node_table(topo, layout));
    let caches = cache_summary(topo);
    if !caches.is_empty() {
        out.push_str("\nCaches\n");
        out.push_str(&caches);
    }
    if !topo.devices.is_empty() {
        out.push_str("\nDevices\n");
        out.push_str(&device_table(topo, layout));
    }
    if !warnings.is_empty() {
        out.push('\n');
        for warning in warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
    }
    out
}

fn plural(count: usize, word: &str) -> String {
    format!("{count} {word}{}", if count == 1 { "" } else { "s" })
}

fn headline(topo: &Topology) -> String {
    let mut parts = vec![plural(topo.nodes.len(), "node")];
    let packages = topo.distinct(|c| c.package);
    let dies = topo.distinct(|c| c.package.zip(c.die));
    let cores = topo.distinct(|c| Some((c.package?, c.die, c.core?)));
    if packages > 0 {
        parts.push(plural(packages, "package"));
    }
    if dies > packages {
        parts.push(plural(dies, "die"));
    }
    if cores > 0 {
        parts.push(plural(cores, "core"));
    }
    let online = topo.online_cpus().len();
    let total = topo.cpus.len();
    parts.push(if online == total {
        plural(total, "CPU")
    } else {
        format!("{total} CPUs ({online} online)")
    });
    if cores > 0 && online > cores {
        parts.push(format!("SMT ×{}", online.div_ceil(cores)));
    }
    let mut line = parts.join(", ");
    if let Some(memory) = topo.memory_total_bytes {
        line.push_str(&format!(", {} memory", bytes(memory)));
    }
    let cpu = topo.cpu_name().map_or(String::new(), |name| format!("{name}\n"));
    let source = match topo.numa {
        NumaSource::Sysfs => "",
        NumaSource::Implicit => " (no NUMA in this kernel: one implicit node)",
    };
    format!("{cpu}{line}{source}\n{}", memory_gap(topo))
}

/// Up to this many nodes, each distance gets its own column headed by the
/// node it is to, as `numactl -H` prints them; beyond, one joined column.
const DISTANCE_COLUMNS_MAX: usize = 16;

/// Says why the header's total is not the sum of the node rows, when the
/// two differ by more than 1%: the machine-wide and per-node MemTotal are
/// counted apart, and a hypervisor or the firmware can put memory in one
/// and not the other.
fn memory_gap(topo: &Topology) -> String {
    let Some(machine) = topo.memory_total_bytes else {
        return String::new();
    };
    let nodes: Option<u64> = topo.nodes.iter().map(|n| n.memory_total_bytes).sum();
    let Some(nodes) = nodes else {
        return String::new();
    };
    if machine.abs_diff(nodes) * 100 <= machine {
        return String::new();
    }
    format!(
        "note: MemTotal is {} (/proc/meminfo) but the nodes' MemTotal adds up to {}: the kernel counts them apart, \
         and memory hot-added or ballooned by a hypervisor, or reserved after boot, can be in one and not the other\n",
        bytes(machine),
        bytes(nodes)
    )
}

fn node_table(topo: &Topology, layout: &TextLayout) -> String {
    let per_column = topo.nodes.len() <= DISTANCE_COLUMNS_MAX;
    let mut header = vec!["NODE".to_string(), "CPUS".into(), "MEMORY".into(), "FREE".into()];
    if per_column {
        // The distance row of a node is in the order of `nodes`.
        header.extend(topo.nodes.iter().map(|n| format!("→{}", n.id)));
    } else {
        header.push("DISTANCES (to each node in order)".into());
    }
    header.push("NOTE".into());
    let mut rows = vec![header];
    for node in &topo.nodes {
        let distances: Vec<String> = node
            .distances
            .iter()
            .map(|d| d.map_or_else(|| "-".to_string(), |v| v.to_string()))
            .collect();
        let mut notes = Vec::new();
        if !node.has_cpus() {
            notes.push("memory only (no CPUs)".to_string());
        }
        if node.holds_memory() == Some(false) {
            notes.push("no memory".to_string());
        }
        if let Some(hmat) = node.access.iter().find(|a| a.read_latency_ns.is_some()) {
            notes.push(format!(
                "HMAT read {} ns, {} MB/s",
                hmat.read_latency_ns.unwrap_or(0),
                hmat.read_bandwidth_mb_per_sec.map_or("?".into(), |b| b.to_string())
            ));
        }
        let mut row = vec![
            node.id.to_string(),
            if node.has_cpus() {
                node.cpus.to_human()
            } else {
                "-".into()
            },
            optional_bytes(node.memory_total_bytes),
            optional_bytes(node.memory_free_bytes),
        ];
        if per_column {
            row.extend((0..topo.nodes.len()).map(|i| distances.get(i).cloned().unwrap_or_else(|| "-".into())));
        } else {
            row.push(distances.join(" "));
        }
        row.push(notes.join("; "));
        rows.push(row);
    }
    columns(&rows, layout)
}

fn cache_summary(topo: &Topology) -> String {
    // Group identical caches: "L2 1 MiB ×8, each shared by 2 CPUs".
    let mut groups: BTreeMap<(u32, CacheKind, Option<u64>, usize), Vec<String>> = BTreeMap::new();
    for domain in &topo.caches {
        let key = (domain.level, domain.kind.clone(), domain.size_bytes, domain.cpus.len());
        groups.entry(key).or_default().push(domain.cpus.to_human());
    }
    let mut out = String::new();
    for ((level, kind, size, sharing), sets) in groups {
        let suffix = match kind {
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
            CacheKind::Unified | CacheKind::Other(_) => "",
        };
        let shared = if sharing == 1 {
            "per CPU".to_string()
        } else if sets.len() <= 4 {
            format!("each shared by {sharing} CPUs ({})", sets.join("; "))
        } else {
            format!("each shared by {sharing} CPUs")
        };
        out.push_str(&format!(
            "  L{level}{suffix} {} ×{}, {shared}\n",
            optional_bytes(size),
            sets.len()
        ));
    }
    out
}

fn device_table(topo: &Topology, layout: &TextLayout) -> String {
    let mut rows = vec![vec![
        "  KIND".to_string(),
        "NAME".into(),
        "PCI".into(),
        "NODE".into(),
        "LOCAL CPUS".into(),
    ]];
    for device in &topo.devices {
        rows.push(vec![
            format!("  {}", device.kind),
            device.name.clone(),
            device.pci.clone(),
            device.node.map_or_else(|| "-".to_string(), |n| n.to_string()),
            device
                .local_cpus
                .as_ref()
                .map_or_else(|| "?".to_string(), IdList::to_human),
        ]);
    }
    table(&rows, &[Col::Wrap, Col::Name], layout)
}
