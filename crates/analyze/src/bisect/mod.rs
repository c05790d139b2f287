//! Page-placement bisection, the decisions only: which pages to move next,
//! whether a move changed the metric, and when to stop.
//!
//! The candidates are a sorted list of pages, indexed `0..n`; every set
//! the search tries is a contiguous index range, so halves stay ranges.
//! Moving pages and reading the metric are the caller's ([`Experiment`]):
//! the CLI moves real pages with move_pages and runs the user's metric
//! command; the tests use a model whose culprit page is known.
//!
//! The search, after a baseline of `rounds` readings:
//! 1. move *every* candidate; if the metric does not change, placement of
//!    these pages does not matter, and the search stops there;
//! 2. otherwise halve: move the first half; if that changes the metric,
//!    keep it; else move the second half, and keep it if that does;
//! 3. if neither half alone changes it, the set and both halves are
//!    measured again; a half that changes it now is kept, and otherwise
//!    the effect needs pages from both: the range is the culprit set;
//! 4. repeat down to a single page.
//!
//! Whether a step changed the metric is [`decide`]'s: separation from the
//! baseline, and more batches of readings (of the step and the baseline)
//! while the evidence is in between. Every set moved is moved back before
//! the next one is tried, so each step is measured against the baseline
//! placement.

mod decide;
pub mod document;
mod plan;
mod readings;
#[cfg(test)]
mod tests;

use std::ops::Range;

use serde::Serialize;

pub use decide::{changed, Change, Evidence, BATCHES_MAX, FINAL_PAIRS_MIN, UNCHANGED_PAIRS_MAX};
pub use plan::{candidates, Candidates, CandidatesError};
pub use readings::{period_ns, quantised, MetricPeriod, Readings, DEFAULT_MIN_CHANGE, SPACING_MAX};

/// Batches of readings the baseline starts with (it grows whenever a step
/// asks for more readings).
pub const BASELINE_BATCHES: u32 = 2;

/// What the search needs from the world.
pub trait Experiment {
    type Error;
    /// Moves the candidate pages at `pages` (indices) away from where they
    /// were; returns how many really moved.
    fn move_away(&mut self, pages: Range<usize>) -> Result<u64, Self::Error>;
    /// Moves them back where they were.
    fn move_back(&mut self, pages: Range<usize>) -> Result<(), Self::Error>;
    /// Waits for the workload to settle, then reads the metric.
    fn measure(&mut self) -> Result<Readings, Self::Error>;
}

/// One set of pages moved, and what the metric did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Candidate indices moved.
    pub pages: Range<usize>,
    /// Pages that really moved (some may be refused or not resident).
    pub pages_moved: u64,
    /// Every reading taken with the set away, over all its batches.
    pub readings: Readings,
    pub change: Change,
    /// Batches of readings taken (more than one when the first left the
    /// evidence in between; at most [`BATCHES_MAX`]).
    pub batches: u32,
    /// Baseline readings the step was compared with (the baseline grows
    /// with every batch after a step's first).
    pub baseline_readings: usize,
    /// Measured again because neither half of a changed set changed it.
    pub recheck: bool,
}

/// How the search ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Moving every candidate did not change the metric.
    NoEffect,
    /// One page carries the effect.
    Page { index: usize },
    /// The effect needs these pages together: neither half alone changed
    /// the metric.
    Together { pages: Range<usize> },
}

impl Verdict {
    /// The candidate indices the verdict blames (none for no effect).
    pub fn blamed(&self) -> Range<usize> {
        match self {
            Verdict::NoEffect => 0..0,
            Verdict::Page { index } => *index..index + 1,
            Verdict::Together { pages } => pages.clone(),
        }
    }

    pub fn kind(&self) -> VerdictKind {
        match self {
            Verdict::NoEffect => VerdictKind::NoEffect,
            Verdict::Page { .. } => VerdictKind::Page,
            Verdict::Together { .. } => VerdictKind::Together,
        }
    }
}

/// Which verdict, without its pages: `no_effect`, `page` or `together` in
/// `bisect --json`, and what the text report tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    NoEffect,
    Page,
    Together,
}

/// The record of a search, complete or cut short by an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Search {
    pub baseline: Option<Readings>,
    pub steps: Vec<Step>,
    pub verdict: Option<Verdict>,
    /// What a person should know about the verdict's footing.
    pub notes: Vec<String>,
}

/// A search that failed part-way: what it had found, and why it stopped.
#[derive(Debug)]
pub struct Stopped<E> {
    pub search: Search,
    pub error: E,
}

/// Runs the search over `candidates` pages. `min_change` is the smallest
/// relative change of the median that counts (see [`changed`]).
pub fn bisect<X: Experiment>(
    experiment: &mut X,
    candidates: usize,
    min_change: f64,
) -> Result<Search, Stopped<X::Error>> {
    let mut search = Search {
        baseline: None,
        steps: Vec::new(),
        verdict: None,
        notes: Vec::new(),
    };
    match run(experiment, candidates, min_change, &mut search) {
        Ok(verdict) => {
            search.verdict = Some(verdict);
            Ok(search)
        }
        Err(error) => Err(Stopped { search, error }),
    }
}

