//! Taking records out of a perf sample ring, a bounded number per pass.
//!
//! Why bounded: a collector polls its rings between checks of its deadline
//! and of the stop token. A ring whose producer writes as fast as we read
//! (a watchpoint on a variable written in a tight loop, under emulation or
//! with an unoptimised build) kept `while let Some(record) = next_record()`
//! going forever: past `--duration` and past Ctrl-C, so the run hung. One
//! pass takes at most [`MAX_RECORDS_PER_PASS`]; what is left waits for the
//! next pass, and what the ring cannot hold meanwhile the kernel counts as
//! lost, which every collector reports.

use perf_event::{Record, Sampler};

/// Records one pass takes from one ring at most: a few ms of parsing.
pub const MAX_RECORDS_PER_PASS: usize = 4096;

/// Hands up to [`MAX_RECORDS_PER_PASS`] records of `sampler` to `each`;
/// returns how many it took (fewer than the cap: the ring is empty).
pub fn drain_pass(sampler: &mut Sampler, mut each: impl FnMut(Record<'_>)) -> usize {
    let mut taken = 0;
    while taken < MAX_RECORDS_PER_PASS {
        let Some(record) = sampler.next_record() else {
            break;
        };
        each(record);
        taken += 1;
    }
    taken
}

/// Drains `sampler` after its event was disabled: passes until one comes
/// back short. Nothing writes to the ring any more, so this ends.
pub fn drain_stopped(sampler: &mut Sampler, mut each: impl FnMut(Record<'_>)) {
    while drain_pass(sampler, &mut each) == MAX_RECORDS_PER_PASS {}
}
