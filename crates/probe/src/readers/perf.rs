//! The two perf-based ways to see opens: kprobes on the files' kernel
//! functions, or the open syscalls' entry tracepoints with a name filter.
//!
//! Either way there is one event per CPU *and file* (and syscall), so the
//! event that fired says which file was opened: a name read back from the
//! opener later may already be gone (a language runtime frees the string
//! as soon as `open` returns), but the file is still known. All events of
//! a CPU write into one ring buffer (`PERF_EVENT_IOC_SET_OUTPUT`), so
//! memory is per CPU, not per event; samples carry their event's id. The
//! first event of each CPU also asks for task records (fork, exec), so a
//! reader that exits at once can still be named (see `tasks`).

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::time::Duration;

use numasleuth_kernel::procfs::settings;
use numasleuth_kernel::tracefs::open::Layout;
use numasleuth_kernel::Root;
use numasleuth_model::readers::LockFile;
use perf_event::data::Record;
use perf_event::events::{KProbe, Tracepoint};
use perf_event::{Builder, Clock, Counter, SampleFlag, Sampler};

use super::error::PerfError;
use super::kprobe;
use super::syscall;
use super::tasks::Tasks;
use crate::{ring, tracepoint};

/// Ring buffer per CPU, shared by all its events: 256 KiB holds a dozen
/// samples with their 16 KiB stack copies between two reads.
const RING_PAGES: usize = 64;

#[derive(Debug, Clone, Copy)]
pub enum Decoder {
    /// Every hit is an open (or a call) of this file.
    Kprobe(LockFile),
    /// A hit is an open of a name that matched this file's filter.
    Syscall(Layout, LockFile),
}

/// One sample, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// CLOCK_MONOTONIC, ns.
    pub t_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub file: LockFile,
    /// Syscall events: the name as opened when it was in the sample's
    /// stack copy, its address, and the directory fd it is relative to.
    pub name: Option<Name>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub text: Option<String>,
    pub pointer: u64,
    pub dfd: i64,
}

/// One CPU's ring and the events that write into it.
struct Ring {
    sampler: Sampler,
    others: Vec<Counter>,
    decoders: HashMap<u64, Decoder>,
}

pub struct PerfSource {
    rings: Vec<Ring>,
    pub lost_records: u64,
    /// Every event is disabled (`stop`): a drain empties the rings.
    stopped: bool,
}

/// What a refused `perf_event_open` means, in one line.
fn refused(root: &Root, what: &str, error: std::io::Error) -> PerfError {
    let what = what.to_string();
    match error.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => PerfError::Refused {
            what,
            error,
            paranoid: settings::perf_event_paranoid(root),
        },
        Some(libc::EMFILE) | Some(libc::ENFILE) => PerfError::TooManyFiles { what },
        _ => PerfError::Open { what, error },
    }
}

/// One event to open on every CPU.
struct Spec {
    what: String,
    decoder: Decoder,
    make: Box<dyn Fn() -> std::io::Result<Builder<'static>>>,
    filter: Option<String>,
}

/// The settings every event shares (events sharing a ring must agree);
/// `first` also asks for fork and exec records.
fn common(builder: &mut Builder, cpu: u32, first: bool, extra: SampleFlag) {
    builder
        .any_pid()
        .one_cpu(cpu as usize)
        .exclude_kernel(false)
        .sample_period(1)
        .sample(SampleFlag::IDENTIFIER | SampleFlag::TID | SampleFlag::TIME | extra)
        .clockid(Clock::MONOTONIC)
        .sample_id_all(true)
        .comm(first)
        .comm_exec(first)
        .task(first)
        .enabled(false);
}

