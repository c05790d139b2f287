//! Tests of `watch` against this very process.

use super::*;

fn spec(address: u64, duration_ms: u64) -> WatchSpec {
    WatchSpec {
        pid: std::process::id(),
        address,
        len_bytes: 8,
        access: Access::Write,
        duration: Some(Duration::from_millis(duration_ms)),
        rescan_interval: Duration::from_millis(20),
        ring_pages: 4,
        paranoid: None,
    }
}

/// Watches a variable of this very test process while a thread writes
/// it a known number of times.
#[test]
fn counts_every_write_of_a_thread_started_during_the_watch() {
    static TARGET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let address = &TARGET as *const _ as u64;
    let writer = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(150));
        let before = perf_fds();
        // Started after the watch's first listing: found by a rescan.
        let inner = std::thread::spawn(move || {
            // Write only once the rescan has opened this thread's event
            // (a new perf fd in this process), so a loaded machine that
            // rescans late cannot make the count come out short. The
            // margin covers the open-then-enable step.
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            while perf_fds() <= before && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(100));
            for i in 0..1000 {
                TARGET.store(i, std::sync::atomic::Ordering::SeqCst);
            }
        });
        inner.join().unwrap();
    });
    let raw = match watch(&spec(address, 4000), &Stop::new()) {
        Ok(raw) => raw,
        Err(e) => panic!("{e}"),
    };
    writer.join().unwrap();
    let total: u64 = raw.threads.iter().map(|t| t.hits).sum();
    assert_eq!(total, 1000, "{raw:#?}");
    let sampled: u64 = raw.threads.iter().flat_map(|t| &t.ip_hits).map(|h| h.samples).sum();
    let lost: u64 = raw.threads.iter().map(|t| t.lost_samples).sum();
    assert_eq!(sampled + lost, 1000, "{raw:#?}");
    assert!(sampled > 0, "no write was attributed to code: {raw:#?}");
    assert!(raw.rescans > 0);
}

/// Perf event file descriptors this process holds.
fn perf_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy() == "anon_inode:[perf_event]")
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_missing_process_is_no_such_process() {
    let mut s = spec(0x1000, 10);
    s.pid = i32::MAX as u32;
    assert_eq!(
        watch(&s, &Stop::new()).unwrap_err(),
        ProbeError::NoSuchProcess { pid: i32::MAX as u32 }
    );
}

/// Without a duration the watch runs until stopped, and returns every
/// write counted until then.
#[test]
fn without_a_duration_it_watches_until_stopped() {
    static TARGET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let address = &TARGET as *const _ as u64;
    let mut s = spec(address, 0);
    s.duration = None;
    let stop = Stop::new();
    let requester = stop.clone();
    let before = perf_fds();
    let watcher = std::thread::spawn(move || watch(&s, &stop));
    // This thread exists before the watch starts, so it is attached at
    // the first listing; write once its events are open.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while perf_fds() <= before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    for i in 0..500 {
        TARGET.store(i, std::sync::atomic::Ordering::SeqCst);
    }
    requester.request();
    let raw = watcher.join().unwrap().unwrap();
    let total: u64 = raw.threads.iter().map(|t| t.hits).sum();
    assert_eq!(total, 500, "{raw:#?}");
    assert!(!raw.process_exited);
}
