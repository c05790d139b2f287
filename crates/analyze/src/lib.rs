//! Judgements over the model: pure functions from what was read to what a
//! person should be told. No I/O happens here.

// A pure crate: no unsafe code, so no memory or system effect hides here.
#![forbid(unsafe_code)]

pub mod bisect;
pub mod c2c;
pub mod c2c_document;
pub mod confidence;
pub mod cpu_sample;
pub mod doctor;
pub mod evidence;
pub mod findings;
pub mod flat_search;
pub mod hotlines;
pub mod hotpages;
pub mod hotpages_regions;
pub mod interconnect;
pub mod irq;
pub mod join;
pub mod lab;
pub mod latency_check;
pub mod latency_spikes;
pub mod latency_summary;
pub mod lines;
pub mod mem;
pub mod mem_document;
pub mod meminfo;
pub mod memwatch;
pub mod migrations;
pub mod move_document;
pub mod page_move;
pub mod pmu;
pub mod probe_latency;
pub mod process;
pub mod process_document;
pub mod rates;
pub mod readers;
pub mod readers_document;
pub mod row_warnings;
pub mod runs;
pub mod siblings;
pub mod spike_readers;
pub mod stats;
pub mod timing;
pub mod top;
pub mod topology;
pub mod watch;
pub mod working_set;
