//! The formats of `/proc` files.
pub mod cmdline;
pub mod cpuinfo;
mod digits;
pub mod interrupts;
pub mod maps;
pub mod meminfo;
pub mod numa_maps;
pub mod pagemap;
pub mod process;
pub mod processes;
pub mod settings;
pub mod stat;
pub mod statm;
pub mod status;
pub mod syscall;
pub mod task;
pub mod zoneinfo;
