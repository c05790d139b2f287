//! A PMU's `format/` files: the format, types and parser are
//! `numasleuth_parse::sysfs::pmu_format`; reading them is `sysfs::pmu`.

pub use numasleuth_parse::sysfs::pmu_format::*;
