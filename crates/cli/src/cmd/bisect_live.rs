//! The live side of `bisect`: moving real pages through the journalled
//! session, reading the user's metric command, Ctrl-C, and naming the
//! symbols on the culprit page.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use numasleuth_analyze::bisect::{Candidates, Experiment, Readings, Verdict};
use numasleuth_analyze::lines::data_symbols;
use numasleuth_analyze::runs::metric::first_number;
use numasleuth_change::{ChangeError, PageSession};
use numasleuth_kernel::Root;
use numasleuth_measure::shell_metric::run_shell;
use numasleuth_report::bisect_json::CulpritJson;
use numasleuth_symbols::ProcessObjects;

/// How often a settle wait checks for an interrupt.
const SETTLE_CHECK: Duration = Duration::from_millis(50);
/// Culprit pages listed one by one (a `together` verdict may hold many).
const CULPRITS_LISTED: usize = 64;
/// Symbols named per page; the count says how many more.
const SYMBOLS_LISTED: usize = 32;
/// While the baseline settles, the metric is read this often to time how
/// often its value changes (its period).
const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// Readings kept to time the period (a long --settle reads no more).
const PROBE_READINGS_MAX: usize = 600;
/// Readings are never spaced further apart than this, whatever the period.
const SPACING_MAX: Duration = Duration::from_secs(60);

/// Why the search stopped.
#[derive(Debug)]
pub enum Stop {
    Interrupted,
    Metric(String),
    Pages(ChangeError),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Interrupted => f.write_str("interrupted"),
            Stop::Metric(why) => f.write_str(why),
            Stop::Pages(e) => write!(f, "moving pages failed: {e}"),
        }
    }
}

impl Stop {
    pub fn into_error(self) -> anyhow::Error {
        anyhow::anyhow!("{self}")
    }
}

fn last_lines(tail: &[String]) -> String {
    let shown: Vec<&str> = tail.iter().rev().take(3).rev().map(String::as_str).collect();
    if shown.is_empty() {
        "it printed nothing".into()
    } else {
        format!("its last lines: {}", shown.join(" | "))
    }
}

/// One reading: the first number of the last line of output holding one.
pub fn read_metric(command: &str, timeout: Duration, cancel: &AtomicBool) -> Result<f64, Stop> {
    let has_number = |line: &str| first_number(line).is_some();
    let run = run_shell(command, timeout, cancel, &has_number).map_err(|e| Stop::Metric(e.to_string()))?;
    if run.cancelled {
        return Err(Stop::Interrupted);
    }
    let shown = format!("the metric command `{command}`");
    if run.timed_out {
        return Err(Stop::Metric(format!(
            "{shown} did not finish within {} ms (--metric-timeout) and was killed",
            timeout.as_millis()
        )));
    }
    if run.exit.code != Some(0) {
        let how = match (run.exit.code, run.exit.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "an unknown status".into(),
        };
        return Err(Stop::Metric(format!(
            "{shown} failed ({how}); {}",
            last_lines(&run.output.tail)
        )));
    }
    run.output
        .last_match
        .as_ref()
        .and_then(|(_, line)| first_number(line))
        .ok_or_else(|| Stop::Metric(format!("{shown} printed no number; {}", last_lines(&run.output.tail))))
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
    /// From `stop_on_signals_until_undone`.
    pub interrupt: numasleuth_model::stop::Stop,
    /// What the metric did while the baseline settled; `None` until then.
    pub probe: Option<Probe>,
}

/// The metric read every [`PROBE_INTERVAL`] while the baseline settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub readings: usize,
    pub over: Duration,
    /// The median time between changes of its value; `None` when it
    /// changed fewer than twice.
    pub period: Option<Duration>,
}

impl Probe {
    /// How far apart a step's readings are taken: one period, so each
    /// reading can see a new value.
    pub fn spacing(&self) -> Duration {
        self.period.unwrap_or(Duration::ZERO).min(SPACING_MAX)
    }
}

