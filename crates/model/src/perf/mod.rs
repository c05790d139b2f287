//! The raw readings of the perf-based collectors (`pmu`, `watch`,
//! `hotlines`), as plain serializable data.
//!
//! Why here and not in `probe`: `analyze` and `report` must read these
//! without linking the perf bindings, so the collector produces model
//! types and the pure crates depend on the model only.

pub mod catalog;
pub mod decoded;
pub mod errno;
pub mod pmu;
pub mod sample;
pub mod watch;