impl PerfSource {
    /// A kprobe per file and CPU; the error names what is missing.
    pub fn kprobes(root: &Root, files: &[LockFile], cpus: &[u32]) -> Result<PerfSource, PerfError> {
        if !root.exists(kprobe::PMU_TYPE) {
            return Err(PerfError::NoKprobePmu {
                pmu_type: kprobe::PMU_TYPE,
            });
        }
        let specs = files
            .iter()
            .map(|&file| {
                let function = kprobe::function(file).0;
                Spec {
                    what: format!("kprobe on {function} ({})", file.path()),
                    decoder: Decoder::Kprobe(file),
                    make: Box::new(move || Ok(Builder::new(KProbe::probe(function, 0)?))),
                    filter: None,
                }
            })
            .collect();
        PerfSource::open(root, specs, cpus, SampleFlag::empty(), &|_| {})
    }

    /// `sys_enter_open*` on each CPU, one event per file with that file's
    /// name filter.
    pub fn syscalls(root: &Root, files: &[LockFile], cpus: &[u32]) -> Result<PerfSource, PerfError> {
        let mut specs = Vec::new();
        for event in syscall::EVENTS {
            let Some(found) = tracepoint::find(root, event)? else {
                continue;
            };
            let layout = Layout::parse(&found.format)?;
            for &file in files {
                let id = found.id;
                specs.push(Spec {
                    what: format!("tracepoint {} for {}", event.replace('/', ":"), file.path()),
                    decoder: Decoder::Syscall(layout, file),
                    make: Box::new(move || Ok(Builder::new(Tracepoint::with_id(id)))),
                    filter: Some(syscall::filter(&[file])),
                });
            }
        }
        if specs.is_empty() {
            return Err(PerfError::NoSyscallEvents);
        }
        let extra = SampleFlag::RAW | SampleFlag::REGS_USER | SampleFlag::STACK_USER;
        PerfSource::open(root, specs, cpus, extra, &|builder| {
            builder
                // Woken on every sample: a name outside the stack copy is
                // read from the process within microseconds.
                .wakeup_events(1)
                .sample_regs_user(syscall::SP_REGS_MASK)
                .sample_stack_user(syscall::STACK_DUMP_BYTES);
        })
    }

