//! Changing the system, reversibly.
//!
//! Nothing here runs without `--apply`. Every change is a list of kernel
//! file writes with the value found before; the list is written to a
//! checksummed journal *before* the first write, each write is verified,
//! and a failure part-way rolls back what was already written. `undo`
//! replays the journal backwards on the same machine and boot only.

mod apply;
mod journal;

pub use apply::{apply, undo, ChangeError};
pub use journal::{FileChange, Journal, MachineIdentity};
