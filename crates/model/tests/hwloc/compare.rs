//! Comparing the view of our model with what `lstopo` printed, field by
//! field, and saying precisely what differs. Separate from [`super::view`]
//! so that the rules for what hwloc shows and the check that we agree with
//! it cannot blur into each other.

use std::collections::{BTreeMap, BTreeSet};

use numasleuth_model::Topology;

use super::console::{Console, Printed};
use super::view::{HwlocView, Locality};

/// How much was compared, so a summary of "all matched" cannot hide an
/// empty comparison.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Checked {
    pub(crate) nodes: usize,
    pub(crate) memories: usize,
    pub(crate) distances: usize,
}

pub(crate) struct Mismatch {
    pub(crate) field: String,
    pub(crate) detail: String,
}

pub(crate) fn compare(topology: &Topology, view: &HwlocView, console: &Console) -> (Vec<Mismatch>, Checked) {
    let mut checked = Checked::default();
    let mut out = Vec::new();
    let mut push = |field: String, detail: String| out.push(Mismatch { field, detail });

    if view.pus != console.pus {
        push(
            "PUs".into(),
            format!(
                "hwloc shows {}, we expect {}",
                diff(&console.pus, &view.pus, "only hwloc"),
                diff(&view.pus, &console.pus, "only ours")
            ),
        );
    }

    let ours: BTreeSet<u32> = view.nodes.keys().copied().collect();
    let theirs: BTreeSet<u32> = console.nodes.keys().copied().collect();
    if ours != theirs {
        let mut detail = format!(
            "hwloc shows {:?}, we expect {:?}",
            theirs.iter().collect::<Vec<_>>(),
            ours.iter().collect::<Vec<_>>()
        );
        for id in theirs.difference(&ours) {
            match (topology.node(*id), view.hidden.get(id)) {
                (None, _) => detail.push_str(&format!("; node {id} is missing from our model")),
                (Some(_), Some(why)) => detail.push_str(&format!("; we expected hwloc to hide node {id}: {why}")),
                (Some(_), None) => {}
            }
        }
        push("node ids".into(), detail);
    }

    for (id, theirs) in &console.nodes {
        let Some(expected) = view.nodes.get(id) else {
            continue;
        };
        checked.nodes += 1;
        checked.memories += usize::from(theirs.local.is_some());
        let cpus_match = match &expected.cpus {
            Locality::Cpus(cpus) => *cpus == theirs.cpus,
            Locality::Unplaced => theirs.cpus.is_empty() || theirs.cpus == console.pus,
        };
        if !cpus_match {
            let our_node = topology.node(*id).map(|n| n.cpus.to_string()).unwrap_or_default();
            let detail = match &expected.cpus {
                Locality::Cpus(cpus) => format!(
                    "hwloc {} vs expected {} (our Node::cpus is `{our_node}`): {}, {}",
                    compact(&theirs.cpus),
                    compact(cpus),
                    diff(&theirs.cpus, cpus, "only hwloc"),
                    diff(cpus, &theirs.cpus, "only ours"),
                ),
                Locality::Unplaced => format!(
                    "hwloc places this CPU-less node with CPUs {} but we find no initiator or nearer node \
                     (our Node::cpus is `{our_node}`)",
                    compact(&theirs.cpus)
                ),
            };
            push(format!("node {id} cpus"), detail);
        }
        match (theirs.local, expected.memory_bytes) {
            (None, None) => {}
            (Some(printed), Some(bytes)) if printed.round(bytes) == printed.value => {}
            (Some(printed), Some(bytes)) => {
                let shown = |bytes: u64| Printed {
                    value: printed.round(bytes),
                    shift: printed.shift,
                };
                let mut detail = format!(
                    "hwloc local={printed}, our memory_total_bytes {bytes} is {}",
                    shown(bytes)
                );
                if let Some(pool) = expected.hugetlb_bytes {
                    let without = bytes.saturating_sub(pool);
                    if shown(without) == printed {
                        detail.push_str(&format!(
                            "; hwloc left out the {pool}-byte hugetlb pool here, which it does not elsewhere"
                        ));
                    }
                }
                push(format!("node {id} local memory"), detail);
            }
            (Some(printed), None) => push(
                format!("node {id} local memory"),
                format!("hwloc local={printed}, ours unknown"),
            ),
            (None, Some(bytes)) => push(
                format!("node {id} local memory"),
                format!("hwloc shows no local memory, ours {bytes} bytes"),
            ),
        }
    }

    if let Some(matrix) = &console.distances {
        let mut wrong: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for (&(from, to), &value) in matrix {
            checked.distances += 1;
            let ours = topology.node(from).and_then(|node| {
                let column = topology.nodes.iter().position(|n| n.id == to)?;
                node.distances.get(column).copied().flatten()
            });
            if ours != Some(value) {
                let ours = ours.map_or("none".to_string(), |d| d.to_string());
                wrong
                    .entry(from)
                    .or_default()
                    .push(format!("to {to}: hwloc {value}, ours {ours}"));
            }
        }
        for (from, entries) in wrong {
            push(format!("node {from} distances"), entries.join(", "));
        }
    }
    (out, checked)
}

fn diff(a: &BTreeSet<u32>, b: &BTreeSet<u32>, label: &str) -> String {
    let only: BTreeSet<u32> = a.difference(b).copied().collect();
    format!("{label} {}", if only.is_empty() { "-".into() } else { compact(&only) })
}

fn compact(ids: &BTreeSet<u32>) -> String {
    let list: numasleuth_parse::IdList = ids.iter().copied().collect();
    if list.is_empty() {
        "{}".into()
    } else {
        format!("{{{list}}}")
    }
}
