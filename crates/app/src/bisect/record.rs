//! What `bisect` writes down: the journal's runs of pages, the search's
//! steps and noise, the restore, and how the whole run ended
//! ([`BisectError`]).

use numasleuth_analyze::bisect::document::{BisectDocument, Restore, StepRecord};
use numasleuth_analyze::bisect::{self, Candidates, MetricPeriod, Search, Verdict};
use numasleuth_change::{ChangeError, PageMove, Restored};

use super::SearchStop;

/// Why a bisection that ran is an error, after its report was shown.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The search finished, but pages stayed away.
    #[error("{still_away} page(s) could not be moved back; {undo}")]
    NotBack { still_away: u64, undo: String },
    /// The search stopped early; every page is back.
    #[error("{halted}; every page moved is back where it was")]
    StoppedAllBack { halted: SearchStop },
    #[error("{halted}; {still_away} page(s) could not be moved back; {undo}")]
    StoppedNotBack {
        halted: SearchStop,
        still_away: u64,
        undo: String,
    },
    #[error(
        "process {pid} exited during the bisection: its pages went with it, so none is left away; the journal \
         {journal} is kept for the record (`numasleuth undo {journal}` checks, and moves back any page still away)"
    )]
    ProcessExited { pid: u32, journal: String },
    /// Bringing the pages back failed; `halted` is why the search stopped
    /// first, with its separator, or empty.
    #[error("{halted}moving the pages back failed: {failed}; {undo}")]
    RestoreFailed {
        halted: String,
        failed: Box<ChangeError>,
        undo: String,
    },
}

/// How the run ended: `Ok` only when the search ended and every page is
/// home.
pub fn ended(
    halted: Option<SearchStop>,
    finished: Result<Restored, ChangeError>,
    journal: &str,
    pid: u32,
) -> Result<(), BisectError> {
    let undo = format!("the journal {journal} is kept: `numasleuth undo {journal}` moves back every page still away");
    match (halted, finished) {
        (None, Ok(r)) if r.still_away == 0 => Ok(()),
        (None, Ok(r)) => Err(BisectError::NotBack {
            still_away: r.still_away,
            undo,
        }),
        (Some(halted), Ok(r)) if r.still_away == 0 => Err(BisectError::StoppedAllBack { halted }),
        (Some(halted), Ok(r)) => Err(BisectError::StoppedNotBack {
            halted,
            still_away: r.still_away,
            undo,
        }),
        (halted, Err(failed)) => {
            if matches!(failed, ChangeError::ProcessGone { .. } | ChangeError::PidReused { .. }) {
                return Err(BisectError::ProcessExited {
                    pid,
                    journal: journal.to_string(),
                });
            }
            Err(BisectError::RestoreFailed {
                halted: halted.map_or(String::new(), |s| format!("{s}; ")),
                failed: Box::new(failed),
                undo,
            })
        }
    }
}

/// The journal's runs: consecutive candidate pages with the same two nodes.
pub fn page_moves(found: &Candidates, pid: u32, start_time: u64, page_bytes: u64) -> Vec<PageMove> {
    let mut moves: Vec<PageMove> = Vec::new();
    for (i, &address) in found.addresses.iter().enumerate() {
        let (from_node, to_node) = (found.home[i], found.away[i]);
        if let Some(last) = moves.last_mut() {
            let next = last.address + last.pages * page_bytes;
            if last.from_node == from_node && last.to_node == to_node && next == address {
                last.pages += 1;
                continue;
            }
        }
        moves.push(PageMove {
            pid,
            pid_start_time: start_time,
            address,
            pages: 1,
            page_bytes,
            from_node,
            to_node,
        });
    }
    moves
}

pub fn unix_now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub fn describe_left_out(found: &Candidates) -> String {
    let parts: Vec<String> = found.left_out.iter().map(|(why, n)| format!("{n} {why}")).collect();
    parts.join(", ")
}

pub fn search(doc: &mut BisectDocument, search: &Search, found: &Candidates) {
    doc.baseline = search.baseline.clone();
    doc.steps = search
        .steps
        .iter()
        .map(|s| StepRecord::new(s, &found.addresses))
        .collect();
    doc.verdict = search.verdict.as_ref().map(Verdict::kind);
    doc.notes.extend(search.notes.iter().cloned());
}

/// How far apart the readings were, and whether they look quantised.
pub fn noise(doc: &mut BisectDocument, search: &Search, probe: Option<MetricPeriod>, min_change: f64) {
    let Some(probe) = probe else { return };
    doc.metric_period_ms = probe.period.map(|p| p.as_millis() as u64);
    doc.reading_spacing_ms = Some(probe.spacing().as_millis() as u64);
    doc.notes.push(match probe.period {
        Some(period) => format!(
            "readings were taken {} ms apart: the metric's value changed every {} ms (median) over {} readings while \
             the baseline settled",
            probe.spacing().as_millis(),
            period.as_millis(),
            probe.readings
        ),
        None => format!(
            "the metric's period could not be timed: its value changed fewer than twice in {} readings over {} ms \
             of the baseline's --settle, so readings were taken back to back (a longer --settle times it)",
            probe.readings,
            probe.over.as_millis()
        ),
    });
    let sets = search.baseline.iter().chain(search.steps.iter().map(|s| &s.readings));
    doc.notes.extend(bisect::quantised(sets, min_change));
}

pub fn restore(doc: &mut BisectDocument, restored: &Restored) {
    doc.restored = restored.still_away == 0 && restored.elsewhere == 0;
    doc.journal = restored.journal_kept.clone();
    doc.restore = Some(Restore {
        pages: restored.pages,
        home: restored.home,
        sent_home_at_end: restored.sent_home,
        still_away: restored.still_away,
        elsewhere: restored.elsewhere,
    });
}
