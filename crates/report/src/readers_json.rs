//! `readers --json`, schema `numasleuth.readers/1`: analyze's
//! `ReadersDocument` under its schema.
//!
//! Kept names: `method.kind` (`kprobe`, `tracepoint`, `fd-scan`);
//! `files[]` (`name`, `path`, `lock`); `readers[]` with `comm`,
//! `cmdline`, `parents[]` (`pid`, `comm`), `processes`, `pids`, `opens`,
//! `opens_per_s`, `first_s`, `last_s`, `median_interval_s`, `files[]`
//! (`file`, `opens`, `targets[]`, `unknown_target_opens`) and `times_s`;
//! `opens[]` (`t_s`, `pid`, `tid`, `file`, `target`), the first
//! `MAX_OPENS_LISTED` in time order with `opens_listed`; `findings`;
//! `notes`. Fields may be added, never renamed.

pub use numasleuth_analyze::readers_document::{ReadersDocument, MAX_OPENS_LISTED};

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.readers/1";

pub fn document<'a>(doc: &'a ReadersDocument<'a>) -> Schema<'a, ReadersDocument<'a>> {
    Schema::new(SCHEMA, doc)
}
