//! The formats of `/sys` files.
pub mod cpu;
pub mod damon;
pub mod node;
pub mod pci;
pub mod pmu;
pub mod pmu_format;
