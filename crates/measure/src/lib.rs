//! Measurements with side effects: pinning threads, binding memory to a
//! node, and the benchmark kernels that run on them.
//!
//! Everything here returns raw, serializable samples and never prints; the
//! statistics (median, spread, verdicts) are computed by `numasleuth-analyze`
//! from these samples, so a run can be replayed or golden-tested without the
//! machine it ran on.
//!
//! The unsafe code (raw syscalls, mapped memory, non-temporal stores) lives
//! in small functions with `SAFETY` comments, mostly in `sys`.

pub mod affinity;
pub mod again;
pub mod bandwidth;
pub mod buffer;
pub mod c2c;
pub mod chase;
pub mod clock;
pub mod error;
mod gate;
pub mod grids;
pub mod lab;
pub mod latency;
pub mod loaded;
pub mod mem_grids;
pub mod metric_series;
pub mod probe_latency;
pub mod rng;
mod runner;
pub mod runs;
pub mod shell_metric;
pub mod steps;
pub mod stream;
mod sys;

/// Memory placement calls for probes outside this crate (`probe-latency`).
pub mod placement {
    pub use crate::sys::{bind_to_node, query_nodes};
}

pub use buffer::{NodeBuffer, PageKind, Placement};
pub use error::MeasureError;
