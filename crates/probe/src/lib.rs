//! Collectors that watch another process: built on `perf_event_open(2)`,
//! write watchpoints (`watch`) and counts of every event the kernel offers
//! (`pmu`); and a DAMON kdamond of numasleuth's own for `hotpages`
//! (`damon`, `damon_collect`), with the claim and the reaper process that
//! remove it after a SIGKILL (`damon_claim`, `damon_reaper`); `top`'s
//! process sampler (`process_scan`); the periodic sampler of the per-node memory signals (`memory_signals`)
//! for memwatch and probe-latency; and Arm SPE's records, read from perf's AUX buffer (`spe`).
//!
//! Why a crate of its own: these are side effects on a *different* process
//! (hardware breakpoints on each of its threads, a sample ring buffer per
//! thread), with their own failure modes (debug registers in use,
//! perf_event_paranoid, ptrace rights) and their own dependency (the perf
//! bindings). `measure` runs benchmark kernels inside numasleuth itself;
//! keeping perf out of it keeps each crate about one thing.
//!
//! Like every collector, this returns raw readings (counts and sampled
//! instruction addresses per thread) and never prints; rates and rankings
//! are computed in `analyze`, symbol names are found in `symbols`.

pub mod damon;
pub mod damon_claim;
pub mod damon_collect;
pub mod damon_reaper;
pub mod damon_regions;
pub mod error;
mod live_threads;
pub mod memory_signals;
pub mod migrate;
pub mod migrations;
pub mod pmu;
pub mod process_scan;
pub mod readers;
pub mod ring;
pub mod sample;
pub mod spe;
pub mod tracepoint;
pub mod watch;

pub use error::ProbeError;
pub use watch::{watch, Access, IpHits, ThreadRaw, WatchRaw, WatchSpec};
