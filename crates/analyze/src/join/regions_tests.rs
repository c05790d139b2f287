//! DAMON's hot remote regions joined with the cache-line findings.

use numasleuth_model::hotpages::{HotRemoteRegion, RegionName};
use numasleuth_model::process::MemoryKind;

use super::*;
use crate::findings::Severity;
use crate::hotpages::HOT_REMOTE_MEMORY;

fn region(start: u64, kind: MemoryKind, symbols: &[&str]) -> HotRemoteRegion {
    HotRemoteRegion {
        start,
        end: start + 4096,
        access_percent: 85.0,
        nodes: vec![1],
        resident_bytes: 4096,
        remote_bytes: 4096,
        thread_nodes: vec![0],
        name: Some(RegionName {
            kind: Some(kind),
            object: Some("/victim".into()),
            section: Some(".bss".into()),
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
            ..RegionName::default()
        }),
    }
}

fn finding(id: &'static str, evidence: Vec<Evidence>) -> Finding {
    Finding {
        id,
        severity: Severity::Warning,
        title: format!("{id} title"),
        evidence,
        remedy: String::new(),
        incident: None,
        explains: Vec::new(),
        confidence: None,
    }
}

fn cause(address: u64) -> Finding {
    let mut f = finding(
        HOT_REMOTE_GLOBAL,
        vec![Evidence::new("move_pages", "page").with("line_address", address)],
    );
    f.severity = Severity::Critical;
    f.explains = SYMPTOMS.to_vec();
    f
}

fn texts(f: &Finding) -> String {
    f.evidence_text()
}

#[test]
fn a_region_holding_the_hot_line_agrees_in_one_finding() {
    let mut findings = vec![
        cause(0x4bc380),
        finding(HOT_REMOTE_MEMORY, Vec::new()),
        finding(STATIC_DATA_REMOTE, Vec::new()),
    ];
    with_hot_regions(
        &mut findings,
        &[region(0x4bc000, MemoryKind::Bss, &["nil_root", "log_level"])],
    );
    let text = texts(&findings[0]);
    assert!(
        text.contains("DAMON agrees: the region 0x4bc000-0x4bd000 holding the line was accessed in 85%"),
        "{text}"
    );
    assert!(findings[0].explains.contains(&HOT_REMOTE_MEMORY));
    assert!(
        texts(&findings[1]).contains("the same page as hot-remote-global above"),
        "{}",
        texts(&findings[1])
    );
    let static_text = texts(&findings[2]);
    assert!(static_text.contains("DAMON found these symbols' pages hot and remote: nil_root, log_level"));
    // The line is the cause: the region does not claim static-data-remote.
    assert!(findings[1].explains.is_empty());
}

#[test]
fn without_a_hot_line_a_hot_static_region_explains_static_data_remote() {
    let mut findings = vec![
        finding(STATIC_DATA_REMOTE, Vec::new()),
        finding(HOT_REMOTE_MEMORY, Vec::new()),
    ];
    with_hot_regions(&mut findings, &[region(0x4bc000, MemoryKind::Bss, &["nil_root"])]);
    assert_eq!(findings[1].explains, vec![STATIC_DATA_REMOTE]);
    assert!(
        texts(&findings[0]).contains("explained by hot-remote-memory above"),
        "{}",
        texts(&findings[0])
    );
    let mut diagnosis = crate::findings::Diagnosis::default();
    diagnosis.ran(crate::doctor::CheckId::ProcessPlacement, findings);
    diagnosis.rank();
    assert_eq!(
        diagnosis.findings[0].id, HOT_REMOTE_MEMORY,
        "the cause before its symptom"
    );
}

#[test]
fn a_heap_region_or_one_elsewhere_changes_nothing() {
    let mut findings = vec![cause(0x9000), finding(STATIC_DATA_REMOTE, Vec::new())];
    let before = findings.clone();
    with_hot_regions(&mut findings, &[region(0x4bc000, MemoryKind::Heap, &[])]);
    assert_eq!(findings, before);
    with_hot_regions(&mut findings, &[]);
    assert_eq!(findings, before);
}
