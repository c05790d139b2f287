//! `mem` and `c2c` requests refused before anything is measured, on a
//! two-node capture: each refusal is the typed error whose one line the
//! cli prints (its tests compare the same lines end to end), and the
//! observer hears the run that was begun.

mod common;

use common::machine;

use numasleuth_analyze::cpu_sample::CpuSample;
use numasleuth_app::c2c::{self, C2cError, C2cRequest};
use numasleuth_app::machine::MachineError;
use numasleuth_app::mem::{self, MemError, MemMode, MemRequest};
use numasleuth_app::steps::StepObserver;
use numasleuth_kernel::IdList;
use numasleuth_measure::c2c::Method;
use numasleuth_model::stop::Stop;

/// What a run told its observer.
#[derive(Default)]
struct Heard {
    events: Vec<String>,
}

impl StepObserver for Heard {
    fn say(&self, _line: &str) {}
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

fn mem_request(mode: MemMode) -> MemRequest {
    MemRequest {
        mode,
        ..MemRequest::quick_matrices()
    }
}

fn mem_error(allowed: &[u32], request: MemRequest, heard: &mut Heard) -> MemError {
    match mem::run(machine(allowed), &request, &Stop::new(), heard) {
        Ok(_) => panic!("{:?} was measured, not refused", request.mode),
        Err(e) => e,
    }
}

#[test]
fn more_bandwidth_threads_than_cpus_are_refused_once_the_matrix_begins() {
    let mut heard = Heard::default();
    let request = MemRequest {
        threads: Some(3),
        ..mem_request(MemMode::Bandwidth)
    };
    let e = mem_error(&[0, 1], request, &mut heard);
    assert!(
        matches!(
            e,
            MemError::TooManyThreads {
                threads: 3,
                node: 0,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "--threads 3 is more than the 2 CPUs of node 0 this process may use (0-1); threads sharing a CPU would \
         measure the scheduler, not memory"
    );
    // One initiator (node 0) by two targets; refused before the first cell.
    assert_eq!(heard.events, ["begin 2 mem bandwidth"]);
}

#[test]
fn loaded_latency_needs_a_second_cpu_on_the_chasing_node() {
    let request = mem_request(MemMode::Loaded {
        delays_ns: None,
        node: None,
    });
    let e = mem_error(&[0], request, &mut Heard::default());
    assert_eq!(
        e.to_string(),
        "loaded latency needs a second CPU on node 0 to generate load, and only CPU 0 there is allowed (or listed \
         with -C)"
    );
}

#[test]
fn the_machine_rules_refuse_a_sweep_and_a_cpu_list_by_name() {
    let sweep = |node, sizes_bytes| mem_request(MemMode::Sweep { sizes_bytes, node });
    let e = mem_error(&[0, 1], sweep(Some(7), vec![4096]), &mut Heard::default());
    assert!(
        matches!(e, MemError::Machine(MachineError::NoSuchNode { node: 7, .. })),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "node 7 does not exist; this machine has nodes 0-1");
    // Within the limit on any buffer (app::limits), beyond this node's memory.
    let too_big = numasleuth_app::limits::BUFFER_MAX_BYTES;
    let e = mem_error(&[0, 1], sweep(Some(1), vec![too_big]), &mut Heard::default());
    assert!(
        matches!(e, MemError::Machine(MachineError::BeyondNode { node: 1, .. })),
        "{e:?}"
    );
    let request = MemRequest {
        cpus: Some(IdList::new(vec![3])),
        ..mem_request(MemMode::Latency)
    };
    let e = mem_error(&[0, 1], request, &mut Heard::default());
    assert_eq!(
        e.to_string(),
        "CPU 3 is outside the CPUs this process may use (0-1; sched_getaffinity and the online mask)"
    );
}

fn c2c_request(cpus: &[u32], home_node: Option<u32>) -> C2cRequest {
    C2cRequest {
        cpus: Some(IdList::new(cpus.to_vec())),
        home_node,
        method: Method::Cas,
        sample: CpuSample::All,
        samples: None,
        transfers: None,
        quick: true,
        raw: false,
    }
}

fn c2c_error(request: C2cRequest) -> C2cError {
    match c2c::run(&machine(&[0, 1]), &request, &Stop::new(), &mut Heard::default()) {
        Ok(_) => panic!("{request:?} was measured, not refused"),
        Err(e) => e,
    }
}

#[test]
fn c2c_refuses_one_cpu_a_cpu_it_may_not_use_and_a_missing_home_node() {
    let e = c2c_error(c2c_request(&[0], None));
    assert!(matches!(e, C2cError::TooFewCpus(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "c2c needs at least two CPUs, and the selection leaves 1 (CPU 0)"
    );
    let e = c2c_error(c2c_request(&[0, 2], None));
    assert_eq!(
        e.to_string(),
        "CPU 2 is outside the CPUs this process may use (0-1; sched_getaffinity and the online mask)"
    );
    let e = c2c_error(c2c_request(&[0, 1], Some(4)));
    assert_eq!(e.to_string(), "node 4 does not exist; this machine has nodes 0-1");
}
