//! `lines --json`, schema `numasleuth.lines/1`.
//!
//! Kept names: `schema`, `line_size`, `lines[]` with `address` (hex
//! string) and `symbols[]` (`name`, `size`, `section`). Fields may be
//! added, never renamed. Addresses are run-time ones when `pid` is set.

use numasleuth_analyze::lines::{Line, LineSymbol};
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.lines/1";

/// The document: what the lines were read from, then analyze's symbol and
/// lines as they serialize (addresses as hex strings).
#[derive(Debug, Serialize)]
pub struct LinesJson<'a> {
    pub schema: &'static str,
    pub line_size: u64,
    pub object: &'a str,
    pub pid: Option<u32>,
    /// Added to every non-TLS link-time address; a hex string.
    #[serde(serialize_with = "numasleuth_model::hex::serialize")]
    pub load_bias: u64,
    pub sections: &'static [&'static str],
    pub symbol_source: &'a str,
    pub data_symbols: usize,
    /// With `--symbol`: the symbol asked for.
    pub symbol: Option<&'a LineSymbol>,
    pub lines: &'a [Line],
}
