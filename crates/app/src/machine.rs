//! The machine a measurement runs on (`mem`, `c2c`, `lab`): its topology,
//! the CPUs this process may pin to, and each node's room for a working
//! set. Every rule that refuses what could not be measured honestly lives
//! here, with its one-line reason; the front-end only asks.

use std::collections::BTreeMap;

use numasleuth_analyze::memwatch::node_samples;
use numasleuth_analyze::working_set::NodeRoom;
use numasleuth_kernel::procfs::zoneinfo;
use numasleuth_kernel::{IdList, Root};
use numasleuth_measure::{affinity, MeasureError};
use numasleuth_model::units::bytes as human_bytes;
use numasleuth_model::Topology;

/// Why a measurement cannot be placed as asked.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("`{command}` measures this machine, so it cannot run on --root {root}")]
    NotLive { command: String, root: String },
    #[error("cannot tell which CPUs this process may use")]
    Affinity(#[source] MeasureError),
    #[error("this process may run on no online CPU")]
    NoCpu,
    #[error("CPU{} {} {} outside the CPUs this process may use ({allowed}; sched_getaffinity and the online mask)",
        plural(.outside.len()), .outside.to_human(), if .outside.len() == 1 { "is" } else { "are" },
        allowed = .allowed.to_human())]
    CpusOutside { outside: IdList, allowed: IdList },
    #[error("CPU {cpu} is outside the CPUs this process may use ({allowed}; sched_getaffinity and the online mask)")]
    CpuOutside { cpu: u32, allowed: IdList },
    #[error("node {node} does not exist; this machine has node{} {known}", plural(*.count))]
    NoSuchNode { node: u32, count: usize, known: String },
    #[error("node {0} has no memory to place a buffer on")]
    NodeWithoutMemory(u32),
    #[error("the kernel does not say which node CPU {0} is on (no node lists it)")]
    CpuWithoutNode(u32),
    #[error("none of the chosen nodes has a CPU this process may use (allowed CPUs {0})")]
    NoInitiator(IdList),
    #[error("none of the chosen nodes has memory")]
    NoTarget,
    #[error(
        "{what} needs {}, more than this machine's {} of memory (MemTotal in /proc/meminfo); use a smaller --size",
        human_bytes(*.bytes), human_bytes(*.total)
    )]
    BeyondMachine { what: String, bytes: u64, total: u64 },
    #[error(
        "{what} needs {} on node {node}, more than its {} of free memory (MemFree in \
         /sys/devices/system/node/node{node}/meminfo); use a smaller --size",
        human_bytes(*.bytes), human_bytes(*.free)
    )]
    BeyondNode {
        what: String,
        node: u32,
        bytes: u64,
        free: u64,
    },
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub struct Machine {
    pub topo: Topology,
    /// CPUs this process can pin to: its affinity mask, online only.
    pub allowed_cpus: IdList,
    /// Each node's high watermark over its ordinary zones, in bytes, from
    /// /proc/zoneinfo; empty when it could not be read. Working sets keep
    /// clear of it.
    pub high_watermark_bytes: BTreeMap<u32, u64>,
}

impl Machine {
    /// Refuses a snapshot for a measurement (`command`): it measures the
    /// machine it runs on, which a snapshot's readings do not describe.
    pub fn refuse_snapshot(root: &Root, command: &str) -> Result<(), MachineError> {
        if root.is_live() {
            return Ok(());
        }
        Err(MachineError::NotLive {
            command: command.to_string(),
            root: root.base().display().to_string(),
        })
    }

    /// This process's view of the live machine whose topology is `topo`.
    pub fn new(root: &Root, topo: Topology) -> Result<Machine, MachineError> {
        let mask: IdList = affinity::allowed_cpus()
            .map_err(MachineError::Affinity)?
            .into_iter()
            .collect();
        let online = topo.online_cpus();
        let allowed_cpus = if online.is_empty() {
            mask
        } else {
            mask.intersection(&online)
        };
        if allowed_cpus.is_empty() {
            return Err(MachineError::NoCpu);
        }
        Ok(Machine {
            topo,
            allowed_cpus,
            high_watermark_bytes: high_watermarks(root),
        })
    }

    /// Narrows the CPUs to those given with `-C`, refusing any this process
    /// may not use: pinning there would fail mid-run, or measure nothing.
    pub fn restrict_cpus(&mut self, only: Option<&IdList>) -> Result<(), MachineError> {
        let Some(only) = only else {
            return Ok(());
        };
        // The front-end refuses an empty list; a machine never holds one,
        // so every measurement has a first CPU to start from.
        if only.is_empty() {
            return Err(MachineError::NoCpu);
        }
        let outside = only.difference(&self.allowed_cpus);
        if !outside.is_empty() {
            return Err(MachineError::CpusOutside {
                outside,
                allowed: self.allowed_cpus.clone(),
            });
        }
        self.allowed_cpus = only.clone();
        Ok(())
    }

