//! Every integration test of this crate, in one test binary: one link
//! instead of one per file (run one file with `cargo test -p CRATE --test it FILE::`).

#[path = "../common/mod.rs"]
mod common;
mod golden_hotpages;
mod golden_lines;
mod golden_lists;
mod golden_readers;
mod golden_reports;
mod golden_reports_lab;
mod golden_reports_pages;
mod golden_reports_process;
mod golden_topo;
mod parallel_widths;
