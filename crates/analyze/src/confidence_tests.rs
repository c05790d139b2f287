use super::*;
use crate::stats::summarize;

fn finding(severity: Severity) -> Finding {
    Finding {
        id: "test",
        severity,
        confidence: None,
        title: "remote is slow".into(),
        evidence: vec![Evidence::new("measured:mem", "measured")],
        remedy: String::new(),
        incident: None,
        explains: Vec::new(),
    }
}

#[test]
fn the_widest_spread_and_fewest_samples_decide() {
    let tight = summarize(&[100.0, 101.0, 99.0, 100.0, 100.0]).unwrap();
    let wide = summarize(&[100.0, 150.0, 60.0, 100.0]).unwrap();
    let c = Confidence::of([&tight, &wide]).unwrap();
    assert_eq!(c.samples, 4);
    assert!((c.spread_pct - wide.relative_spread() * 100.0).abs() < 1e-9);
    assert!(!c.holds);
    assert!(Confidence::of([&tight]).unwrap().holds);
    assert_eq!(Confidence::of(std::iter::empty::<&Summary>()), None);
}

#[test]
fn a_finding_that_does_not_hold_is_info_and_says_so() {
    let wide = summarize(&[100.0, 150.0, 60.0, 100.0]).unwrap();
    let c = Confidence::of([&wide]);
    let f = qualify(finding(Severity::Critical), c, "measured:mem");
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(
        f.title,
        format!("remote is slow (inconclusive: spread {:.0}%)", c.unwrap().spread_pct)
    );
    assert_eq!(f.evidence.len(), 2);
    assert_eq!(f.evidence[1].values.float("spread_pct"), Some(c.unwrap().spread_pct));
    assert!(
        f.evidence[1].text.contains("it would be critical"),
        "{}",
        f.evidence[1].text
    );

    let tight = summarize(&[100.0, 101.0, 99.0]).unwrap();
    let kept = qualify(finding(Severity::Warning), Confidence::of([&tight]), "measured:mem");
    assert_eq!(
        (kept.severity, kept.title.as_str(), kept.evidence.len()),
        (Severity::Warning, "remote is slow", 1)
    );
    assert!(kept.holds());
    assert!(finding(Severity::Warning).holds(), "an unmeasured finding holds");
}

#[test]
fn json_carries_the_confidence_only_when_measured() {
    let plain = serde_json::to_value(finding(Severity::Info)).unwrap();
    assert!(plain.get("confidence").is_none(), "{plain}");
    let tight = summarize(&[100.0, 101.0, 99.0]).unwrap();
    let measured = serde_json::to_value(qualify(finding(Severity::Info), Confidence::of([&tight]), "m")).unwrap();
    let c = &measured["confidence"];
    assert_eq!(c["samples"], 3);
    assert_eq!(c["holds"], true);
    assert_eq!(c["spread_limit_pct"], 20.0);
    assert!(c["spread_pct"].as_f64().is_some(), "{c}");
}