    fn open(
        root: &Root,
        specs: Vec<Spec>,
        cpus: &[u32],
        extra: SampleFlag,
        configure: &dyn Fn(&mut Builder),
    ) -> Result<PerfSource, PerfError> {
        raise_open_file_limit(specs.len() * cpus.len());
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let mut first: Option<Sampler> = None;
            let (mut others, mut decoders) = (Vec::new(), HashMap::new());
            for spec in &specs {
                let mut builder = (spec.make)().map_err(|e| refused(root, &spec.what, e))?;
                common(&mut builder, cpu, first.is_none(), extra);
                configure(&mut builder);
                let counter = builder.build().map_err(|e| refused(root, &spec.what, e))?;
                if let Some(filter) = &spec.filter {
                    tracepoint::set_filter(&counter, filter).map_err(|e| filter_refused(&spec.what, e))?;
                }
                decoders.insert(counter.id(), spec.decoder);
                match &first {
                    None => {
                        let sampler = counter
                            .sampled(tracepoint::ring_bytes(RING_PAGES))
                            .map_err(|e| refused(root, &spec.what, e))?;
                        first = Some(sampler);
                    }
                    Some(ring) => {
                        redirect(&counter, ring).map_err(|e| refused(root, &spec.what, e))?;
                        others.push(counter);
                    }
                }
            }
            if let Some(sampler) = first {
                rings.push(Ring {
                    sampler,
                    others,
                    decoders,
                });
            }
        }
        let mut source = PerfSource {
            rings,
            lost_records: 0,
            stopped: false,
        };
        source.enable().map_err(|e| refused(root, "the events", e))?;
        Ok(source)
    }

    fn enable(&mut self) -> std::io::Result<()> {
        for ring in &mut self.rings {
            ring.sampler.enable()?;
            for other in &mut ring.others {
                other.enable()?;
            }
        }
        Ok(())
    }

    /// Waits until a ring has a record or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        let mut fds: Vec<libc::pollfd> = self
            .rings
            .iter()
            .map(|r| libc::pollfd {
                fd: r.sampler.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs that
        // outlives the call; poll only writes their `revents`.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    }

    /// Reads every ring: task records go to `tasks` at once, samples to
    /// `hits` (names read from the stack copy where they lie).
    pub fn drain(&mut self, tasks: &mut Tasks, hits: &mut Vec<Hit>) {
        let (lost_records, stopped) = (&mut self.lost_records, self.stopped);
        for ring in &mut self.rings {
            let decoders = &ring.decoders;
            // A bounded pass (`ring::drain_pass`): what is left is read on
            // the next poll, so a flood of records cannot hold the loop.
            // Once every event is disabled nothing more comes: empty it.
            let each = |record: perf_event::Record<'_>| match record.parse_record() {
                Ok(Record::Sample(sample)) => {
                    let decoder = sample.id().and_then(|id| decoders.get(&id));
                    let (Some(decoder), Some(pid), Some(tid), Some(t_ns)) =
                        (decoder, sample.pid(), sample.tid(), sample.time())
                    else {
                        return;
                    };
                    let (file, name) = match decoder {
                        Decoder::Kprobe(file) => (*file, None),
                        Decoder::Syscall(layout, file) => {
                            let Some((pointer, dfd)) = sample.raw().and_then(|raw| layout.decode(raw)) else {
                                return;
                            };
                            let sp = sample.regs_user().and_then(|r| r.regs.first().copied());
                            let text = match (sp, sample.stack_user()) {
                                (Some(sp), Some(stack)) => syscall::string_in_stack(pointer, sp, stack),
                                _ => None,
                            };
                            (*file, Some(Name { text, pointer, dfd }))
                        }
                    };
                    hits.push(Hit {
                        t_ns,
                        pid,
                        tid,
                        file,
                        name,
                    });
                }
                Ok(Record::Comm(comm)) => tasks.on_comm(comm.pid, comm.tid, &comm.comm),
                Ok(Record::Fork(fork)) => tasks.on_fork(fork.pid, fork.ppid, fork.tid, fork.time),
                Ok(Record::Exit(exit)) => tasks.on_exit(exit.pid, exit.tid, exit.time),
                Ok(Record::Lost(l)) => *lost_records = lost_records.saturating_add(l.lost),
                Ok(Record::LostSamples(l)) => *lost_records = lost_records.saturating_add(l.lost),
                _ => {}
            };
            if stopped {
                ring::drain_stopped(&mut ring.sampler, each);
            } else {
                ring::drain_pass(&mut ring.sampler, each);
            }
        }
    }
}

impl PerfSource {
    /// Disables every event, so the next drain reads the rings to the end
    /// (without this the last pass could leave records unread). An event
    /// that cannot be disabled leaves the drains bounded.
    pub fn stop(&mut self) {
        let all_disabled = self.rings.iter_mut().all(|ring| {
            let others = ring.others.iter_mut().all(|c| c.disable().is_ok());
            ring.sampler.disable().is_ok() && others
        });
        self.stopped = all_disabled;
    }
}

fn filter_refused(what: &str, error: std::io::Error) -> PerfError {
    match error.raw_os_error() {
        Some(libc::EINVAL) => PerfError::NoNameFilter,
        _ => PerfError::Filter {
            what: what.to_string(),
            error,
        },
    }
}

/// Sends `counter`'s records into `ring`'s buffer (same CPU, same clock).
fn redirect(counter: &Counter, ring: &Sampler) -> std::io::Result<()> {
    // SAFETY: both fds are live perf events owned by their wrappers for
    // the duration of the call; the ioctl only links the two in the kernel.
    let rc = unsafe { perf_event_open_sys::ioctls::SET_OUTPUT(counter.as_raw_fd(), ring.as_raw_fd()) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// One fd per CPU and file: a big machine needs more than the usual soft
/// limit of 1024. The soft limit is raised toward the hard one for this
/// process only (nothing outside it changes); if that is not enough,
/// opening fails with EMFILE and says so.
fn raise_open_file_limit(events: usize) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    let wanted = (events as libc::rlim_t).saturating_add(256);
    if limit.rlim_cur >= wanted {
        return;
    }
    limit.rlim_cur = wanted.min(limit.rlim_max);
    // SAFETY: as above; only the soft limit changes, within the hard one.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
}