fn run<X: Experiment>(
    experiment: &mut X,
    candidates: usize,
    min_change: f64,
    search: &mut Search,
) -> Result<Verdict, X::Error> {
    // Two batches: against three baseline readings, three readings of an
    // unchanged metric are separated from them one time in ten by chance.
    let mut baseline = experiment.measure()?;
    search.baseline = Some(baseline.clone());
    for _ in 1..BASELINE_BATCHES {
        baseline = baseline.extended(&experiment.measure()?);
        search.baseline = Some(baseline.clone());
    }
    let mut searcher = Searcher {
        experiment,
        baseline,
        min_change,
        search,
    };
    if candidates == 0 || !searcher.try_set(0..candidates, false)? {
        return Ok(Verdict::NoEffect);
    }
    let mut range = 0..candidates;
    while range.len() > 1 {
        let middle = range.start + range.len() / 2;
        let (first, second) = (range.start..middle, middle..range.end);
        if searcher.try_set(first.clone(), false)? {
            range = first;
            continue;
        }
        if searcher.try_set(second.clone(), false)? {
            range = second;
            continue;
        }
        // Neither half alone: a noisy second can hide a half's change as
        // easily as it can fake the set's, so all three are measured again
        // before the pages are said to act only together.
        let set_again = searcher.try_set(range.clone(), true)?;
        if searcher.try_set(first.clone(), true)? {
            range = first;
            continue;
        }
        if searcher.try_set(second.clone(), true)? {
            range = second;
            continue;
        }
        if !set_again {
            searcher.search.notes.push(did_not_repeat(&range));
        }
        return Ok(Verdict::Together { pages: range });
    }
    Ok(Verdict::Page { index: range.start })
}

fn did_not_repeat(range: &Range<usize>) -> String {
    format!(
        "candidate pages {}-{} changed the metric when first moved but not when moved again, and neither half changed \
         it either time: the first change may have been noise on a busy host, or the effect comes and goes; measure \
         again on a quieter host or with more --rounds before trusting this verdict",
        range.start,
        range.end - 1
    )
}

/// The search's state: the experiment, and the baseline, which grows
/// whenever a step asks for more readings.
struct Searcher<'a, X: Experiment> {
    experiment: &'a mut X,
    baseline: Readings,
    min_change: f64,
    search: &'a mut Search,
}

impl<X: Experiment> Searcher<'_, X> {
    /// Moves `pages` away, reads, moves them back: once, or up to
    /// [`BATCHES_MAX`] times while the evidence is in between, reading the
    /// baseline again (every page home) after each batch but the last.
    /// Records the step; true when it changed the metric.
    fn try_set(&mut self, pages: Range<usize>, recheck: bool) -> Result<bool, X::Error> {
        let mut so_far: Option<Readings> = None;
        let mut pages_moved = u64::MAX;
        for batch in 1..=BATCHES_MAX {
            let moved = self.experiment.move_away(pages.clone())?;
            let measured = self.experiment.measure();
            // Back before anything else, even when the reading failed.
            let back = self.experiment.move_back(pages.clone());
            let readings = measured?;
            back?;
            pages_moved = pages_moved.min(moved);
            let readings = match so_far.take() {
                Some(before) => before.extended(&readings),
                None => readings,
            };
            // A set that moved nothing has nothing to read more of.
            let last = batch == BATCHES_MAX || pages_moved == 0;
            let change = changed(&self.baseline, &readings, self.min_change, last);
            if change.evidence != Evidence::Unsure {
                let significant = change.significant && pages_moved > 0;
                self.search.steps.push(Step {
                    pages,
                    pages_moved,
                    readings,
                    change,
                    batches: batch,
                    baseline_readings: self.baseline.values.len(),
                    recheck,
                });
                return Ok(significant);
            }
            so_far = Some(readings);
            let more = self.experiment.measure()?;
            self.baseline = self.baseline.extended(&more);
            self.search.baseline = Some(self.baseline.clone());
        }
        unreachable!("the last batch always decides")
    }
}

/// The most steps a search over `candidates` pages can take: the full
/// move, then per halving two, and three more when neither half changed
/// the metric (the set and both halves measured again).
pub fn max_steps(candidates: usize) -> usize {
    let mut halvings = 0;
    let mut n = candidates;
    while n > 1 {
        n = n.div_ceil(2);
        halvings += 1;
    }
    1 + 5 * halvings
}

/// The most times a search moves a set of pages away: every step may take
/// [`BATCHES_MAX`] batches, each moving its set away and back.
pub fn max_moves(candidates: usize) -> usize {
    max_steps(candidates) * BATCHES_MAX as usize
}
