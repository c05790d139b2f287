//! The one way numasleuth opens a tracepoint: find its id and record
//! layout in tracefs (through a `Root`), then open one sampling perf event
//! per online CPU with `pid = -1`.
//!
//! Why per CPU: a tracepoint fires in whatever task hits it (the load
//! balancer for `sched_migrate_task`, any process for
//! `sys_enter_openat`), so a per-task event would miss most hits; the
//! kernel only allows `pid = -1` with one CPU per event. `migrations` and
//! `readers` both go through here, each with its own record decoder.
//!
//! numasleuth never mounts tracefs (no system change without `--apply`):
//! it looks where tracefs usually is and says how to mount it.

use std::ffi::CString;
use std::os::fd::AsRawFd;

use numasleuth_kernel::{ReadError, Root};
use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter, Sampler};
use thiserror::Error;

/// Where tracefs is looked for, in order.
pub const TRACEFS: [&str; 2] = ["sys/kernel/tracing", "sys/kernel/debug/tracing"];
/// A filter longer than this is refused before it reaches the kernel (the
/// kernel's own limit is a page).
pub const MAX_FILTER_BYTES: usize = 2048;

/// A tracepoint found in tracefs: its perf id and its `format` text.
#[derive(Debug, Clone)]
pub struct Found {
    pub id: u64,
    pub format: String,
}

/// Why tracefs cannot say where a tracepoint is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FindError {
    /// `path` is relative to the root, as the `id` file was asked for.
    #[error("/{path} holds `{text}`, not a tracepoint id")]
    BadId { path: String, text: String },
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("/{path} is not readable (tracefs is root-only by default): run as root")]
    NotReadable { path: String },
    #[error("tracefs not mounted: mount -t tracefs nodev /sys/kernel/tracing")]
    NotMounted,
}

/// Finds `event` (`sched/sched_migrate_task`), or says why it cannot be
/// used: tracefs not mounted, not readable, or no such event (`Ok(None)`).
pub fn find(root: &Root, event: &str) -> Result<Option<Found>, FindError> {
    let mut denied = None;
    let mut mounted = false;
    for base in TRACEFS {
        mounted |= root.exists(&format!("{base}/events"));
        let id_path = format!("{base}/events/{event}/id");
        match root.read_optional(&id_path) {
            Ok(Some(text)) => {
                let id: u64 = text.trim().parse().map_err(|_| FindError::BadId {
                    text: text.trim().to_string(),
                    path: id_path,
                })?;
                let format = root.read(&format!("{base}/events/{event}/format"))?;
                return Ok(Some(Found { id, format }));
            }
            Ok(None) => {}
            Err(ReadError::PermissionDenied { .. }) => denied = Some(id_path),
            Err(e) => return Err(e.into()),
        }
    }
    match denied {
        Some(path) => Err(FindError::NotReadable { path }),
        None if mounted => Ok(None),
        None => Err(FindError::NotMounted),
    }
}

/// Opens the tracepoint `id` on each CPU in `cpus`, sampling every hit
/// with its raw record; `configure` adds what the caller needs (sample
/// fields, a clock, task records on the first event of a CPU). The error
/// is the first refusal (EACCES/EPERM: perf_event_paranoid or no
/// CAP_PERFMON; ENOENT: no such tracepoint). Events start disabled.
pub fn open_per_cpu(
    id: u64,
    cpus: &[u32],
    ring_pages: usize,
    configure: &dyn Fn(&mut Builder, u32),
) -> Result<Vec<Sampler>, std::io::Error> {
    let mut samplers = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        let mut builder = Builder::new(Tracepoint::with_id(id));
        builder
            .any_pid()
            .one_cpu(cpu as usize)
            // The tracepoint fires in the kernel: the builder's default of
            // excluding kernel events would drop every record.
            .exclude_kernel(false)
            .sample_period(1)
            .enabled(false);
        configure(&mut builder, cpu);
        let sampler = builder.build()?.sampled(ring_bytes(ring_pages))?;
        samplers.push(sampler);
    }
    Ok(samplers)
}

/// Perf's ring buffer is at most this (4096 pages of 4 KiB): the cap is
/// bytes, so a 64 KiB-page kernel (Arm servers) does not map 16× more.
const RING_BYTES_MAX: usize = 16 << 20;

/// A power-of-two number of this system's pages, as perf's ring buffer
/// must be, at most [`RING_BYTES_MAX`].
pub fn ring_bytes(pages: usize) -> usize {
    ring_bytes_for(pages, numasleuth_kernel::pages::page_size_bytes() as usize)
}

fn ring_bytes_for(pages: usize, page_bytes: usize) -> usize {
    let page_bytes = page_bytes.max(1);
    let pages_max = (RING_BYTES_MAX / page_bytes).max(1);
    pages.clamp(1, pages_max).next_power_of_two() * page_bytes
}

/// Attaches an ftrace filter expression to one event
/// (`PERF_EVENT_IOC_SET_FILTER`): the kernel then drops non-matching hits
/// before they cost a sample. EINVAL means this kernel cannot parse it.
pub fn set_filter(event: &Counter, filter: &str) -> Result<(), std::io::Error> {
    if filter.len() > MAX_FILTER_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("filter of {} bytes; at most {MAX_FILTER_BYTES}", filter.len()),
        ));
    }
    let text =
        CString::new(filter).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in filter"))?;
    // SAFETY: the fd is a live perf event owned by `event`, and `text`
    // is a NUL-terminated string that outlives the call; the kernel only
    // reads it (copying at most a page).
    let rc = unsafe { perf_event_open_sys::ioctls::SET_FILTER(event.as_raw_fd(), text.as_ptr() as *mut _) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Turns every event on; the first failure is returned.
pub fn enable_all(samplers: &mut [Sampler]) -> Result<(), std::io::Error> {
    samplers.iter_mut().try_for_each(|s| s.enable())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_are_powers_of_two_pages() {
        assert_eq!(ring_bytes_for(0, 4096), 4096);
        assert_eq!(ring_bytes_for(64, 4096), 64 * 4096);
        assert_eq!(ring_bytes_for(65, 4096), 128 * 4096);
        assert_eq!(ring_bytes_for(usize::MAX, 4096), 4096 << 12);
        // 64 KiB pages: whole pages, the same byte cap.
        assert_eq!(ring_bytes_for(3, 65536), 4 * 65536);
        assert_eq!(ring_bytes_for(4096, 65536), 16 << 20);
        assert_eq!(ring_bytes(1), numasleuth_kernel::pages::page_size_bytes() as usize);
    }
}
