//! How one run of a workload ended, as `measure` reads it (wait4) and
//! `analyze` turns it into a run row: kept here so analyze need not link
//! the collector that produced it.

use serde::Serialize;

/// Resource usage of the finished child and its waited-for descendants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub user_us: u64,
    pub system_us: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub usage: Usage,
}
