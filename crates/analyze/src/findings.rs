//! Findings: what `doctor` tells a person, each with the numbers it rests
//! on, the exact remedy, and the incident it guards against.

pub use crate::confidence::Confidence;
pub use crate::evidence::Evidence;
use numasleuth_parse::{ReadError, Unread};
use serde::Serialize;

use crate::doctor::CheckId;

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

/// The incidents of the design notes (docs/incidents.md), named once so
/// every finding cites them alike. Each names its incident there and
/// quotes only figures from there: they were reported, not measured here.
pub mod incident {
    pub const REMOTE_GLOBAL: &str = "the remote-global incident (docs/incidents.md): a database ran at full speed or \
         at 40%, depending on the socket a hot .bss global's page landed on";
    pub const CONTENTION: &str =
        "the contention incident (docs/incidents.md): in the talk it cites, read-modify-writes \
         on one shared line took 29.7 ms with 1 thread and 6,520 ms with 80";
    pub const ZONE_RECLAIM: &str = "the zone-reclaim incident (docs/incidents.md): a node near its low watermark sent \
         allocations to the other node and direct reclaim stalled writes for 10–40 ms";
    pub const REMOTE_IRQ: &str =
        "the remote-NIC incident (docs/incidents.md): NIC interrupts off the NIC's node cost 30% of throughput";
    pub const INTERCONNECT: &str = "the interconnect incident (docs/incidents.md): a measured 6 GB/s remote against \
         46 GB/s local bandwidth exposed a BIOS snoop-mode setting";
    /// Every incident, for the test that checks their figures.
    pub const ALL: [&str; 5] = [REMOTE_GLOBAL, CONTENTION, ZONE_RECLAIM, REMOTE_IRQ, INTERCONNECT];
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
    /// The ids of the findings this one explains: a cause found by joining
    /// observations names the symptoms it accounts for, which rank after
    /// it and cite it (docs/doctor.md, "Ranking").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explains: Vec<&'static str>,
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
    pub id: CheckId,
    pub why: String,
    /// The input exists but could not be read, so whether there is
    /// something to find is unknown. `false` when the input is absent (the
    /// kernel has no such feature: nothing to find) or was not asked for.
    pub unreadable: bool,
}

/// A check that ran on what it could read, and what it could not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partial {
    pub id: CheckId,
    pub unread: Vec<Unread>,
}

/// The outcome of every check: what was found, what ran, what could not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Diagnosis {
    pub findings: Vec<Finding>,
    /// Every check that ran, including the partial ones.
    pub checks_run: Vec<CheckId>,
    pub checks_skipped: Vec<Skipped>,
    /// Checks in `checks_run` that could not read all their inputs: no
    /// finding from them is not a clean bill.
    pub checks_partial: Vec<Partial>,
}

impl Diagnosis {
    pub fn ran(&mut self, id: CheckId, findings: Vec<Finding>) {
        self.checks_run.push(id);
        self.findings.extend(findings);
    }

    /// A check with nothing to judge: its input is absent or was not asked
    /// for.
    pub fn skipped(&mut self, id: CheckId, why: impl Into<String>) {
        self.checks_skipped.push(Skipped {
            id,
            why: why.into(),
            unreadable: false,
        });
    }

    /// A check whose input exists but could not be read.
    pub fn skipped_unreadable(&mut self, id: CheckId, why: impl Into<String>) {
        self.checks_skipped.push(Skipped {
            id,
            why: why.into(),
            unreadable: true,
        });
    }

    /// Skipped for `error`: unreadable unless the file is simply absent.
    pub fn skipped_for(&mut self, id: CheckId, error: &ReadError) {
        if error.is_not_found() {
            self.skipped(id, error.to_string());
        } else {
            self.skipped_unreadable(id, error.to_string());
        }
    }

    /// Checks whose answer is not known: partial, or skipped because their
    /// input could not be read.
    pub fn incomplete(&self) -> impl Iterator<Item = CheckId> + '_ {
        self.checks_partial
            .iter()
            .map(|p| p.id)
            .chain(self.checks_skipped.iter().filter(|s| s.unreadable).map(|s| s.id))
    }

    /// The one ranking rule (docs/doctor.md, "Ranking"): most severe
    /// first; within a severity, a measurement that holds before one that
    /// does not, then a finding that explains others before those it does
    /// not; otherwise in the order the checks ran, so output is
    /// repeatable.
    pub fn rank(&mut self) {
        self.findings.sort_by_key(|f| {
            (
                std::cmp::Reverse(f.severity),
                std::cmp::Reverse(f.holds()),
                std::cmp::Reverse(!f.explains.is_empty()),
            )
        });
    }

    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
