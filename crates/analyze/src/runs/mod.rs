//! `runs`: is a benchmark's metric bimodal across runs, and which observed
//! attribute of a run (start node, where .bss landed, …) explains the modes.

pub mod bimodal;

#[cfg(test)]
mod bimodal_tests;
