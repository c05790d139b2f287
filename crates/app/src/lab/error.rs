//! Why a `lab` experiment could not run, each as the one line
//! `numasleuth` prints, with the collector's cause as its source.

use numasleuth_kernel::IdList;
use numasleuth_measure::MeasureError;

use crate::limits::OutOfRange;
use crate::machine::MachineError;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    /// More threads than CPUs, without `oversubscribe`: spinning waiters
    /// would fight the lock holder for the CPU. `node` is the workers'
    /// node when the CPUs are one node's.
    #[error(
        "{threads} threads is more than the {n} CPU{} {} ({}): threads would share CPUs, and a spinning \
         waiter can burn the time slice its lock holder needs. Use --threads or --thread-sweep with at most {n}, or \
         pass --oversubscribe to run anyway",
        if .cpus.len() == 1 { "" } else { "s" }, whose(*.node), cpu_list(.cpus), n = .cpus.len()
    )]
    TooManyThreads {
        threads: usize,
        cpus: Vec<u32>,
        node: Option<u32>,
    },
    /// A configuration failed; `experiment` and `step` name it
    /// ("locks", "ticket empty 2 threads").
    #[error("{experiment}, {step}")]
    Configuration {
        experiment: &'static str,
        step: String,
        #[source]
        cause: MeasureError,
    },
    #[error("--node not given")]
    NoNode(#[source] MachineError),
    #[error("--node")]
    Node(#[source] MachineError),
    #[error("node {node} has no CPU this process may use (allowed or -C CPUs {allowed}); pick another --node")]
    NodeWithoutCpus { node: u32, allowed: IdList },
    #[error("--remote-node {0} is the workers' own node; pick another node")]
    RemoteIsOwnNode(u32),
    #[error("--remote-node")]
    RemoteNode(#[source] MachineError),
    #[error("cannot place a line on node {node}")]
    TransferLine {
        node: u32,
        #[source]
        cause: MeasureError,
    },
    #[error("timing a line transfer on node {node}")]
    Transfer {
        node: u32,
        #[source]
        cause: MeasureError,
    },
}

/// Whose CPUs a thread count was measured against.
fn whose(node: Option<u32>) -> String {
    match node {
        Some(node) => format!("of node {node} this process may use"),
        None => "this process may use".to_string(),
    }
}

/// CPUs in list syntax (`0-3,8`), as the error names them.
pub(crate) fn cpu_list(cpus: &[u32]) -> String {
    cpus.iter().copied().collect::<IdList>().to_string()
}