    fn no_such_node(&self, node: u32) -> MachineError {
        MachineError::NoSuchNode {
            node,
            count: self.topo.nodes.len(),
            known: self.topo.nodes.iter().map(|n| n.id).collect::<IdList>().to_string(),
        }
    }

    pub fn check_node(&self, node: u32) -> Result<(), MachineError> {
        match self.topo.node(node) {
            None => Err(self.no_such_node(node)),
            Some(n) if !n.may_hold_memory() => Err(MachineError::NodeWithoutMemory(node)),
            Some(_) => Ok(()),
        }
    }

    pub fn check_cpu(&self, cpu: u32) -> Result<(), MachineError> {
        if !self.allowed_cpus.contains(cpu) {
            return Err(MachineError::CpuOutside {
                cpu,
                allowed: self.allowed_cpus.clone(),
            });
        }
        Ok(())
    }

    /// What node `node` has free for a working set; `None` when its free
    /// memory is unknown.
    pub fn room(&self, node: u32) -> Option<NodeRoom> {
        Some(NodeRoom {
            node,
            free_bytes: self.topo.node(node)?.memory_free_bytes?,
            high_watermark_bytes: self.high_watermark_bytes.get(&node).copied(),
            // The buffers are allocated here, so this machine's page size.
            base_page_bytes: numasleuth_kernel::pages::page_size_bytes(),
        })
    }

    /// The node `cpu` is on, or a one-line error when the kernel does not
    /// say: a measurement is never placed on node 0 by guess.
    pub fn cpu_home_node(&self, cpu: u32) -> Result<u32, MachineError> {
        self.topo.node_of_cpu(cpu).ok_or(MachineError::CpuWithoutNode(cpu))
    }

    /// Allowed CPUs of `node`, in order.
    pub fn cpus_of(&self, node: u32) -> Vec<u32> {
        match self.topo.node(node) {
            Some(n) => n.cpus.intersection(&self.allowed_cpus).iter().collect(),
            None => Vec::new(),
        }
    }

    /// (initiators, targets): nodes with allowed CPUs, nodes with memory,
    /// limited to `only` when given (every id in it must exist).
    pub fn nodes(&self, only: Option<&IdList>) -> Result<(Vec<u32>, Vec<u32>), MachineError> {
        if let Some(missing) = only.and_then(|o| o.iter().find(|id| self.topo.node(*id).is_none())) {
            return Err(self.no_such_node(missing));
        }
        let chosen = |id: u32| only.is_none_or(|o| o.contains(id));
        let initiators: Vec<u32> = self
            .topo
            .nodes
            .iter()
            .map(|n| n.id)
            .filter(|&id| chosen(id) && !self.cpus_of(id).is_empty())
            .collect();
        let targets: Vec<u32> = self
            .topo
            .nodes
            .iter()
            .filter(|n| chosen(n.id) && n.may_hold_memory())
            .map(|n| n.id)
            .collect();
        if initiators.is_empty() {
            return Err(MachineError::NoInitiator(self.allowed_cpus.clone()));
        }
        if targets.is_empty() {
            return Err(MachineError::NoTarget);
        }
        Ok((initiators, targets))
    }

    /// Refuses a buffer larger than the node's free memory: binding it
    /// there would wake the OOM killer rather than fail cleanly.
    pub fn check_fits(&self, node: u32, bytes: usize, what: &str) -> Result<(), MachineError> {
        let bytes = bytes as u64;
        match self.topo.node(node).and_then(|n| n.memory_free_bytes) {
            Some(free) if bytes > free => Err(MachineError::BeyondNode {
                what: what.to_string(),
                node,
                bytes,
                free,
            }),
            Some(_) => Ok(()),
            // The node's free memory is unknown: the machine's memory is
            // still a hard bound, so a typo cannot summon the OOM killer.
            None => match self.topo.memory_total_bytes.filter(|total| bytes > *total) {
                Some(total) => Err(MachineError::BeyondMachine {
                    what: what.to_string(),
                    bytes,
                    total,
                }),
                None => Ok(()),
            },
        }
    }
}

/// High watermarks by node, summed over the zones ordinary allocations use
/// (memwatch's one definition); empty when /proc/zoneinfo is unreadable,
/// which the working-set notes then say.
fn high_watermarks(root: &Root) -> BTreeMap<u32, u64> {
    let Ok(zones) = zoneinfo::read(root) else {
        return BTreeMap::new();
    };
    let page_bytes = numasleuth_kernel::pages::page_size_bytes();
    node_samples(&zones, &BTreeMap::new(), &BTreeMap::new())
        .into_iter()
        .map(|n| (n.node, n.high_pages.saturating_mul(page_bytes)))
        .collect()
}
