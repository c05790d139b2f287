//! Turning models and findings into what people and programs read.
//!
//! One module per output format; nothing here reads the system.

pub mod doctor_html;
pub mod doctor_json;
pub mod doctor_text;
pub mod format;
pub mod html;
pub mod irq_text;
pub mod topo_json;
pub mod topo_text;
