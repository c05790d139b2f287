//! `migrations` and `memwatch` through the application layer: what each
//! refuses before it watches anything, as the one line the binary prints.

use std::time::Duration;

use numasleuth_analyze::memwatch::Sample;
use numasleuth_app::memwatch::{self, MemwatchError, MemwatchRequest};
use numasleuth_app::migrations::{How, MigrationsError, MigrationsRequest};
use numasleuth_app::Quiet;
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;

fn migrations(root: &Root, pid: Option<u32>) -> Result<(), MigrationsError> {
    let request = MigrationsRequest {
        pid,
        duration: Duration::from_millis(100),
        how: How::Sampled,
        interval: None,
    };
    numasleuth_app::migrations::run(root, &request, &Stop::new(), &Quiet).map(|_| ())
}

#[test]
fn migrations_refuses_a_snapshot() {
    let error = migrations(&fixture("qemu-two-nodes"), None).unwrap_err();
    assert!(matches!(error, MigrationsError::NotLive), "{error}");
}

#[test]
fn migrations_refuses_a_window_out_of_range() {
    for (duration, interval) in [
        (Duration::from_secs(1 << 40), None),
        (Duration::from_secs(1), Some(Duration::ZERO)),
    ] {
        let request = MigrationsRequest {
            pid: None,
            duration,
            how: How::Sampled,
            interval,
        };
        let error = numasleuth_app::migrations::run(&Root::live(), &request, &Stop::new(), &Quiet)
            .err()
            .unwrap();
        assert!(matches!(error, MigrationsError::OutOfRange(_)), "{error}");
    }
}

#[test]
fn migrations_refuses_a_kernel_thread_and_says_what_to_use() {
    // PID 2 is kthreadd on every Linux since 2.6.
    let error = migrations(&Root::live(), Some(2)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "process 2 is a kernel thread: use --all to see kernel threads' moves"
    );
}

#[test]
fn migrations_of_a_live_process_watches_its_threads() {
    let done = numasleuth_app::migrations::run(
        &Root::live(),
        &MigrationsRequest {
            pid: Some(std::process::id()),
            duration: Duration::from_millis(100),
            how: How::Sampled,
            interval: None,
        },
        &Stop::new(),
        &Quiet,
    )
    .unwrap();
    assert_eq!(done.document.pid, Some(std::process::id()));
    assert!(!done.document.threads.is_empty());
}

#[test]
fn memwatch_refuses_before_its_first_sample() {
    let request = MemwatchRequest {
        interval: Duration::from_secs(1),
        duration: Duration::from_millis(500),
    };
    struct Never;
    impl memwatch::MemwatchObserver for Never {
        fn first(&mut self, _: &Sample, _: &MemwatchRequest, _: u64) -> Result<(), memwatch::ObserverError> {
            panic!("sampled although refused")
        }
        fn step(&mut self, _: &memwatch::Step<'_>, _: u64) -> Result<(), memwatch::ObserverError> {
            panic!("sampled although refused")
        }
    }
    let error = memwatch::run(&Root::live(), &request, &Stop::new(), &mut Never)
        .err()
        .unwrap();
    assert!(matches!(error, MemwatchError::DurationBelowInterval { .. }), "{error}");
}

#[test]
fn memwatch_ends_on_the_front_ends_failure_after_the_first_sample() {
    struct ClosedPipe(usize);
    impl memwatch::MemwatchObserver for ClosedPipe {
        fn first(&mut self, sample: &Sample, _: &MemwatchRequest, _: u64) -> Result<(), memwatch::ObserverError> {
            self.0 = sample.nodes.len();
            Err("stdout is closed".into())
        }
        fn step(&mut self, _: &memwatch::Step<'_>, _: u64) -> Result<(), memwatch::ObserverError> {
            panic!("went on sampling after the front-end failed")
        }
    }
    let request = MemwatchRequest {
        interval: Duration::from_millis(100),
        duration: Duration::from_secs(1),
    };
    let mut observer = ClosedPipe(0);
    let error = memwatch::run(&Root::live(), &request, &Stop::new(), &mut observer)
        .err()
        .unwrap();
    assert_eq!(error.to_string(), "stdout is closed");
    assert!(observer.0 >= 1, "the first sample names at least one node");
}
