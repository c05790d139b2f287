//! Why a bisection could not start, before any of its report is shown
//! ([`super::BisectError`] is how one that ran ended). Where the message
//! wraps a cause, the cause is the source, so `{:#}` prints one line.

use numasleuth_analyze::bisect::CandidatesError;
use numasleuth_change::ChangeError;

use super::SearchStop;
use crate::page_targets::PageSetError;
use crate::SnapshotRefused;

#[derive(Debug, thiserror::Error)]
pub enum BisectStartError {
    #[error(transparent)]
    Refused(#[from] SnapshotRefused),
    #[error(transparent)]
    OutOfRange(#[from] crate::limits::OutOfRange),
    #[error(transparent)]
    PageSet(#[from] PageSetError),
    #[error(transparent)]
    Candidates(#[from] CandidatesError),
    #[error("none of the {pages} page(s) asked for can be moved ({left_out}): nothing to bisect")]
    NothingToMove { pages: usize, left_out: String },
    /// The dry run's one reading of the metric failed.
    #[error(transparent)]
    Metric(SearchStop),
    #[error("cannot seal a journal, so nothing was moved")]
    NoKey {
        #[source]
        error: Box<ChangeError>,
    },
    #[error("cannot start moving the pages of process {pid}")]
    Begin {
        pid: u32,
        #[source]
        error: Box<ChangeError>,
    },
}
