//! Turning models and findings into what people and programs read.
//!
//! One module per output format; nothing here reads the system.

// A pure crate: no unsafe code, so no memory or system effect hides here.
#![forbid(unsafe_code)]

pub mod bisect_json;
pub mod bisect_text;
pub mod c2c_json;
pub mod c2c_text;
pub mod csv;
pub mod doctor_export;
pub mod doctor_html;
pub mod doctor_json;
pub mod doctor_text;
pub mod export;
pub mod format;
pub mod heatmap;
pub mod hotlines_json;
pub mod hotlines_text;
pub mod hotpages_json;
pub mod hotpages_text;
pub mod html;
pub mod inspect_json;
pub mod inspect_text;
pub mod irq_json;
pub mod irq_text;
pub mod lab_charts;
pub mod lab_json;
pub mod lab_svg;
pub mod lab_text;
pub mod layout;
pub mod lines_json;
pub mod lines_text;
pub mod measure_export;
pub mod mem_json;
pub mod mem_text;
pub mod meminfo_text;
pub mod memwatch_text;
pub mod migrations_json;
pub mod migrations_text;
pub mod move_json;
pub mod move_text;
pub mod openmetrics;
pub mod openmetrics_family;
pub mod pmu_diff_json;
pub mod pmu_diff_text;
pub mod pmu_json;
pub mod pmu_text;
pub mod probe_latency;
pub mod prometheus_text;
pub mod provenance;
pub mod readers_json;
pub mod readers_text;
pub mod runs_json;
pub mod runs_svg;
pub mod runs_text;
pub mod schema;
pub mod svg_chart;
pub mod table;
pub mod top_columns;
pub mod top_view;
pub mod topo_json;
pub mod topo_text;
pub mod undo_text;
pub mod watch_json;
pub mod watch_text;
