//! Raw totals of a `hotlines` sampling run: samples and losses per thread.
//! `probe` produces them; `report` prints them.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadSamples {
    pub tid: u32,
    pub samples: u64,
    pub lost_samples: u64,
    pub exited: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleRaw {
    pub pid: u32,
    pub duration_s: f64,
    pub threads: Vec<ThreadSamples>,
    pub process_exited: bool,
    pub problems: Vec<String>,
}
