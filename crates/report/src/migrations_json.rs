//! `migrations --json`, schema `numasleuth.migrations/2`.
//!
//! Kept names: `threads[]` with `tid`, `comm`, `cpu_migrations`,
//! `node_migrations`, `nodes_visited`; `numa_balancing` with `mode`,
//! `tasks[]` (`tid`, `numa_preferred_nid`, `numa_pages_migrated`,
//! `total_numa_faults`, `mems_allowed`) and `pages_migrated_during`;
//! `method.kind` (`tracepoint` or `sampled`). Fields may be added, never
//! renamed.

use numasleuth_analyze::findings::Finding;
use numasleuth_analyze::migrations::{Method, NumaBalancing, ThreadMigrations};
use serde::Serialize;

pub const SCHEMA: &str = "numasleuth.migrations/2";

#[derive(Debug, Serialize)]
pub struct MigrationsJson<'a> {
    pub schema: &'static str,
    pub pid: Option<u32>,
    pub method: &'a Method,
    pub duration_s: f64,
    pub threads: &'a [ThreadMigrations],
    pub numa_balancing: NumaJson<'a>,
    pub findings: &'a [Finding],
    pub notes: &'a [String],
}

#[derive(Debug, Serialize)]
pub struct NumaJson<'a> {
    #[serde(flatten)]
    pub state: &'a NumaBalancing,
    pub pages_migrated_during: Option<u64>,
}

pub fn build<'a>(
    pid: Option<u32>,
    method: &'a Method,
    duration_s: f64,
    threads: &'a [ThreadMigrations],
    numa: &'a NumaBalancing,
    findings: &'a [Finding],
    notes: &'a [String],
) -> MigrationsJson<'a> {
    MigrationsJson {
        schema: SCHEMA,
        pid,
        method,
        duration_s,
        threads,
        numa_balancing: NumaJson {
            state: numa,
            pages_migrated_during: numa.pages_migrated_during(),
        },
        findings,
        notes,
    }
}
