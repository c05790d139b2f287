//! A request built by any front-end, not only cli's parsers, is refused
//! when a value is out of its limit (`app::limits`): each command checks
//! its request before it looks at the system, so on a snapshot, where
//! each of these would otherwise refuse to run (or, for `runs`, refuse the
//! missing command), the refusal is the typed `OutOfRange` naming the
//! value. The measurements' refusals are in `limits_refused_measures.rs`.

mod common;

use std::time::Duration;

use common::machine;

use numasleuth_analyze::pmu::plan::Selection;
use numasleuth_app::bisect::{self, BisectRequest, BisectStartError};
use numasleuth_app::hotlines::{sample_process, HotlinesError, Method, Sampling};
use numasleuth_app::hotpages::{self, HotpagesError, HotpagesRequest, ReaperSpec};
use numasleuth_app::limits::{self, OutOfRange};
use numasleuth_app::page_targets::Asked;
use numasleuth_app::pmu::{self, PmuCountError, PmuRequest};
use numasleuth_app::probe_latency::{self, Op, ProbeLatencyError, ProbeRequest, Want};
use numasleuth_app::readers::{self, ReadersError, ReadersRequest};
use numasleuth_app::runs::{self, RunsError, RunsRequest, StartCpus};
use numasleuth_app::watch::{watch, WatchError, WatchRequest};
use numasleuth_app::Quiet;
use numasleuth_kernel::test_support::fixture;
use numasleuth_model::readers::LockFile;
use numasleuth_model::stop::Stop;
use numasleuth_probe::pmu::Target;
use numasleuth_probe::readers::Choice;

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

#[test]
fn probe_latency_refuses_a_rate_of_zero_a_day_and_a_half_and_node_4096() {
    let root = fixture("qemu-two-nodes");
    let topo = machine(&[0, 1, 2, 3]).topo;
    let request = |rate_per_sec, duration, node| ProbeRequest {
        op: Op::AllocTouch,
        node,
        rate_per_sec,
        duration,
        readers: Want::No,
    };
    let second = Duration::from_secs(1);
    for (asked, named) in [
        (request(0, second, None), "the probe rate per second"),
        (
            request(1000, Duration::from_secs(36 * 3600), None),
            "the probe duration",
        ),
        (request(1000, second, Some(4096)), "the node id"),
    ] {
        let e = refused(probe_latency::probe(&root, &topo, &asked, &Stop::new(), &Quiet));
        assert!(
            matches!(&e, ProbeLatencyError::OutOfRange(OutOfRange { what, .. }) if *what == named),
            "{e:?}"
        );
    }
}

#[test]
fn runs_refuses_a_million_runs_and_a_series_too_short_to_judge() {
    let root = fixture("qemu-two-nodes");
    let topo = machine(&[0, 1, 2, 3]).topo;
    // No command: a request the limits let through is refused for that.
    let request = |runs, settle| RunsRequest {
        command: Vec::new(),
        runs,
        start_cpus: StartCpus::Spread,
        release_after: None,
        metric: None,
        lower_is_better: false,
        settle,
        timeout: None,
        verbose: false,
    };
    let settle = Duration::from_millis(500);
    for (asked, named) in [
        (request(1_000_000, settle), "the run count"),
        (request(1, settle), "the run count"),
        (request(10, FOREVER), "the settle time"),
    ] {
        let e = refused(runs::run(&root, &topo, &asked, &Stop::new(), &Quiet));
        assert!(
            matches!(&e, RunsError::OutOfRange(OutOfRange { what, .. }) if *what == named),
            "{e:?}"
        );
    }
}

#[test]
fn bisect_refuses_readings_and_waits_out_of_range_before_it_looks_for_a_live_system() {
    let root = fixture("qemu-two-nodes");
    let topo = machine(&[0, 1, 2, 3]).topo;
    let request = |metric_cmd: &str, rounds, settle| BisectRequest {
        asked: Asked {
            pid: 1,
            range: None,
            symbol: None,
            section: Some(".bss".into()),
            object: None,
        },
        metric_cmd: metric_cmd.to_string(),
        lower_is_better: false,
        to_node: None,
        settle,
        rounds,
        min_change: 0.05,
        metric_timeout: Duration::from_secs(60),
        apply: false,
        journal: None,
    };
    let second = Duration::from_secs(1);
    let long = "x".repeat(limits::METRIC_CMD_MAX_CHARS + 1);
    for (asked, named) in [
        (request("cat rate", 1, second), "the readings per step"),
        (request("cat rate", 3, FOREVER), "the settle time"),
        (request(&long, 3, second), "the metric command's characters"),
    ] {
        let e = refused(bisect::run(&root, &topo, &asked, &Stop::new()));
        assert!(
            matches!(&e, BisectStartError::OutOfRange(OutOfRange { what, .. }) if *what == named),
            "{e:?}"
        );
    }
    let e = refused(bisect::run(&root, &topo, &request("cat rate", 3, second), &Stop::new()));
    assert!(
        matches!(e, BisectStartError::Refused(_)),
        "within the limits, the snapshot refuses: {e:?}"
    );
}
