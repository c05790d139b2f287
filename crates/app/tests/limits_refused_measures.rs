//! A measurement request built by any front-end, not only cli's parsers,
//! is refused when a value is out of its limit (`app::limits`): `mem`,
//! `c2c` and `lab` check their requests before they begin a step, so the
//! refusal is the typed `OutOfRange` naming the value, and nothing is
//! measured (the observer hears no step).

mod common;

use common::machine;

use numasleuth_analyze::cpu_sample::CpuSample;
use numasleuth_app::c2c::{self, C2cError, C2cRequest};
use numasleuth_app::lab::false_sharing::{self, FalseSharingRequest};
use numasleuth_app::lab::{LabError, LabRequest, Threads};
use numasleuth_app::limits::OutOfRange;
use numasleuth_app::mem::{self, MemError, MemMode, MemRequest};
use numasleuth_app::steps::StepObserver;
use numasleuth_kernel::IdList;
use numasleuth_model::stop::Stop;

/// A run that began would be heard; a refused request says nothing.
struct Deaf;

impl StepObserver for Deaf {
    fn say(&self, line: &str) {
        panic!("a refused request said {line:?}");
    }
    fn begin(&mut self, total: u64, label: &str) {
        panic!("a refused request began {total} {label}");
    }
    fn step(&mut self, _done: u64, _total: u64, what: &str) {
        panic!("a refused request stepped {what}");
    }
    fn end(&mut self) {}
}

fn refused<T, E: std::fmt::Debug>(result: Result<T, E>) -> E {
    match result {
        Ok(_) => panic!("an out-of-range request ran"),
        Err(e) => e,
    }
}

fn mem_refusal(request: MemRequest) -> &'static str {
    match refused(mem::run(machine(&[0, 1, 2, 3]), &request, &Stop::new(), &mut Deaf)) {
        MemError::OutOfRange(e) => e.what,
        e => panic!("{e:?}"),
    }
}

#[test]
fn mem_refuses_a_petabyte_a_million_threads_and_endless_lists() {
    let base = MemRequest::quick_matrices;
    let petabyte = 1 << 50;
    assert_eq!(
        mem_refusal(MemRequest {
            size_bytes: Some(petabyte),
            ..base()
        }),
        "the buffer"
    );
    assert_eq!(
        mem_refusal(MemRequest {
            threads: Some(1_000_000),
            ..base()
        }),
        "the bandwidth threads per node"
    );
    assert_eq!(
        mem_refusal(MemRequest {
            sample_ms: Some(u64::MAX),
            ..base()
        }),
        "the sample length in ms"
    );
    assert_eq!(
        mem_refusal(MemRequest {
            samples: Some(0),
            ..base()
        }),
        "the samples kept"
    );
    let sweep = |sizes_bytes| MemMode::Sweep {
        sizes_bytes,
        node: None,
    };
    assert_eq!(
        mem_refusal(MemRequest {
            mode: sweep(vec![4096; 65]),
            ..base()
        }),
        "the size sweep"
    );
    assert_eq!(
        mem_refusal(MemRequest {
            mode: sweep(vec![4096, 1]),
            ..base()
        }),
        "a swept buffer"
    );
    let loaded = |delays: Vec<u64>| MemMode::Loaded {
        delays_ns: Some(delays),
        node: None,
    };
    assert_eq!(
        mem_refusal(MemRequest {
            mode: loaded(vec![0; 65]),
            ..base()
        }),
        "the delay list"
    );
    assert_eq!(
        mem_refusal(MemRequest {
            mode: loaded(vec![u64::MAX]),
            ..base()
        }),
        "a delay in ns"
    );
}

#[test]
fn c2c_refuses_samples_and_transfers_beyond_their_limits() {
    let request = |samples, transfers| C2cRequest {
        cpus: Some(IdList::new(vec![0, 1])),
        home_node: None,
        method: numasleuth_measure::c2c::Method::Cas,
        sample: CpuSample::All,
        samples,
        transfers,
        quick: true,
        raw: false,
    };
    let machine = machine(&[0, 1, 2, 3]);
    for (asked, named) in [
        (request(Some(1001), None), "the samples kept"),
        (request(None, Some(0)), "the transfers per sample"),
    ] {
        let e = refused(c2c::run(&machine, &asked, &Stop::new(), &mut Deaf));
        assert!(
            matches!(&e, C2cError::OutOfRange(OutOfRange { what, .. }) if *what == named),
            "{e:?}"
        );
    }
}

#[test]
fn lab_refuses_a_million_threads_and_a_sweep_of_a_thousand_runs() {
    let run = |threads| {
        let request = FalseSharingRequest {
            common: LabRequest {
                cpus: None,
                threads,
                samples: 1,
                sample_ms: 1,
                oversubscribe: true,
            },
            placements: Vec::new(),
        };
        match refused(false_sharing::run(
            machine(&[0, 1, 2, 3]),
            &request,
            &Stop::new(),
            &mut Deaf,
        )) {
            LabError::OutOfRange(e) => e.what,
            e => panic!("{e:?}"),
        }
    };
    assert_eq!(run(Threads::One(1_000_000)), "a thread count");
    assert_eq!(
        run(Threads::Counts(IdList::new((1..=1000).collect()))),
        "the thread sweep"
    );
    assert_eq!(run(Threads::Counts(IdList::new(vec![1, 5000]))), "a thread count");
}
