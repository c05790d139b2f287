//! The two perf-based ways to see opens: kprobes on the files' kernel
//! functions, or the open syscalls' entry tracepoints with a name filter.
//! Both open one event per CPU and file (or syscall) system-wide, and both
//! ask the first event of each CPU for task records (fork, exec), so a
//! reader that exits at once can still be named (see `tasks`).

use std::os::fd::AsRawFd;
use std::time::Duration;

use numasleuth_kernel::procfs::settings;
use numasleuth_kernel::Root;
use numasleuth_model::readers::LockFile;
use perf_event::data::Record;
use perf_event::events::KProbe;
use perf_event::{Builder, Clock, SampleFlag, Sampler};

use super::kprobe;
use super::syscall::{self, Layout};
use super::tasks::Tasks;
use crate::tracepoint;

/// Ring buffer per event: kprobe samples are 24 bytes, syscall samples
/// carry a stack copy, so those rings are larger.
const KPROBE_RING_PAGES: usize = 16;
const SYSCALL_RING_PAGES: usize = 64;

pub enum Decoder {
    /// Every hit is an open (or a call) of this file.
    Kprobe(LockFile),
    /// A hit is an open whose name is to be read.
    Syscall(Layout),
}

/// One sample, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// CLOCK_MONOTONIC, ns.
    pub t_ns: u64,
    pub pid: u32,
    pub tid: u32,
    pub what: What,
}

#[derive(Debug, Clone, PartialEq)]
pub enum What {
    File(LockFile),
    /// The name as opened (read from the sample's stack copy when it
    /// lies there), its address, and the directory fd it is relative to.
    Name {
        name: Option<String>,
        pointer: u64,
        dfd: i64,
    },
}

pub struct PerfSource {
    samplers: Vec<(Sampler, Decoder)>,
    pub lost_records: u64,
}

/// What a refused `perf_event_open` means, in one line.
fn refused(root: &Root, what: &str, e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf refused the system-wide {what} ({e}): kernel.perf_event_paranoid is {} \
             (/proc/sys/kernel/perf_event_paranoid); it needs root or CAP_PERFMON",
            settings::perf_event_paranoid(root).map_or("unknown".into(), |p| p.to_string())
        ),
        Some(libc::EMFILE) => {
            format!("{what}: too many open files (one perf event per CPU and file): raise `ulimit -n`")
        }
        _ => format!("perf_event_open of {what}: {e}"),
    }
}

/// The settings every event shares; the first event of a CPU also asks
/// for fork and exec records.
fn common(builder: &mut Builder, first_on_cpu: bool, ring_sample: SampleFlag) {
    builder
        .exclude_kernel(false)
        .sample_period(1)
        .sample(SampleFlag::TID | SampleFlag::TIME | ring_sample)
        .clockid(Clock::MONOTONIC)
        .sample_id_all(true)
        .comm(first_on_cpu)
        .comm_exec(first_on_cpu)
        .task(first_on_cpu)
        .enabled(false);
}

impl PerfSource {
    /// A kprobe per file and CPU; the error names what is missing.
    pub fn kprobes(root: &Root, files: &[LockFile], cpus: &[u32]) -> Result<PerfSource, String> {
        if !root.exists(kprobe::PMU_TYPE) {
            return Err(format!(
                "this kernel has no kprobe PMU (/{} is absent)",
                kprobe::PMU_TYPE
            ));
        }
        let mut samplers = Vec::with_capacity(files.len() * cpus.len());
        for &cpu in cpus {
            for (i, &file) in files.iter().enumerate() {
                let (function, _) = kprobe::function(file);
                let what = format!("kprobe on {function} ({})", file.path());
                let probe = KProbe::probe(function, 0).map_err(|e| refused(root, &what, &e))?;
                let mut builder = Builder::new(probe);
                builder.any_pid().one_cpu(cpu as usize);
                common(&mut builder, i == 0, SampleFlag::empty());
                let sampler = builder
                    .build()
                    .and_then(|c| c.sampled(tracepoint::ring_bytes(KPROBE_RING_PAGES)))
                    .map_err(|e| refused(root, &what, &e))?;
                samplers.push((sampler, Decoder::Kprobe(file)));
            }
        }
        Ok(PerfSource::started(samplers).map_err(|e| refused(root, "kprobes", &e))?)
    }

