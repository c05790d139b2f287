//! `probe-latency`'s collector: operations timed one call at a time
//! (`ops`), issued at a fixed intended rate with each latency recorded from
//! its intended start and from its actual start (`schedule`).

pub mod ops;
pub mod schedule;
