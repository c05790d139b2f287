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
//! 3. if neither half alone changes it, the effect needs pages from both:
//!    the range is reported as the culprit set, as it is;
//! 4. repeat down to a single page.
//!
//! Every set moved is moved back before the next one is tried, so each
//! step is measured against the baseline placement.

mod plan;
mod readings;
#[cfg(test)]
mod tests;

use std::ops::Range;

use serde::Serialize;

pub use plan::{candidates, Candidates};
pub use readings::{changed, period_ns, quantised, Change, MetricPeriod, Readings, DEFAULT_MIN_CHANGE, SPACING_MAX};

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
    pub readings: Readings,
    pub change: Change,
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
    let baseline = experiment.measure()?;
    search.baseline = Some(baseline.clone());
    let mut try_set = |pages: Range<usize>, search: &mut Search| -> Result<bool, X::Error> {
        let pages_moved = experiment.move_away(pages.clone())?;
        let measured = experiment.measure();
        // Back before anything else, even when the reading failed.
        let back = experiment.move_back(pages.clone());
        let readings = measured?;
        back?;
        let change = changed(&baseline, &readings, min_change);
        let significant = change.significant && pages_moved > 0;
        search.steps.push(Step {
            pages,
            pages_moved,
            readings,
            change,
        });
        Ok(significant)
    };
    if candidates == 0 || !try_set(0..candidates, search)? {
        return Ok(Verdict::NoEffect);
    }
    let mut range = 0..candidates;
    while range.len() > 1 {
        let middle = range.start + range.len() / 2;
        let (first, second) = (range.start..middle, middle..range.end);
        if try_set(first.clone(), search)? {
            range = first;
        } else if try_set(second.clone(), search)? {
            range = second;
        } else {
            return Ok(Verdict::Together { pages: range });
        }
    }
    Ok(Verdict::Page { index: range.start })
}

/// The most steps a search over `candidates` pages can take: the full
/// move, then two per halving.
pub fn max_steps(candidates: usize) -> usize {
    let mut halvings = 0;
    let mut n = candidates;
    while n > 1 {
        n = n.div_ceil(2);
        halvings += 1;
    }
    1 + 2 * halvings
}
