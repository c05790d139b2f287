//! Judgements over the model: pure functions from what was read to what a
//! person should be told. No I/O happens here.

pub mod bisect;
pub mod cpu_sample;
pub mod doctor;
pub mod evidence;
pub mod findings;
pub mod hotlines;
pub mod hotpages;
pub mod interconnect;
pub mod irq;
pub mod lab;
pub mod latency_spikes;
pub mod lines;
pub mod mem;
pub mod memwatch;
pub mod migrations;
pub mod node_signals;
pub mod page_move;
pub mod pmu;
pub mod process;
pub mod rates;
pub mod runs;
pub mod stats;
pub mod timing;
pub mod top;
pub mod topology;
pub mod watch;
