//! Readers for `/proc`.
pub mod cpuinfo;
pub mod interrupts;
pub mod meminfo;
pub mod settings;
pub mod status;
pub mod zoneinfo;
