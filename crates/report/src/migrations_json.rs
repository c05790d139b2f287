//! `migrations --json`, schema `numasleuth.migrations/2`: analyze's
//! `MigrationsDocument` under its schema.
//!
//! Kept names: `threads[]` with `tid`, `comm`, `cpu_migrations`,
//! `node_migrations`, `nodes_visited`; `numa_balancing` with `mode`,
//! `tasks[]` (`tid`, `numa_preferred_nid`, `numa_pages_migrated`,
//! `total_numa_faults`, `mems_allowed`) and `pages_migrated_during`;
//! `method.kind` (`tracepoint` or `sampled`). Fields may be added, never
//! renamed.

use numasleuth_analyze::migrations::MigrationsDocument;

use crate::schema::Schema;

pub const SCHEMA: &str = "numasleuth.migrations/2";

pub fn document(doc: &MigrationsDocument) -> Schema<'_, MigrationsDocument> {
    Schema::new(SCHEMA, doc)
}
