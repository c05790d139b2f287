//! A request built by any front-end, not only cli's parsers, is refused
//! when a value is out of its limit (`app::limits`): each command checks
//! its request before it looks at the system, so on a snapshot, where
//! every one of them would otherwise refuse to run live, the refusal is
//! the typed `OutOfRange` naming the value.

mod common;

use std::time::Duration;

use common::machine;

use numasleuth_analyze::cpu_sample::CpuSample;
use numasleuth_analyze::pmu::plan::Selection;
use numasleuth_app::c2c::{self, C2cError, C2cRequest};
use numasleuth_app::hotlines::{sample_process, HotlinesError, Method, Sampling};
use numasleuth_app::hotpages::{self, HotpagesError, HotpagesRequest, ReaperSpec};
use numasleuth_app::lab::false_sharing::{self, FalseSharingRequest};
use numasleuth_app::lab::{LabError, LabRequest, Threads};
use numasleuth_app::limits::{self, OutOfRange};
use numasleuth_app::mem::{self, MemError, MemMode, MemRequest};
use numasleuth_app::pmu::{self, PmuCountError, PmuRequest};
use numasleuth_app::readers::{self, ReadersError, ReadersRequest};
use numasleuth_app::steps::StepObserver;
use numasleuth_app::watch::{watch, WatchError, WatchRequest};
use numasleuth_app::Quiet;
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::IdList;
use numasleuth_model::readers::LockFile;
use numasleuth_model::stop::Stop;
use numasleuth_probe::pmu::Target;
use numasleuth_probe::readers::Choice;

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

/// The `what` of a refusal, for a test to name the value it pushed out.
fn what(e: &OutOfRange) -> &'static str {
    e.what
}

const FOREVER: Duration = Duration::from_secs(1 << 40);

#[test]
fn a_watch_of_a_lifetime_or_of_pid_0_is_refused() {
    let root = fixture("qemu-two-nodes");
    let request = |pid, duration| WatchRequest {
        pid,
        symbol: Some("counter".into()),
        object: None,
        addr: None,
        len: None,
        rw: false,
        duration,
    };
    let e = refused(watch(&root, &request(1, Some(FOREVER)), &Stop::new(), &Quiet));
    let WatchError::OutOfRange(e) = e else { panic!("{e:?}") };
    assert_eq!(what(&e), "the watch duration");
    assert!(
        e.to_string().ends_with("give a duration from 1ms to 7 days (168h)"),
        "{e}"
    );
    let e = refused(watch(&root, &request(0, None), &Stop::new(), &Quiet));
    assert!(
        matches!(
            e,
            WatchError::OutOfRange(OutOfRange {
                what: "the process id",
                ..
            })
        ),
        "{e:?}"
    );
    let e = refused(watch(&root, &request(1, Some(limits::WATCH_MAX)), &Stop::new(), &Quiet));
    assert!(matches!(e, WatchError::NotLive), "a week is within the limit: {e:?}");
}

#[test]
fn pmu_refuses_a_million_threads_and_a_count_too_short_to_attach() {
    let root = fixture("qemu-two-nodes");
    let request = |max_threads, duration| PmuRequest {
        target: Some(Target::Pid { pid: 1, duration }),
        events: Selection::All,
        max_threads,
        path: None,
    };
    let e = refused(pmu::run(&root, request(1_000_000, None), &Stop::new(), &Quiet));
    assert!(
        matches!(
            e,
            PmuCountError::OutOfRange(OutOfRange {
                what: "the threads counted at most",
                ..
            })
        ),
        "{e:?}"
    );
    let short = Some(Duration::from_millis(1));
    let e = refused(pmu::run(&root, request(64, short), &Stop::new(), &Quiet));
    assert!(
        matches!(
            e,
            PmuCountError::OutOfRange(OutOfRange {
                what: "the count's duration",
                ..
            })
        ),
        "{e:?}"
    );
    let e = refused(pmu::run(
        &root,
        request(64, Some(limits::PMU_MIN)),
        &Stop::new(),
        &Quiet,
    ));
    assert!(matches!(e, PmuCountError::NotLive), "{e:?}");
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

#[test]
fn sampling_watches_refuse_windows_rates_and_rankings_out_of_range() {
    let root = fixture("qemu-two-nodes");
    let topo = machine(&[0, 1, 2, 3]).topo;
    let how = |duration, top, frequency| Sampling {
        duration,
        top,
        frequency,
        method: Method::Auto,
    };
    let second = Duration::from_secs(1);
    for (asked, named) in [
        (how(FOREVER, 20, 4000), "the sampling duration"),
        (how(second, 0, 4000), "the lines ranked"),
        (how(second, 20, 1_000_000), "the sampling rate in Hz"),
    ] {
        let e = refused(sample_process(&root, (1, &topo), &asked, &Stop::new(), &Quiet));
        assert!(
            matches!(&e, HotlinesError::OutOfRange(OutOfRange { what, .. }) if *what == named),
            "{e:?}"
        );
    }
    let damon = HotpagesRequest {
        pid: 1,
        duration: Duration::from_millis(10),
        top: 20,
    };
    let reaper = || ReaperSpec {
        program: Err(std::io::Error::other("not needed")),
        args: Vec::new(),
    };
    let e = refused(hotpages::observe(&root, &topo, damon, reaper(), &Stop::new(), &Quiet));
    assert!(
        matches!(
            e,
            HotpagesError::OutOfRange(OutOfRange {
                what: "DAMON's watch",
                ..
            })
        ),
        "{e:?}"
    );
    let e = refused(hotpages::observe(
        &root,
        &topo,
        HotpagesRequest {
            top: 0,
            duration: second,
            ..damon
        },
        reaper(),
        &Stop::new(),
        &Quiet,
    ));
    assert!(
        matches!(
            e,
            HotpagesError::OutOfRange(OutOfRange {
                what: "the regions ranked",
                ..
            })
        ),
        "{e:?}"
    );
    let request = ReadersRequest {
        files: vec![LockFile::Slabinfo],
        choice: Choice::Auto,
        duration: FOREVER,
    };
    let e = refused(readers::watch(&root, &topo, request, &Stop::new(), &Quiet));
    assert!(
        matches!(
            e,
            ReadersError::OutOfRange(OutOfRange {
                what: "the watch duration",
                ..
            })
        ),
        "{e:?}"
    );
}
