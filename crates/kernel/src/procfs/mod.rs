//! Readers for `/proc`.
pub mod cpuinfo;
pub mod meminfo;
pub mod status;