    /// `sys_enter_open*` on each CPU, filtered to the files' names.
    pub fn syscalls(root: &Root, files: &[LockFile], cpus: &[u32]) -> Result<PerfSource, String> {
        let mut found = Vec::new();
        for event in syscall::EVENTS {
            if let Some(tp) = tracepoint::find(root, event)? {
                found.push((event, tp.id, Layout::parse(&tp.format)?));
            }
        }
        if found.is_empty() {
            return Err("tracefs has no syscalls:sys_enter_open* events (CONFIG_FTRACE_SYSCALLS off)".into());
        }
        let filter = syscall::filter(files);
        let mut samplers = Vec::new();
        for (n, (event, id, layout)) in found.into_iter().enumerate() {
            let what = format!("tracepoint {}", event.replace('/', ":"));
            let opened = tracepoint::open_per_cpu(id, cpus, SYSCALL_RING_PAGES, &|builder, _| {
                common(
                    builder,
                    n == 0,
                    SampleFlag::RAW | SampleFlag::REGS_USER | SampleFlag::STACK_USER,
                );
                builder
                    .wakeup_events(1)
                    .sample_regs_user(syscall::SP_REGS_MASK)
                    .sample_stack_user(syscall::STACK_DUMP_BYTES);
            })
            .map_err(|e| refused(root, &what, &e))?;
            for sampler in opened {
                tracepoint::set_filter(&sampler, &filter).map_err(|e| match e.raw_os_error() {
                    Some(libc::EINVAL) => "this kernel cannot filter opens by name (`filename.ustring`, Linux 5.17 \
                                           on); without it every open of the machine would be a sample"
                        .to_string(),
                    _ => format!("setting the name filter on {what}: {e}"),
                })?;
                samplers.push((sampler, Decoder::Syscall(layout)));
            }
        }
        Ok(PerfSource::started(samplers).map_err(|e| refused(root, "the open tracepoints", &e))?)
    }

    fn started(mut samplers: Vec<(Sampler, Decoder)>) -> Result<PerfSource, std::io::Error> {
        for (sampler, _) in samplers.iter_mut() {
            sampler.enable()?;
        }
        Ok(PerfSource {
            samplers,
            lost_records: 0,
        })
    }

    /// Waits until a ring has a record or `timeout` passes: the syscall
    /// events wake on every sample, so a name outside the sample's stack
    /// copy is read from the process within microseconds, while a
    /// short-lived reader most likely still lives.
    pub fn wait(&self, timeout: Duration) {
        let mut fds: Vec<libc::pollfd> = self
            .samplers
            .iter()
            .map(|(s, _)| libc::pollfd {
                fd: s.as_raw_fd(),
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
    /// `hits` (decoded; names read from the stack copy where they lie).
    pub fn drain(&mut self, tasks: &mut Tasks, hits: &mut Vec<Hit>) {
        for (sampler, decoder) in self.samplers.iter_mut() {
            while let Some(record) = sampler.next_record() {
                match record.parse_record() {
                    Ok(Record::Sample(sample)) => {
                        let (Some(pid), Some(tid), Some(t_ns)) = (sample.pid(), sample.tid(), sample.time()) else {
                            continue;
                        };
                        let what = match decoder {
                            Decoder::Kprobe(file) => What::File(*file),
                            Decoder::Syscall(layout) => {
                                let Some((pointer, dfd)) = sample.raw().and_then(|raw| layout.decode(raw)) else {
                                    continue;
                                };
                                let sp = sample.regs_user().and_then(|r| r.regs.first().copied());
                                let name = match (sp, sample.stack_user()) {
                                    (Some(sp), Some(stack)) => syscall::string_in_stack(pointer, sp, stack),
                                    _ => None,
                                };
                                What::Name { name, pointer, dfd }
                            }
                        };
                        hits.push(Hit { t_ns, pid, tid, what });
                    }
                    Ok(Record::Comm(comm)) => tasks.on_comm(comm.pid, comm.tid, &comm.comm),
                    Ok(Record::Fork(fork)) => tasks.on_fork(fork.pid, fork.ppid, fork.tid),
                    Ok(Record::Lost(l)) => self.lost_records = self.lost_records.saturating_add(l.lost),
                    Ok(Record::LostSamples(l)) => self.lost_records = self.lost_records.saturating_add(l.lost),
                    _ => {}
                }
            }
        }
    }
}
