//! Opening one counting event on one task, for any PMU type and config.
//!
//! perf-event2 has typed events for the generic kinds; sysfs PMUs need the
//! `type` and config words read at run time, so [`SpecEvent`] implements
//! the crate's `Event` trait with exactly those. Every event is opened on
//! its own (no group), with `TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING`, so
//! the kernel multiplexes them over the counters there are and the times
//! say how long each really counted.

use perf_event::events::Event;
use perf_event::{Builder, Counter};
use perf_event_open_sys::bindings::perf_event_attr;

use super::{catalog, EventRaw, EventSpec, OpenFailure, Reading};

/// An event from its sysfs type and config words.
pub(crate) struct SpecEvent<'a>(pub(crate) &'a EventSpec);

impl Event for SpecEvent<'_> {
    fn update_attrs(self, attr: &mut perf_event_attr) {
        attr.type_ = self.0.type_id;
        attr.config = self.0.config;
        attr.config1 = self.0.config1;
        attr.config2 = self.0.config2;
        attr.config3 = self.0.config3;
    }
}

/// How an event is attached.
#[derive(Debug, Clone, Copy)]
pub struct Attach {
    /// Count what the task does in the kernel too (page-fault handling,
    /// syscalls); off when perf_event_paranoid forbids it.
    pub include_kernel: bool,
    /// Start counting when the task execs (a spawned command).
    pub enable_on_exec: bool,
}

pub fn open(spec: &EventSpec, tid: libc::pid_t, how: Attach) -> std::io::Result<Counter> {
    let mut builder = Builder::new(SpecEvent(spec));
    builder
        .observe_pid(tid)
        .any_cpu()
        // Threads and processes the task creates later are counted too,
        // and their counts are summed into this counter.
        .inherit(true)
        .exclude_kernel(!how.include_kernel)
        .exclude_hv(true)
        .enable_on_exec(how.enable_on_exec)
        .enabled(false);
    builder.build()
}

/// Raises the soft open-file limit to the hard one: one descriptor per
/// event and thread adds up. Returns the limit now in force.
pub fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: limit is a valid rlimit for getrlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: raised is a valid rlimit; failure leaves the old limit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return raised.rlim_cur;
        }
    }
    limit.rlim_cur
}

/// Opened counters of one event (per thread), or why it failed.
pub type Opened = Result<Vec<(u32, Counter)>, std::io::Error>;

pub fn failure(spec: &EventSpec, error: &std::io::Error) -> OpenFailure {
    OpenFailure {
        spec: spec.clone(),
        errno: error.raw_os_error(),
        message: error.to_string(),
    }
}

/// Whether the kernel lets us count kernel-mode work of `tid`: tried once
/// with task-clock, which every kernel with perf has.
pub fn kernel_allowed(tid: libc::pid_t, enable_on_exec: bool) -> bool {
    let probe = &catalog::generic_events()
        .into_iter()
        .find(|e| e.name == "task-clock")
        .expect("task-clock is in the catalog");
    let how = Attach {
        include_kernel: true,
        enable_on_exec,
    };
    !matches!(open(probe, tid, how), Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)))
}

/// Opens every event on every tid. After one EMFILE/ENFILE the rest fail
/// the same way without trying: the descriptor table is full.
pub fn open_all(events: &[EventSpec], tids: &[u32], how: Attach) -> Vec<Opened> {
    let mut full: Option<i32> = None;
    events
        .iter()
        .map(|spec| {
            if let Some(errno) = full {
                return Err(std::io::Error::from_raw_os_error(errno));
            }
            let mut counters = Vec::with_capacity(tids.len());
            let mut gone = 0usize;
            for &tid in tids {
                match open(spec, tid as libc::pid_t, how) {
                    Ok(counter) => counters.push((tid, counter)),
                    // The thread exited since it was listed.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => gone += 1,
                    Err(e) => {
                        if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)) {
                            full = e.raw_os_error();
                        }
                        return Err(e);
                    }
                }
            }
            if counters.is_empty() && gone > 0 {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(counters)
        })
        .collect()
}

pub fn read_all(events: &[EventSpec], opened: Vec<Opened>) -> (Vec<EventRaw>, Vec<OpenFailure>) {
    let (mut counted, mut failed) = (Vec::new(), Vec::new());
    for (spec, result) in events.iter().zip(opened) {
        let counters = match result {
            Ok(counters) => counters,
            Err(e) => {
                failed.push(failure(spec, &e));
                continue;
            }
        };
        let mut readings = Vec::with_capacity(counters.len());
        let mut problem = None;
        for (tid, mut counter) in counters {
            match counter.read_count_and_time() {
                Ok(r) => readings.push(Reading {
                    tid,
                    value: r.count,
                    time_enabled_ns: r.time_enabled,
                    time_running_ns: r.time_running,
                }),
                Err(e) => problem = Some(e),
            }
        }
        match problem {
            Some(e) if readings.is_empty() => failed.push(failure(spec, &e)),
            _ => counted.push(EventRaw {
                spec: spec.clone(),
                readings,
            }),
        }
    }
    (counted, failed)
}

pub fn for_each_counter(opened: &mut [Opened], mut action: impl FnMut(&mut Counter) -> std::io::Result<()>) {
    for counters in opened.iter_mut().flatten() {
        for (_, counter) in counters.iter_mut() {
            // A thread that exited keeps its counter readable; an enable
            // that fails leaves that counter at zero, which its times show.
            let _ = action(counter);
        }
    }
}
