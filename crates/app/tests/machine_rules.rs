//! The machine rules of `mem`, `c2c` and `lab` on a two-node capture:
//! each refusal is one line that names what was asked and what there is.

mod common;

use common::machine;

use numasleuth_app::machine::{Machine, MachineError};
use numasleuth_kernel::IdList;

#[test]
fn nodes_and_cpus_that_are_not_there_are_refused_by_name() {
    let mut m = machine(&[0, 1]);
    let e = m.check_node(7).unwrap_err();
    assert!(matches!(e, MachineError::NoSuchNode { node: 7, .. }), "{e:?}");
    assert_eq!(e.to_string(), "node 7 does not exist; this machine has nodes 0-1");
    let e = m.restrict_cpus(Some(&IdList::new(vec![2, 3]))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "CPUs 2-3 are outside the CPUs this process may use (0-1; sched_getaffinity and the online mask)"
    );
    let e = m.check_cpu(3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "CPU 3 is outside the CPUs this process may use (0-1; sched_getaffinity and the online mask)"
    );
    m.restrict_cpus(Some(&IdList::new(vec![1]))).expect("an allowed CPU");
    assert_eq!(m.allowed_cpus, IdList::new(vec![1]));
}

/// A machine never holds an empty set of CPUs: every measurement (the
/// lab's first CPU among them) has one to start from.
#[test]
fn an_empty_cpu_list_is_refused_and_the_cpus_stay_as_they_were() {
    let mut m = machine(&[0, 1]);
    let e = m.restrict_cpus(Some(&IdList::new(Vec::new()))).unwrap_err();
    assert!(matches!(e, MachineError::NoCpu), "{e:?}");
    assert_eq!(m.allowed_cpus, IdList::new(vec![0, 1]));
}

#[test]
fn initiators_need_an_allowed_cpu_and_targets_need_memory() {
    let m = machine(&[0, 1]);
    // CPUs 0-1 are node 0's: node 1 is a target but no initiator.
    assert_eq!(m.nodes(None).expect("nodes"), (vec![0], vec![0, 1]));
    let e = m.nodes(Some(&IdList::new(vec![1]))).unwrap_err();
    assert!(matches!(e, MachineError::NoInitiator(_)), "{e:?}");
    let e = m.nodes(Some(&IdList::new(vec![0, 5]))).unwrap_err();
    assert_eq!(e.to_string(), "node 5 does not exist; this machine has nodes 0-1");
}

#[test]
fn a_buffer_larger_than_the_node_is_refused_before_it_is_bound() {
    let m = machine(&[0, 1]);
    let free = m
        .topo
        .node(1)
        .and_then(|n| n.memory_free_bytes)
        .expect("node 1's MemFree");
    assert!(m.check_fits(1, free as usize, "the buffer").is_ok());
    let e = m.check_fits(1, free as usize + 1, "the buffer").unwrap_err();
    assert!(matches!(e, MachineError::BeyondNode { node: 1, .. }), "{e:?}");
    assert!(
        e.to_string().starts_with("the buffer needs ")
            && e.to_string().contains("on node 1, more than its ")
            && e.to_string()
                .ends_with("(MemFree in /sys/devices/system/node/node1/meminfo); use a smaller --size"),
        "{e}"
    );
}

#[test]
fn a_measurement_refuses_a_snapshot_and_takes_the_live_machine() {
    let snapshot = numasleuth_kernel::test_support::fixture("qemu-two-nodes");
    let error = Machine::refuse_snapshot(&snapshot, "mem").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`mem` measures this machine, so it cannot run on --root "),
        "{error}"
    );
    assert!(Machine::refuse_snapshot(&numasleuth_kernel::Root::live(), "mem").is_ok());
}
