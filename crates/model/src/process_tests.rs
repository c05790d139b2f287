//! Thread placement from real task files: the CPU a thread last ran on,
//! unless it may no longer run there.

use numasleuth_parse::procfs::process::ThreadReading;
use numasleuth_parse::procfs::status::parse_allowed;
use numasleuth_parse::procfs::task::parse_stat;
use numasleuth_parse::IdList;

use super::*;
use crate::{Cpu, NumaSource};

/// `/proc/29014/task/29014/stat` on the development VM (kernel 6.18): a
/// `sleep` started with `taskset -c 1`, then re-pinned from outside with
/// `taskset -p -c 0 29014` while it slept. `processor` (field 39) is still
/// 1, the CPU it last ran on.
const SLEEPER_STAT: &str = "29014 (sleep) S 29010 29010 11283 0 -1 4194304 213 0 2 0 0 0 0 0 20 0 1 0 102976 2990080 420 18446744073709551615 94683212062720 94683212080649 140731666597696 0 0 0 0 6 0 1 0 0 17 1 0 0 0 0 0 94683212094736 94683212096000 94684253315072 140731666602727 140731666602737 140731666602737 140731666604009 0\n";

/// The same task's `status`, abridged to the lines read: it may now run
/// only on CPU 0.
const SLEEPER_STATUS: &str = "Name:\tsleep\nCpus_allowed:\t1\nCpus_allowed_list:\t0\nMems_allowed_list:\t0\n";

/// CPUs per node, CPU ids in order.
fn topology(nodes: &[&[u32]]) -> Topology {
    let cpus = nodes
        .iter()
        .enumerate()
        .flat_map(|(node, cpus)| {
            cpus.iter().map(move |&id| Cpu {
                id,
                node: Some(node as u32),
                online: true,
                ..Cpu::default()
            })
        })
        .collect();
    Topology {
        numa: NumaSource::Sysfs,
        nodes: Vec::new(),
        cpus,
        ..Topology::default()
    }
}

fn reading(stat: &str, status: &str) -> ThreadReading {
    let allowed = parse_allowed(status).unwrap();
    ThreadReading {
        stat: parse_stat(stat).unwrap(),
        allowed_cpus: allowed.cpus,
        allowed_mems: allowed.mems,
        sched: None,
    }
}

#[test]
fn a_thread_that_slept_through_taskset_is_placed_by_its_allowed_cpus() {
    // CPU 1 on node 1, CPU 0 on node 0: the capture's CPUs on two nodes.
    let t = ThreadPlacement::from_reading(&reading(SLEEPER_STAT, SLEEPER_STATUS), &topology(&[&[0], &[1]]));
    assert_eq!(t.cpu, Some(1));
    assert_eq!(t.node, Some(0));
    assert_eq!(t.placed_by, PlacedBy::AllowedCpus);
    assert_eq!(t.nodes(), vec![0]);
    assert_eq!(
        t.moved_away().as_deref(),
        Some("thread 29014 last ran on CPU 1 but may now run only on 0 (node 0)")
    );
}

#[test]
fn the_issue_example_cpu_2_now_0_1() {
    let stat = SLEEPER_STAT
        .replacen("29014 (sleep)", "114 (victim)", 1)
        .replace(" 17 1 0 0", " 17 2 0 0");
    let status = SLEEPER_STATUS.replace("list:\t0\nMems", "list:\t0-1\nMems");
    let t = ThreadPlacement::from_reading(&reading(&stat, &status), &topology(&[&[0, 1], &[2, 3]]));
    assert_eq!((t.cpu, t.node), (Some(2), Some(0)));
    assert_eq!(
        t.moved_away().as_deref(),
        Some("thread 114 last ran on CPU 2 but may now run only on 0-1 (node 0)")
    );
}

#[test]
fn allowed_cpus_on_several_nodes_name_no_single_node() {
    let status = SLEEPER_STATUS.replace("list:\t0\nMems", "list:\t0,2\nMems");
    let t = ThreadPlacement::from_reading(&reading(SLEEPER_STAT, &status), &topology(&[&[0, 1], &[2, 3]]));
    assert_eq!(t.node, None);
    assert_eq!(t.allowed_cpu_nodes, Some(IdList::new(vec![0, 1])));
    assert_eq!(t.nodes(), vec![0, 1]);
    assert_eq!(
        t.moved_away().as_deref(),
        Some("thread 29014 last ran on CPU 1 but may now run only on 0,2 (nodes 0-1: several, so no single node is assumed)")
    );
}

#[test]
fn a_last_cpu_inside_the_allowed_set_places_the_thread() {
    let status = SLEEPER_STATUS.replace("list:\t0\nMems", "list:\t0-1\nMems");
    let t = ThreadPlacement::from_reading(&reading(SLEEPER_STAT, &status), &topology(&[&[0], &[1]]));
    assert_eq!((t.node, t.placed_by), (Some(1), PlacedBy::LastCpu));
    assert_eq!(t.moved_away(), None);
    // No allowed list (an old kernel): the last CPU is all there is.
    let t = ThreadPlacement::from_reading(&reading(SLEEPER_STAT, "Name:\tsleep\n"), &topology(&[&[0], &[1]]));
    assert_eq!((t.node, t.placed_by), (Some(1), PlacedBy::LastCpu));
    // A CPU the topology does not know.
    let t = ThreadPlacement::from_reading(&reading(SLEEPER_STAT, "Name:\tsleep\n"), &topology(&[&[0]]));
    assert_eq!((t.node, t.placed_by), (None, PlacedBy::Unknown));
}

#[test]
fn remote_is_memory_where_no_thread_runs_summed_without_overflow() {
    let by_node: NodeCounts = [(0, 4096), (1, 8192), (2, u64::MAX)].into_iter().collect();
    assert_eq!(remote_bytes(&by_node, &IdList::new(vec![0])), Some(u64::MAX));
    assert_eq!(remote_bytes(&by_node, &IdList::new(vec![0, 2])), Some(8192));
    assert_eq!(remote_bytes(&by_node, &IdList::new(Vec::new())), None);
    assert_eq!(total(&by_node), u64::MAX);
    let mut sum = by_node.clone();
    add_counts(&mut sum, &by_node, 2);
    assert_eq!(sum[&2], u64::MAX);
}
