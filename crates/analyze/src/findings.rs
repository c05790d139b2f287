//! Findings: what `doctor` tells a person, each with the numbers it rests
//! on, the exact remedy, and the incident it guards against.

pub use crate::confidence::Confidence;
pub use crate::evidence::Evidence;
use numasleuth_parse::{ReadError, Unread};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// The incidents in DESIGN.md, named once so every finding cites them alike.
pub mod incident {
    pub const REMOTE_GLOBAL: &str =
        "bimodal throughput from a remote global: a hot global's page on the other socket capped a database at 40%";
    pub const CONTENTION: &str =
        "false sharing and lock contention: RMWs on one line went from 29.7 ms (1 thread) to 6,520 ms (80 threads)";
    pub const ZONE_RECLAIM: &str =
        "zone-reclaim latency spikes: a node near its low watermark pushed allocations remote and stalled writes 10-40 ms";
    pub const REMOTE_IRQ: &str = "remote NIC interrupts: IRQs served off the NIC's node cost 30% of throughput";
    pub const INTERCONNECT: &str =
        "starved interconnect: remote bandwidth of 6 GB/s against 46 GB/s local exposed a BIOS snoop-mode setting";
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Stable kebab-case id, listed in the README.
    pub id: &'static str,
    pub severity: Severity,
    /// For a measured finding, how steady its figures were (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    pub title: String,
    /// The numbers, the files they came from, and a sentence for people.
    pub evidence: Vec<Evidence>,
    /// The exact command or setting that fixes it.
    pub remedy: String,
    /// The incident this guards against, when one fits.
    pub incident: Option<&'static str>,
}

impl Finding {
    /// False only for a measured finding whose figures were too noisy to hold.
    pub fn holds(&self) -> bool {
        self.confidence.is_none_or(|c| c.holds)
    }

    /// Every evidence sentence, joined by ` | `: for logs and tests.
    pub fn evidence_text(&self) -> String {
        self.evidence
            .iter()
            .map(|e| e.text.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub id: &'static str,
    pub why: String,
    /// The input exists but could not be read, so whether there is
    /// something to find is unknown. `false` when the input is absent (the
    /// kernel has no such feature: nothing to find) or was not asked for.
    pub unreadable: bool,
}

/// A check that ran on what it could read, and what it could not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partial {
    pub id: &'static str,
    pub unread: Vec<Unread>,
}

/// The outcome of every check: what was found, what ran, what could not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Diagnosis {
    pub findings: Vec<Finding>,
    /// Every check that ran, including the partial ones.
    pub checks_run: Vec<&'static str>,
    pub checks_skipped: Vec<Skipped>,
    /// Checks in `checks_run` that could not read all their inputs: no
    /// finding from them is not a clean bill.
    pub checks_partial: Vec<Partial>,
}

impl Diagnosis {
    pub fn ran(&mut self, id: &'static str, findings: Vec<Finding>) {
        self.checks_run.push(id);
        self.findings.extend(findings);
    }

    /// A check with nothing to judge: its input is absent or was not asked
    /// for.
    pub fn skipped(&mut self, id: &'static str, why: impl Into<String>) {
        self.checks_skipped.push(Skipped {
            id,
            why: why.into(),
            unreadable: false,
        });
    }

    /// A check whose input exists but could not be read.
    pub fn skipped_unreadable(&mut self, id: &'static str, why: impl Into<String>) {
        self.checks_skipped.push(Skipped {
            id,
            why: why.into(),
            unreadable: true,
        });
    }

    /// Skipped for `error`: unreadable unless the file is simply absent.
    pub fn skipped_for(&mut self, id: &'static str, error: &ReadError) {
        if error.is_not_found() {
            self.skipped(id, error.to_string());
        } else {
            self.skipped_unreadable(id, error.to_string());
        }
    }

    /// Checks whose answer is not known: partial, or skipped because their
    /// input could not be read.
    pub fn incomplete(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.checks_partial
            .iter()
            .map(|p| p.id)
            .chain(self.checks_skipped.iter().filter(|s| s.unreadable).map(|s| s.id))
    }

    /// Most severe first; stable within a severity so output is repeatable.
    pub fn rank(&mut self) {
        self.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    }

    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
