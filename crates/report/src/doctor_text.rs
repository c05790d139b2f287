//! `doctor` for people: findings ranked by severity, each with its
//! evidence, remedy and the incident it guards against; then what ran and
//! what could not.

use numasleuth_analyze::findings::{Diagnosis, Severity};

pub fn render(headline: &str, diagnosis: &Diagnosis, color: bool) -> String {
    let mut out = format!("{headline}\n\n");
    if diagnosis.findings.is_empty() {
        out.push_str("No findings: every check that ran is clean.\n");
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
            out.push_str(&format!("    evidence: {line}\n"));
        }
        out.push_str(&format!("    remedy:   {}\n", finding.remedy));
        out.push_str(&format!("    guards against: {}\n\n", finding.incident));
    }
    out.push_str(&format!(
        "{} checks run: {}\n",
        diagnosis.checks_run.len(),
        diagnosis.checks_run.join(", ")
    ));
    for skipped in &diagnosis.checks_skipped {
        out.push_str(&format!("skipped {}: {}\n", skipped.id, skipped.why));
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
