//! `topo` for people: one screen, summarised rather than dumped.

use std::collections::BTreeMap;

use numasleuth_model::{NumaSource, Topology};

use crate::format::{bytes, columns, optional_bytes};

pub fn render(topo: &Topology, warnings: &[String]) -> String {
    let mut out = String::new();
    out.push_str(&headline(topo));
    out.push('\n');
    out.push_str(&node_table(topo));
    let caches = cache_summary(topo);
    if !caches.is_empty() {
        out.push_str("\nCaches\n");
        out.push_str(&caches);
    }
    if !topo.devices.is_empty() {
        out.push_str("\nDevices\n");
        out.push_str(&device_table(topo));
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
    let cpu = match (&topo.cpu_model, &topo.cpu_vendor) {
        (Some(model), _) => format!("{model}\n"),
        (None, Some(vendor)) => format!("{vendor}\n"),
        (None, None) => String::new(),
    };
    let source = match topo.numa {
        NumaSource::Sysfs => "",
        NumaSource::Implicit => " (no NUMA in this kernel: one implicit node)",
    };
    format!("{cpu}{line}{source}\n")
}

fn node_table(topo: &Topology) -> String {
    let mut rows = vec![vec![
        "NODE".to_string(),
        "CPUS".into(),
        "MEMORY".into(),
        "FREE".into(),
        "DISTANCES".into(),
        "NOTE".into(),
    ]];
    for node in &topo.nodes {
        let distances = node
            .distances
            .iter()
            .map(|d| d.map_or_else(|| "-".to_string(), |v| v.to_string()))
            .collect::<Vec<_>>()
            .join(" ");
        let mut notes = Vec::new();
        if !node.has_cpus() {
            notes.push("memory only (no CPUs)".to_string());
        }
        if node.has_memory == Some(false) || node.memory_total_bytes == Some(0) {
            notes.push("no memory".to_string());
        }
        if let Some(hmat) = node.access.iter().find(|a| a.read_latency_ns.is_some()) {
            notes.push(format!(
                "HMAT read {} ns, {} MB/s",
                hmat.read_latency_ns.unwrap_or(0),
                hmat.read_bandwidth_mb_per_sec.map_or("?".into(), |b| b.to_string())
            ));
        }
        rows.push(vec![
            node.id.to_string(),
            if node.has_cpus() {
                node.cpus.to_string()
            } else {
                "-".into()
            },
            optional_bytes(node.memory_total_bytes),
            optional_bytes(node.memory_free_bytes),
            distances,
            notes.join("; "),
        ]);
    }
    columns(&rows)
}

fn cache_summary(topo: &Topology) -> String {
    // Group identical caches: "L2 1 MiB ×8, each shared by 2 CPUs".
    let mut groups: BTreeMap<(u32, String, Option<u64>, usize), Vec<String>> = BTreeMap::new();
    for domain in &topo.caches {
        let key = (domain.level, domain.kind.clone(), domain.size_bytes, domain.cpus.len());
        groups.entry(key).or_default().push(domain.cpus.to_string());
    }
    let mut out = String::new();
    for ((level, kind, size, sharing), sets) in groups {
        let suffix = match kind.as_str() {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
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

fn device_table(topo: &Topology) -> String {
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
                .map_or_else(|| "?".to_string(), |c| c.to_string()),
        ]);
    }
    columns(&rows)
}
