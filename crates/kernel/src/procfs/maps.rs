//! `/proc/PID/maps`: the format, types and parser are
//! `numasleuth_parse::procfs::maps`; streaming it from a process is
//! `maps_read`.

pub use numasleuth_parse::procfs::maps::*;

pub use super::maps_read::{read, CapHit, Maps, MapsCap, MapsStream};
