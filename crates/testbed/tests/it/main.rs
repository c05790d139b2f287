//! Every integration test of this crate, in one test binary: one link
//! instead of one per file (run one file with `cargo test -p CRATE --test it FILE::`).

mod arm64_guest;
mod bisect_guest;
mod boot_watchdog;
mod detective_guest;
mod guest_names;
mod guests;
mod hotpages_guest;
mod lab_guest;
mod memwatch_guest;
mod migrations_guest;
mod probe_latency_guest;
mod readers_guest;
mod runs_guest;
mod victim_guest;
