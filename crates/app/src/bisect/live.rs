//! The live side of `bisect`: moving real pages through the journalled
//! session, reading the user's metric command (on measure's
//! `metric_series` schedule), the stop token (Ctrl-C), and naming the
//! symbols on the culprit page.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use numasleuth_analyze::bisect::document::CulpritPage;
use numasleuth_analyze::bisect::{Candidates, Experiment, MetricPeriod, Readings, Verdict};
use numasleuth_analyze::lines::data_symbols;
use numasleuth_analyze::runs::metric::first_number;
use numasleuth_change::{ChangeError, PageSession};
use numasleuth_kernel::Root;
use numasleuth_measure::metric_series::{MetricCommand, MetricStop};
use numasleuth_symbols::ProcessObjects;

/// Culprit pages listed one by one (a `together` verdict may hold many).
const CULPRITS_LISTED: usize = 64;
/// Symbols named per page; the count says how many more.
const SYMBOLS_LISTED: usize = 32;

/// Why the search stopped.
#[derive(Debug, thiserror::Error)]
pub enum SearchStop {
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Metric(String),
    #[error("moving pages failed: {0}")]
    /// Boxed: a change error is large, and this is every step's error.
    Pages(Box<ChangeError>),
}

impl From<MetricStop> for SearchStop {
    fn from(stop: MetricStop) -> SearchStop {
        match stop {
            MetricStop::Interrupted => SearchStop::Interrupted,
            MetricStop::Failed(why) => SearchStop::Metric(why),
        }
    }
}

/// The real experiment: pages of a live process, the user's metric.
pub struct Live<'a> {
    pub root: &'a Root,
    pub session: PageSession,
    pub addresses: &'a [u64],
    pub metric_cmd: &'a str,
    pub metric_timeout: Duration,
    pub settle: Duration,
    pub rounds: u32,
    /// Sets of pages sent away so far (each is brought back before the
    /// next): the interrupted step too, which has no reading.
    pub sets_moved: u64,
    /// The front-end's stop token (cli: set by a signal that never exits
    /// before every page is back).
    pub interrupt: numasleuth_model::stop::Stop,
    /// What the metric did while the baseline settled; `None` until then.
    pub probe: Option<MetricPeriod>,
}

impl Live<'_> {
    /// The metric command under the shared stop token (set so that no
    /// signal exits before every page is back): an interrupt ends the
    /// search at its next wait or reading.
    fn metric(&self) -> MetricCommand<'_> {
        MetricCommand {
            command: self.metric_cmd,
            timeout: self.metric_timeout,
            number: first_number,
            stop: &self.interrupt,
        }
    }
}

impl Experiment for Live<'_> {
    type Error = SearchStop;

    fn move_away(&mut self, pages: Range<usize>) -> Result<u64, SearchStop> {
        self.metric().check_interrupt()?;
        self.sets_moved += 1;
        let moved = self
            .session
            .send_away(self.root, &self.addresses[pages])
            .map_err(|e| SearchStop::Pages(Box::new(e)))?;
        Ok(moved.verified)
    }

    fn move_back(&mut self, pages: Range<usize>) -> Result<(), SearchStop> {
        // Runs even after an interrupt: a set is never left away.
        self.session
            .bring_back(self.root, &self.addresses[pages])
            .map(|_| ())
            .map_err(|e| SearchStop::Pages(Box::new(e)))
    }

    fn measure(&mut self) -> Result<Readings, SearchStop> {
        let spacing = match self.probe {
            Some(period) => {
                self.metric().wait(self.settle)?;
                period.spacing()
            }
            None => {
                // The baseline's settle is spent timing the metric's period.
                let period = MetricPeriod::of(&self.metric().readings_while_settling(self.settle)?);
                self.probe = Some(period);
                period.spacing()
            }
        };
        let values = self.metric().rounds(self.rounds, spacing)?;
        Readings::new(values)
            .ok_or_else(|| SearchStop::Metric("the metric command printed a number that is not finite".into()))
    }
}

/// The culprit page(s) with the data symbols on them.
pub fn culprits(verdict: &Verdict, found: &Candidates, objects: &ProcessObjects, page_bytes: u64) -> Vec<CulpritPage> {
    let indices = verdict.blamed();
    let mut tables = BTreeMap::new();
    indices
        .take(CULPRITS_LISTED)
        .filter_map(|i| {
            let address = *found.addresses.get(i)?;
            let end = address.saturating_add(page_bytes);
            let mut culprit = CulpritPage {
                address: format!("{address:#x}"),
                home_node: found.home[i],
                away_node: found.away[i],
                symbols: Vec::new(),
                symbol_details: Vec::new(),
                object: None,
            };
            let Some(placed) = objects.object_at(address, end) else {
                culprit.object = Some("no ELF object (heap or anonymous memory)".into());
                return Some(culprit);
            };
            culprit.object = Some(placed.source.shown.clone());
            let symbols = tables.entry(placed.path.clone()).or_insert_with(|| {
                placed
                    .source
                    .image_and_symbols()
                    .map(|(_, table)| data_symbols(&table.symbols, placed.bias))
                    .unwrap_or_default()
            });
            let on_page: Vec<_> = symbols
                .iter()
                .filter(|s| !s.tls && s.address < end && s.address.saturating_add(s.size) > address)
                .collect();
            for s in on_page.iter().take(SYMBOLS_LISTED) {
                culprit.symbols.push(s.name.clone());
                culprit
                    .symbol_details
                    .push(format!("{} ({}, {} bytes)", s.name, s.section, s.size));
            }
            if on_page.len() > SYMBOLS_LISTED {
                culprit
                    .symbol_details
                    .push(format!("and {} more", on_page.len() - SYMBOLS_LISTED));
            }
            Some(culprit)
        })
        .collect()
}
