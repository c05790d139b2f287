//! `doctor` for people: findings ranked by severity, each with its
//! evidence, remedy and the incident it guards against; then what ran and
//! what could not. "Clean" is said only when every check could read all
//! it needed.

use std::collections::BTreeSet;

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::{Diagnosis, Severity};

/// Unread files shown per partial check; the JSON has them all.
const UNREAD_SHOWN: usize = 3;

/// Checks that could not read all their inputs (partial, or skipped as
/// unreadable), each once, in the order of their ids.
pub fn incomplete(diagnosis: &Diagnosis) -> BTreeSet<&'static str> {
    diagnosis.incomplete().map(CheckId::as_str).collect()
}

/// Check ids as a person reads them: `a, b, c`.
pub fn joined(ids: &[CheckId]) -> String {
    ids.iter().map(|id| id.as_str()).collect::<Vec<_>>().join(", ")
}

/// What an empty list of findings means.
pub fn empty_verdict(diagnosis: &Diagnosis) -> String {
    match incomplete(diagnosis).len() {
        0 => "No findings: every check that ran is clean.".into(),
        n => format!(
            "No findings in what could be read, but {n} {} could not read all their inputs (listed below): \
             this is not a clean bill.",
            if n == 1 { "check" } else { "checks" }
        ),
    }
}

pub fn render(headline: &str, diagnosis: &Diagnosis, color: bool) -> String {
    let mut out = format!("{headline}\n\n");
    if diagnosis.findings.is_empty() {
        out.push_str(&empty_verdict(diagnosis));
        out.push('\n');
    }
    for finding in &diagnosis.findings {
        let label = format!("{:<8}", finding.severity.as_str().to_uppercase());
        out.push_str(&format!(
            "{}  {}  [{}]\n",
            paint(&label, finding.severity, color),
            finding.title,
            finding.id
        ));
        for line in &finding.evidence {
            out.push_str(&format!("    evidence: {}\n", line.text));
        }
        out.push_str(&format!("    remedy:   {}\n", finding.remedy));
        if let Some(incident) = finding.incident {
            out.push_str(&format!("    guards against: {incident}\n"));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "{} checks run: {}\n",
        diagnosis.checks_run.len(),
        joined(&diagnosis.checks_run)
    ));
    for skipped in &diagnosis.checks_skipped {
        let unreadable = if skipped.unreadable { " (unreadable)" } else { "" };
        out.push_str(&format!("skipped {}{unreadable}: {}\n", skipped.id, skipped.why));
    }
    let incomplete = incomplete(diagnosis);
    if !incomplete.is_empty() {
        out.push_str(&format!(
            "{} {} could not read all their inputs: {}\n",
            incomplete.len(),
            if incomplete.len() == 1 { "check" } else { "checks" },
            incomplete.iter().copied().collect::<Vec<_>>().join(", ")
        ));
    }
    for partial in &diagnosis.checks_partial {
        for unread in partial.unread.iter().take(UNREAD_SHOWN) {
            out.push_str(&format!("partial {}: could not read {unread}\n", partial.id));
        }
        if partial.unread.len() > UNREAD_SHOWN {
            out.push_str(&format!(
                "partial {}: … and {} more unread file(s) (see --json)\n",
                partial.id,
                partial.unread.len() - UNREAD_SHOWN
            ));
        }
    }
    out
}

fn paint(text: &str, severity: Severity, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let code = match severity {
        Severity::Info => "36",
        Severity::Warning => "33",
        Severity::Critical => "1;31",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}
