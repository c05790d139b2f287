//! `readers --json`, schema `numasleuth.readers/1`.
//!
//! Kept names: `method.kind` (`kprobe`, `tracepoint`, `fd-scan`);
//! `files[]` (`name`, `path`, `lock`); `readers[]` with `comm`,
//! `cmdline`, `parents[]` (`pid`, `comm`), `processes`, `pids`, `opens`,
//! `opens_per_s`, `first_s`, `last_s`, `median_interval_s`, `files[]`
//! (`file`, `opens`, `targets[]`, `unknown_target_opens`) and `times_s`;
//! `opens[]` (`t_s`, `pid`, `tid`, `file`, `target`), the first
//! [`MAX_OPENS_LISTED`] in time order with `opens_listed`; `findings`;
//! `notes`. Fields may be added, never renamed.

use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::readers::{Reader, Summary};
use numasleuth_model::readers::{LockFile, Method, Open};
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.readers/1";
/// Opens listed one by one; every one is counted in `readers`.
pub const MAX_OPENS_LISTED: usize = 10_000;

#[derive(Debug, Serialize)]
pub struct FileJson {
    pub name: &'static str,
    pub path: String,
    pub lock: &'static str,
}

#[derive(Debug, Serialize)]
pub struct ReadersJson<'a> {
    pub schema: &'static str,
    pub method: &'a Method,
    pub duration_s: f64,
    pub files: Vec<FileJson>,
    pub opens_total: u64,
    pub readers: &'a [Reader],
    pub opens_listed: usize,
    pub opens: Vec<&'a Open>,
    pub own_reads_left_out: u64,
    pub findings: &'a [Finding],
    pub notes: &'a [String],
}

pub fn file_json(file: LockFile) -> FileJson {
    FileJson {
        name: file.name(),
        path: file.path(),
        lock: file.reason(),
    }
}

/// `opens` are the raw ones, in time order (own-smaps reads included,
/// marked by their target).
pub fn build<'a>(summary: &'a Summary, opens: &'a [Open], findings: &'a [Finding]) -> ReadersJson<'a> {
    let listed: Vec<&Open> = opens.iter().take(MAX_OPENS_LISTED).collect();
    ReadersJson {
        schema: SCHEMA,
        method: &summary.method,
        duration_s: summary.duration_s,
        files: summary.files.iter().map(|f| file_json(*f)).collect(),
        opens_total: summary.opens,
        readers: &summary.readers,
        opens_listed: listed.len(),
        opens: listed,
        own_reads_left_out: summary.own_reads_left_out,
        findings,
        notes: &summary.notes,
    }
}
