//! The parts of the hwloc conformance test, split by concern so that each
//! can be read on its own: finding and unpacking hwloc's captures
//! ([`corpus`]), reading what `lstopo` printed for them ([`console`]) and
//! with which options ([`options`]), turning our model into what `lstopo`
//! would show ([`view`]), comparing the two ([`compare`]), running every
//! capture ([`run`]), and the differences we accept on purpose ([`allow`]).
//! The `#[test]` and its report stay in `hwloc_conformance.rs`.

pub(crate) mod allow;
pub(crate) mod compare;
mod console;
pub(crate) mod corpus;
mod options;
pub(crate) mod run;
mod view;
