//! Findings: what `doctor` tells a person, each with the numbers it rests
//! on, the exact remedy, and the incident it guards against.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "critical" => Some(Severity::Critical),
            _ => None,
        }
    }

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable kebab-case id, listed in the README.
    pub id: &'static str,
    pub severity: Severity,
    pub title: String,
    /// The numbers and the files they came from.
    pub evidence: Vec<String>,
    /// The exact command or setting that fixes it.
    pub remedy: String,
    pub incident: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub id: &'static str,
    pub why: String,
}

/// The outcome of every check: what was found, what ran, what could not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    pub findings: Vec<Finding>,
    pub checks_run: Vec<&'static str>,
    pub checks_skipped: Vec<Skipped>,
}

impl Diagnosis {
    pub fn ran(&mut self, id: &'static str, findings: Vec<Finding>) {
        self.checks_run.push(id);
        self.findings.extend(findings);
    }

    pub fn skipped(&mut self, id: &'static str, why: impl Into<String>) {
        self.checks_skipped.push(Skipped { id, why: why.into() });
    }

    /// Most severe first; stable within a severity so output is repeatable.
    pub fn rank(&mut self) {
        self.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    }

    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
