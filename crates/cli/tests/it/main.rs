//! Every integration test of this crate, in one test binary: one link
//! instead of one per file (run one file with `cargo test -p CRATE --test it FILE::`).

mod bisect_cli;
mod cli_surface_cli;
#[path = "../common/mod.rs"]
mod common;
mod completions_man_cli;
mod containment_cli;
#[path = "../../../report/tests/common/debug_output.rs"]
mod debug_output;
mod deploy_cli;
mod docs_ranges_cli;
mod doctor_cli;
mod doctor_probes_cli;
mod evidence_cli;
mod findings_fit_cli;
mod fixtures_cli;
mod golden_cli;
mod golden_process_cli;
mod help_layout_cli;
mod hostile_args_cli;
mod hostile_text_cli;
mod hotlines_cli;
mod hotpages_cli;
mod inspect_cli;
mod irq_cli;
mod lab_cli;
mod lines_cli;
mod measure_cli;
mod mem_sizing_cli;
mod meminfo_cli;
mod memwatch_cli;
mod migrations_cli;
mod move_cli;
mod move_range_cli;
mod no_machine_cli;
mod output_cli;
mod pmu_cli;
mod pmu_diff_cli;
mod probe_latency_cli;
mod process_name_cli;
mod raw_samples_cli;
mod readers_cli;
mod readme_tour_cli;
mod runs_cli;
mod safe_output_cli;
mod select_cli;
mod serve_cli;
mod serve_idle_cli;
mod serve_load_cli;
mod serve_order_cli;
mod serve_prometheus_cli;
mod snapshot_cli;
mod snapshot_process_cli;
mod stop_cli;
mod top_cli;
mod topo_cli;
mod undo_cli;
mod unreadable_cli;
#[path = "../../../../tests/victim/victim_build.rs"]
mod victim_build;
mod watch_cli;