impl Live<'_> {
    /// Ctrl-C, SIGTERM or SIGHUP (the shared stop token, set so that no
    /// signal exits before every page is back) ends the search here.
    fn check_interrupt(&self) -> Result<(), Stop> {
        if self.interrupt.requested() {
            return Err(Stop::Interrupted);
        }
        Ok(())
    }

    /// Waits `duration`, checking for an interrupt every [`SETTLE_CHECK`].
    fn wait(&self, duration: Duration) -> Result<(), Stop> {
        let start = Instant::now();
        while start.elapsed() < duration {
            self.check_interrupt()?;
            std::thread::sleep(SETTLE_CHECK.min(duration.saturating_sub(start.elapsed())));
        }
        Ok(())
    }

    /// One reading of the metric command, cancelled by an interrupt.
    fn read(&self) -> Result<f64, Stop> {
        read_metric(self.metric_cmd, self.metric_timeout, &self.interrupt.flag())
    }
}

impl Experiment for Live<'_> {
    type Error = Stop;

    fn move_away(&mut self, pages: Range<usize>) -> Result<u64, Stop> {
        self.check_interrupt()?;
        self.sets_moved += 1;
        let moved = self
            .session
            .send_away(self.root, &self.addresses[pages])
            .map_err(Stop::Pages)?;
        Ok(moved.verified)
    }

    fn move_back(&mut self, pages: Range<usize>) -> Result<(), Stop> {
        // Runs even after an interrupt: a set is never left away.
        self.session
            .bring_back(self.root, &self.addresses[pages])
            .map(|_| ())
            .map_err(Stop::Pages)
    }

    fn measure(&mut self) -> Result<Readings, Stop> {
        let spacing = match self.probe {
            Some(probe) => {
                self.wait(self.settle)?;
                probe.spacing()
            }
            None => {
                let probe = self.probe_period()?;
                self.probe = Some(probe);
                probe.spacing()
            }
        };
        let mut values = Vec::with_capacity(self.rounds as usize);
        for round in 0..self.rounds {
            if round > 0 {
                self.wait(spacing)?;
            }
            self.check_interrupt()?;
            values.push(self.read()?);
        }
        Readings::new(values)
            .ok_or_else(|| Stop::Metric("the metric command printed a number that is not finite".into()))
    }
}

impl Live<'_> {
    /// The baseline's settle, spent reading the metric every
    /// [`PROBE_INTERVAL`] to time how often its value changes.
    fn probe_period(&self) -> Result<Probe, Stop> {
        let start = Instant::now();
        let mut samples: Vec<(u64, f64)> = Vec::new();
        while start.elapsed() + PROBE_INTERVAL <= self.settle && samples.len() < PROBE_READINGS_MAX {
            self.check_interrupt()?;
            let value = self.read()?;
            samples.push((start.elapsed().as_nanos() as u64, value));
            let next = PROBE_INTERVAL.saturating_mul(samples.len() as u32);
            self.wait(next.saturating_sub(start.elapsed()))?;
        }
        self.wait(self.settle.saturating_sub(start.elapsed()))?;
        Ok(Probe {
            readings: samples.len(),
            over: Duration::from_nanos(samples.last().map_or(0, |s| s.0)),
            period: numasleuth_analyze::bisect::period_ns(&samples).map(Duration::from_nanos),
        })
    }
}

/// The culprit page(s) with the data symbols on them.
pub fn culprits(verdict: &Verdict, found: &Candidates, objects: &ProcessObjects, page_bytes: u64) -> Vec<CulpritJson> {
    let indices = verdict.blamed();
    let mut tables = BTreeMap::new();
    indices
        .take(CULPRITS_LISTED)
        .filter_map(|i| {
            let address = *found.addresses.get(i)?;
            let end = address.saturating_add(page_bytes);
            let mut culprit = CulpritJson {
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
