//! Readers for `/sys`.
pub mod cpu;
pub mod node;
pub mod pci;
