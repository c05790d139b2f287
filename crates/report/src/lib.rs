//! Turning models and findings into what people and programs read.
//!
//! One module per output format; nothing here reads the system.

pub mod format;
pub mod topo_json;
pub mod topo_text;
