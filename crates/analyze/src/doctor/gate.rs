//! `doctor --fail-on LEVEL`: whether the diagnosis passes the gate. A
//! finding at or above the level fails it; so does a check that could
//! have raised one but did not read all its input, since "nothing found"
//! is then a guess.

use super::{uncertain_at, CheckId};
use crate::findings::{Diagnosis, Severity};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Pass,
    /// A finding at or above the level.
    Found,
    /// No finding at the level, but these checks could not read all
    /// their inputs.
    Unsure(Vec<CheckId>),
}

/// No threshold always passes.
pub fn gate(diagnosis: &Diagnosis, threshold: Option<Severity>) -> Gate {
    let Some(threshold) = threshold else {
        return Gate::Pass;
    };
    if diagnosis.worst().is_some_and(|worst| worst >= threshold) {
        return Gate::Found;
    }
    let unsure = uncertain_at(diagnosis, threshold);
    if unsure.is_empty() {
        Gate::Pass
    } else {
        Gate::Unsure(unsure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Finding;

    fn finding(severity: Severity) -> Finding {
        Finding {
            id: CheckId::OfflineCpus.as_str(),
            severity,
            confidence: None,
            title: String::new(),
            evidence: Vec::new(),
            remedy: String::new(),
            incident: None,
            explains: Vec::new(),
        }
    }

    #[test]
    fn the_gate_fails_on_a_finding_at_the_level_or_an_unread_check_that_could_raise_one() {
        let mut d = Diagnosis::default();
        d.ran(CheckId::OfflineCpus, vec![finding(Severity::Warning)]);
        assert_eq!(gate(&d, None), Gate::Pass);
        assert_eq!(gate(&d, Some(Severity::Warning)), Gate::Found);
        assert_eq!(gate(&d, Some(Severity::Critical)), Gate::Pass);
        // cpu-less-nodes can say at most Info: unread, it cannot hide a warning.
        d.skipped_unreadable(CheckId::CpuLessNodes, "permission denied");
        assert_eq!(gate(&d, Some(Severity::Critical)), Gate::Pass);
        assert_eq!(gate(&d, Some(Severity::Info)), Gate::Found);
        let mut quiet = Diagnosis::default();
        quiet.skipped_unreadable(CheckId::CpuLessNodes, "permission denied");
        quiet.skipped(CheckId::OfflineCpus, "absent");
        assert_eq!(
            gate(&quiet, Some(Severity::Info)),
            Gate::Unsure(vec![CheckId::CpuLessNodes])
        );
        assert_eq!(gate(&quiet, Some(Severity::Warning)), Gate::Pass);
    }
}
