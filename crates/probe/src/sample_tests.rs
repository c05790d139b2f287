//! Tests of `sample` against this very process.

use super::*;

/// Samples this test process while a thread spins: samples arrive, with
/// registers and readable code.
#[test]
fn samples_a_spinning_thread_with_registers_and_code() {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let spinner = std::thread::spawn(move || {
        let mut x = 0u64;
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    });
    let spec = SampleSpec {
        pid: std::process::id(),
        duration: Duration::from_millis(400),
        event: SampleEvent::CpuClock { period_ns: 1_000_000 },
        regs_mask: 0x1ff | (0xff << 16),
        rescan_interval: Duration::from_millis(50),
        ring_pages: 16,
        paranoid: None,
    };
    let (mut with_regs, mut with_code) = (0u64, 0u64);
    let mut count = |s: &RegSample<'_>| {
        with_regs += u64::from(s.regs.len() == 17);
        with_code += u64::from(s.code.is_some_and(|c| c.len() > s.code_back && s.code_back == 3));
    };
    let raw = sample(
        &spec,
        &mut Hooks {
            function_start: &|ip| Some(ip.saturating_sub(3)),
            on_sample: &mut count,
        },
        &Stop::new(),
    )
    .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinner.join().unwrap();
    let total: u64 = raw.threads.iter().map(|t| t.samples).sum();
    assert!(total > 0, "{raw:?}");
    assert_eq!(with_regs, total, "{raw:?}");
    assert_eq!(with_code, total, "{raw:?}");
}

/// A stop request ends a long sampling at once, with what it gathered.
#[test]
fn a_stop_request_ends_the_sampling_with_its_counts() {
    let spec = SampleSpec {
        pid: std::process::id(),
        duration: Duration::from_secs(600),
        event: SampleEvent::CpuClock { period_ns: 1_000_000 },
        regs_mask: 0x1ff | (0xff << 16),
        rescan_interval: Duration::from_millis(50),
        ring_pages: 16,
        paranoid: None,
    };
    let stop = Stop::new();
    let requester = stop.clone();
    let waker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        requester.request();
    });
    let raw = sample(
        &spec,
        &mut Hooks {
            function_start: &|_| None,
            on_sample: &mut |_| {},
        },
        &stop,
    )
    .unwrap();
    waker.join().unwrap();
    // A hang guard, not a timing: ended by the request, not the 600 s.
    assert!(raw.duration_s < 300.0, "{raw:?}");
    assert!(!raw.threads.is_empty(), "{raw:?}");
}
