//! What `lab remote-global` must tell the user it could not do or could
//! not trust: a skipped remote placement, an untimed line transfer,
//! unverified placements, wide spreads and starved threads.

use super::{Row, Transfer};
use crate::lab::{cpu_share_warning, oversubscribed_warning, spread_warning};

/// What the run could do, beside its rows and transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunShape {
    /// The workers' node.
    pub node: u32,
    /// Nodes on the machine.
    pub node_count: usize,
    pub remote_node: Option<u32>,
    /// Whether a line transfer was timed (the node had two usable CPUs).
    pub timed: bool,
    pub oversubscribed: bool,
}

pub fn warnings(shape: RunShape, rows: &[Row], transfers: &[Transfer]) -> Vec<String> {
    let mut warnings = Vec::new();
    if shape.remote_node.is_none() {
        warnings.push(format!(
            "no other node with memory (this machine has {} node{}): the remote placement was skipped",
            shape.node_count,
            if shape.node_count == 1 { "" } else { "s" }
        ));
    }
    if !shape.timed {
        warnings.push(format!(
            "node {} has only one CPU this process may use, so no line transfer could be timed and the \
             bottleneck model has no input",
            shape.node
        ));
    }
    for row in rows.iter().filter(|r| !r.placement_verified) {
        warnings.push(format!(
            "the {} global could not be verified to be on node {} ({} threads)",
            row.global, row.global_node, row.threads
        ));
    }
    let summaries = rows
        .iter()
        .map(|r| (format!("{} global {} threads", r.global, r.threads), &r.ops_per_sec))
        .chain(
            transfers
                .iter()
                .map(|t| (format!("line transfer on node {}", t.home_node), &t.ns)),
        );
    warnings.extend(spread_warning(summaries));
    warnings.extend(cpu_share_warning(rows.iter().map(|r| {
        (
            format!("{} global {} threads", r.global, r.threads),
            r.cpu_share.as_ref(),
        )
    })));
    warnings.extend(oversubscribed_warning(shape.oversubscribed));
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;
    use numasleuth_model::lab::Global;

    fn row(global: Global, verified: bool) -> Row {
        let ops = summarize(&[1000.0, 1001.0, 999.0]).unwrap();
        Row {
            global,
            threads: 2,
            cpus: vec![0, 1],
            global_node: 1,
            ops_per_sec: ops,
            ops_per_sec_per_thread: ops,
            slowdown_vs_per_thread: None,
            placement_verified: verified,
            cpu_share: None,
            raw: Vec::new(),
        }
    }

    #[test]
    fn a_full_quiet_run_has_no_warning() {
        let shape = RunShape {
            node: 0,
            node_count: 2,
            remote_node: Some(1),
            timed: true,
            oversubscribed: false,
        };
        assert_eq!(warnings(shape, &[row(Global::Local, true)], &[]), Vec::<String>::new());
    }

    #[test]
    fn each_gap_is_named_once() {
        let shape = RunShape {
            node: 3,
            node_count: 1,
            remote_node: None,
            timed: false,
            oversubscribed: true,
        };
        let noisy = Transfer {
            global: Global::Local,
            home_node: 3,
            cpus: [0, 1],
            ns: summarize(&[50.0, 200.0, 20.0, 90.0]).unwrap(),
        };
        let w = warnings(shape, &[row(Global::Remote, false)], &[noisy]);
        assert_eq!(w.len(), 5, "{w:#?}");
        assert!(
            w[0].starts_with("no other node with memory (this machine has 1 node)"),
            "{}",
            w[0]
        );
        assert!(w[1].starts_with("node 3 has only one CPU"), "{}", w[1]);
        assert_eq!(
            w[2],
            "the remote global could not be verified to be on node 1 (2 threads)"
        );
        assert!(w[3].contains("worst: line transfer on node 3"), "{}", w[3]);
        assert!(w[4].starts_with("more threads than CPUs"), "{}", w[4]);
    }
}
