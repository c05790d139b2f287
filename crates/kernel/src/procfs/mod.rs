//! Readers for `/proc`.
pub mod cpuinfo;
pub mod interrupts;
pub mod meminfo;
pub mod processes;
pub mod settings;
pub mod status;
pub mod zoneinfo;
