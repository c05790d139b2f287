//! `lab` requests refused before anything is measured, on a two-node
//! capture (CPUs 0-1 on node 0, 2-3 on node 1): each refusal is the typed
//! error whose lines the cli prints as `numasleuth: error: …` (anyhow's
//! `{:#}`: the error, then each source, joined by ": "), and the observer
//! hears no run begin.

mod common;

use common::machine;

use std::error::Error;

use numasleuth_app::lab::false_sharing::{self, FalseSharingRequest};
use numasleuth_app::lab::locks::{self, LocksRequest};
use numasleuth_app::lab::remote_global::{self, RemoteGlobalRequest};
use numasleuth_app::lab::{LabError, LabRequest, Threads};
use numasleuth_app::machine::MachineError;
use numasleuth_app::steps::StepObserver;
use numasleuth_kernel::IdList;
use numasleuth_model::lab::LockKind;
use numasleuth_model::stop::Stop;

/// Every step a run would have shown; a refusal shows none.
#[derive(Default)]
struct Heard {
    events: Vec<String>,
}

impl StepObserver for Heard {
    fn say(&self, line: &str) {
        panic!("a refused request said {line:?}");
    }
    fn begin(&mut self, total: u64, label: &str) {
        self.events.push(format!("begin {total} {label}"));
    }
    fn step(&mut self, done: u64, total: u64, what: &str) {
        self.events.push(format!("step {done}/{total} {what}"));
    }
    fn end(&mut self) {
        self.events.push("end".into());
    }
}

/// The line `numasleuth: error: ` is followed by.
fn line(e: &LabError) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn common(threads: Threads) -> LabRequest {
    LabRequest {
        cpus: None,
        threads,
        samples: 1,
        sample_ms: 1,
        oversubscribe: false,
    }
}

fn remote_global_error(node: Option<u32>, remote_node: Option<u32>, threads: Threads) -> LabError {
    let request = RemoteGlobalRequest {
        common: common(threads),
        node,
        remote_node,
        writes_per_op: 3,
    };
    let mut heard = Heard::default();
    let outcome = remote_global::run(machine(&[0, 1]), &request, &Stop::new(), &mut heard);
    assert!(heard.events.is_empty(), "{:?}", heard.events);
    match outcome {
        Ok(_) => panic!("{request:?} was measured, not refused"),
        Err(e) => e,
    }
}

#[test]
fn more_threads_than_cpus_are_refused_without_oversubscribe() {
    let request = FalseSharingRequest {
        common: common(Threads::One(3)),
        placements: Vec::new(),
    };
    let mut heard = Heard::default();
    let e = match false_sharing::run(machine(&[0, 1]), &request, &Stop::new(), &mut heard) {
        Ok(_) => panic!("3 threads on 2 CPUs were measured, not refused"),
        Err(e) => e,
    };
    assert!(
        matches!(&e, LabError::TooManyThreads { threads: 3, node: None, cpus } if cpus == &[0, 1]),
        "{e:?}"
    );
    assert_eq!(
        line(&e),
        "3 threads is more than the 2 CPUs this process may use (0-1): threads would share CPUs, and a spinning \
         waiter can burn the time slice its lock holder needs. Use --threads or --thread-sweep with at most 2, or \
         pass --oversubscribe to run anyway"
    );
    assert!(heard.events.is_empty(), "{:?}", heard.events);

    // The largest count of a sweep is the one refused; one CPU is singular.
    let request = LocksRequest {
        common: LabRequest {
            cpus: Some(IdList::new(vec![1])),
            ..common(Threads::Counts(IdList::new(vec![1, 4])))
        },
        placements: Vec::new(),
        locks: vec![LockKind::Mcs],
    };
    let e = match locks::run(machine(&[0, 1]), &request, &Stop::new(), &mut Heard::default()) {
        Ok(_) => panic!("4 threads on CPU 1 were measured, not refused"),
        Err(e) => e,
    };
    assert!(
        line(&e).starts_with("4 threads is more than the 1 CPU this process may use (1): "),
        "{e}"
    );
}

#[test]
fn a_cpu_list_outside_the_allowed_cpus_is_refused_by_the_machine_rules() {
    let request = LocksRequest {
        common: LabRequest {
            cpus: Some(IdList::new(vec![1, 5])),
            ..common(Threads::Sweep)
        },
        placements: Vec::new(),
        locks: Vec::new(),
    };
    let e = match locks::run(machine(&[0, 1]), &request, &Stop::new(), &mut Heard::default()) {
        Ok(_) => panic!("CPU 5 was measured, not refused"),
        Err(e) => e,
    };
    assert!(
        matches!(e, LabError::Machine(MachineError::CpusOutside { .. })),
        "{e:?}"
    );
    assert_eq!(
        line(&e),
        "CPU 5 is outside the CPUs this process may use (0-1; sched_getaffinity and the online mask)"
    );
}

#[test]
fn remote_global_refuses_nodes_it_cannot_use() {
    let e = remote_global_error(Some(0), Some(0), Threads::Sweep);
    assert!(matches!(e, LabError::RemoteIsOwnNode(0)), "{e:?}");
    assert_eq!(line(&e), "--remote-node 0 is the workers' own node; pick another node");

    let e = remote_global_error(Some(7), None, Threads::Sweep);
    assert_eq!(line(&e), "--node: node 7 does not exist; this machine has nodes 0-1");

    let e = remote_global_error(Some(0), Some(4000), Threads::Sweep);
    assert_eq!(
        line(&e),
        "--remote-node: node 4000 does not exist; this machine has nodes 0-1"
    );

    // Node 1's CPUs (2-3) are not among those this process may use.
    let e = remote_global_error(Some(1), None, Threads::Sweep);
    assert_eq!(
        line(&e),
        "node 1 has no CPU this process may use (allowed or -C CPUs 0-1); pick another --node"
    );

    let e = remote_global_error(None, Some(1), Threads::One(3));
    assert!(
        line(&e).starts_with("3 threads is more than the 2 CPUs of node 0 this process may use (0-1): "),
        "{e}"
    );
}
