//! The join on observations shaped like the database incident's: a global
//! in .bss written by threads on node 1 while its page is on node 0.

use std::collections::BTreeMap;

use numasleuth_model::process::{Accuracy, MappingUsage, MemoryKind, ProcessModel};
use numasleuth_parse::procfs::maps::Perms;
use numasleuth_parse::IdList;

use super::*;
use crate::hotlines::{false_sharing, findings as line_findings, rank, AccessKind, Tally, Touch};

const BSS: std::ops::Range<u64> = 0x5000..0x4a000;
const GLOBAL: u64 = 0x5140;

fn touch(tid: u32, node: u32, address: u64, access: AccessKind) -> Touch {
    Touch {
        tid,
        cpu: Some(tid),
        node: Some(node),
        address,
        access,
    }
}

/// Two workers on `node` read-modify-write `GLOBAL` 100 times each; one
/// reads a private line 30 times.
fn sample(node: u32) -> (Vec<NamedLine>, u64) {
    let mut t = Tally::default();
    for tid in [11, 12] {
        for _ in 0..100 {
            t.sample_with(&[touch(tid, node, GLOBAL, AccessKind::ReadModifyWrite)]);
        }
    }
    for _ in 0..30 {
        t.sample_with(&[touch(11, node, 0x7000, AccessKind::Read)]);
    }
    let symbols = vec![("nil_root".to_string(), 0..8)];
    let lines = rank(&t, 8)
        .into_iter()
        .map(|line| {
            let on = if line.address == GLOBAL & !63 {
                symbols.clone()
            } else {
                Vec::new()
            };
            let (symbol_use, is_false) = false_sharing(&t.lines[&line.address], &on);
            NamedLine {
                symbols: on.into_iter().map(|(n, _)| n).collect(),
                region: "/prog".into(),
                symbol_use,
                false_sharing: is_false,
                line,
            }
        })
        .collect();
    (lines, t.accesses())
}

/// The ranked lines of `t`, each given `symbols` and `region` but no
/// per-symbol use.
fn unnamed(t: &Tally, symbols: &[&str], region: &str) -> Vec<NamedLine> {
    rank(t, 4)
        .into_iter()
        .map(|line| NamedLine {
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
            region: region.into(),
            symbol_use: Vec::new(),
            false_sharing: false,
            line,
        })
        .collect()
}

fn bss_mapping(on_node: u32) -> MappingUsage {
    MappingUsage {
        start: BSS.start,
        end: BSS.end,
        kind: MemoryKind::Bss,
        object: Some("/prog".into()),
        section: Some(".bss".into()),
        perms: Perms {
            read: true,
            write: true,
            exec: false,
            shared: false,
        },
        policy: None,
        pages_by_node: BTreeMap::from([(on_node, 69)]),
        counted_pages_by_node: BTreeMap::from([(on_node, 69)]),
        hinting_fault_pages: 0,
        page_size_bytes: 4096,
        accuracy: Accuracy::PerPage,
    }
}

fn model(page_node: u32, thread_node: u32) -> ProcessModel {
    ProcessModel {
        pid: 42,
        comm: "prog".into(),
        state: 'R',
        kernel_thread: false,
        program: Some("/prog".into()),
        threads: Vec::new(),
        thread_nodes: IdList::new(vec![thread_node]),
        mappings: vec![bss_mapping(page_node)],
        mappings_total: 1,
        mappings_omitted: 0,
        bytes_by_node: BTreeMap::new(),
        bytes_by_kind: BTreeMap::new(),
        objects: Vec::new(),
        policies: Vec::new(),
        per_page_static: true,
        notes: Vec::new(),
    }
}

fn clues<'a>(
    lines: &'a [NamedLine],
    pages: &'a [LinePage],
    model: Option<&'a ProcessModel>,
    accesses: u64,
) -> Clues<'a> {
    Clues {
        pid: 42,
        model,
        lines,
        pages,
        accesses,
        duration_s: 1.0,
    }
}

fn page(node: u32) -> Vec<LinePage> {
    vec![LinePage {
        line_address: GLOBAL & !63,
        residency: Residency::Node(node),
    }]
}

#[test]
fn a_global_written_from_node_1_on_a_node_0_page_is_named_with_both_nodes() {
    let (lines, accesses) = sample(1);
    let m = model(0, 1);
    let pages = page(0);
    let found = hot_remote(&clues(&lines, &pages, Some(&m), accesses));
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.id, HOT_REMOTE_GLOBAL);
    assert_eq!(f.severity, Severity::Critical, "remote writes are the incident");
    assert!(
        f.title.starts_with("nil_root (.bss of /prog) is on node 0"),
        "{}",
        f.title
    );
    assert!(f.title.contains("threads on node 1 write it"), "{}", f.title);
    let text = f.evidence_text();
    assert!(text.contains("from other nodes 200 writes and 200 reads"), "{text}");
    assert!(text.contains("200 of 230 sampled accesses"), "{text}");
    assert!(
        f.remedy.contains("--symbol nil_root --to-node 1 --apply"),
        "{}",
        f.remedy
    );
    assert!(f.remedy.contains("bisect -p 42 --section .bss"), "{}", f.remedy);
    assert_eq!(f.explains, SYMPTOMS.to_vec());
}

#[test]
fn a_local_page_or_an_unknown_one_raises_nothing() {
    let (lines, accesses) = sample(1);
    let m = model(1, 1);
    let local = page(1);
    assert!(hot_remote(&clues(&lines, &local, Some(&m), accesses)).is_empty());
    let unknown = vec![LinePage {
        line_address: GLOBAL & !63,
        residency: Residency::NotYetTouched,
    }];
    assert!(hot_remote(&clues(&lines, &unknown, Some(&m), accesses)).is_empty());
    assert!(hot_remote(&clues(&lines, &[], Some(&m), accesses)).is_empty());
}

#[test]
fn a_page_shared_evenly_is_not_remote_and_reads_alone_are_a_warning() {
    // Half the accesses from each node: no better home for one page.
    let mut t = Tally::default();
    for (tid, node) in [(11, 0), (12, 1)] {
        for _ in 0..50 {
            t.sample_with(&[touch(tid, node, GLOBAL, AccessKind::ReadModifyWrite)]);
        }
    }
    let lines = unnamed(&t, &["nil_root"], "/prog");
    let pages = page(0);
    assert!(hot_remote(&clues(&lines, &pages, None, t.accesses())).is_empty());
    // Only read from node 1: a remote read costs latency, not invalidations.
    let mut t = Tally::default();
    for _ in 0..60 {
        t.sample_with(&[touch(11, 1, GLOBAL, AccessKind::Read)]);
    }
    let lines = unnamed(&t, &[], "heap");
    let found = hot_remote(&clues(&lines, &pages, None, t.accesses()));
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].id, found[0].severity), (HOT_REMOTE_LINE, Severity::Warning));
    assert!(
        found[0].title.starts_with("the line in heap is on node 0"),
        "{}",
        found[0].title
    );
    assert!(found[0].remedy.contains("--range 0x5140-0x5180"), "{}", found[0].remedy);
}

#[test]
fn a_cold_line_is_not_hot() {
    let mut t = Tally::default();
    for _ in 0..(MIN_SAMPLES - 1) {
        t.sample_with(&[touch(11, 1, GLOBAL, AccessKind::Write)]);
    }
    let lines = unnamed(&t, &[], "heap");
    assert!(hot_remote(&clues(&lines, &page(0), None, t.accesses())).is_empty());
}

#[test]
fn the_symptoms_cite_the_cause_and_rank_after_it() {
    let (lines, accesses) = sample(1);
    let m = model(0, 1);
    let pages = page(0);
    let c = clues(&lines, &pages, Some(&m), accesses);
    let causes = hot_remote(&c);
    let mut findings = crate::process::findings(&m, &numasleuth_model::Topology::default());
    findings.extend(line_findings(42, &lines, accesses, 1.0));
    let ids: Vec<&str> = findings.iter().map(|f| f.id).collect();
    assert!(ids.contains(&"contended-line"), "{ids:?}");
    cite(&mut findings, &causes);
    name_hot_symbols(&mut findings, &hot_static_symbols(&c));
    let contended = findings.iter().find(|f| f.id == "contended-line").unwrap();
    assert!(
        contended
            .evidence_text()
            .contains("explained by hot-remote-global above"),
        "{}",
        contended.evidence_text()
    );
    let mut diagnosis = crate::findings::Diagnosis::default();
    diagnosis.ran(crate::doctor::CheckId::ProcessPlacement, findings);
    diagnosis.ran(crate::doctor::CheckId::ProcessHotRemoteLines, causes);
    diagnosis.rank();
    assert_eq!(diagnosis.findings[0].id, HOT_REMOTE_GLOBAL, "the cause first");
}

#[test]
fn static_data_remote_names_the_hottest_symbols_sampled_there() {
    let (lines, accesses) = sample(1);
    let m = model(0, 1);
    let c = clues(&lines, &[], Some(&m), accesses);
    assert_eq!(hot_static_symbols(&c), vec![("nil_root".to_string(), 400)]);
    let mut findings = vec![Finding {
        id: "static-data-remote",
        severity: Severity::Warning,
        title: "t".into(),
        evidence: Vec::new(),
        remedy: String::new(),
        incident: None,
        explains: Vec::new(),
        confidence: None,
    }];
    name_hot_symbols(&mut findings, &hot_static_symbols(&c));
    assert_eq!(
        findings[0].evidence_text(),
        "the hottest symbols sampled in this static data: nil_root (400 sampled accesses)"
    );
    assert!(hot_static_symbols(&clues(&lines, &[], None, accesses)).is_empty());
}

/// docs/doctor.md's one ranking rule: severity, then confidence, then
/// whether a finding explains others, then the order the checks ran.
#[test]
fn the_one_ranking_rule() {
    let make = |id: &'static str, severity, holds: Option<bool>, explains: bool| Finding {
        id,
        severity,
        confidence: holds.map(|holds| crate::findings::Confidence {
            spread_pct: if holds { 5.0 } else { 40.0 },
            samples: 5,
            holds,
            spread_limit_pct: 20.0,
        }),
        title: id.into(),
        evidence: Vec::new(),
        remedy: String::new(),
        incident: None,
        explains: if explains { vec!["x"] } else { Vec::new() },
    };
    let mut diagnosis = crate::findings::Diagnosis::default();
    diagnosis.ran(
        crate::doctor::CheckId::ProcessPlacement,
        vec![
            make("info-first-ran", Severity::Info, None, false),
            make("warning-noisy", Severity::Warning, Some(false), true),
            make("warning-symptom", Severity::Warning, None, false),
            make("warning-cause", Severity::Warning, Some(true), true),
            make("critical", Severity::Critical, None, false),
            make("info-second-ran", Severity::Info, None, false),
        ],
    );
    diagnosis.rank();
    let order: Vec<&str> = diagnosis.findings.iter().map(|f| f.id).collect();
    assert_eq!(
        order,
        [
            "critical",
            "warning-cause",
            "warning-symptom",
            "warning-noisy",
            "info-first-ran",
            "info-second-ran"
        ]
    );
}

#[test]
fn a_line_is_cited_by_its_whole_address_not_a_prefix() {
    let (lines, accesses) = sample(1);
    let m = model(0, 1);
    let pages = page(0);
    let causes = hot_remote(&clues(&lines, &pages, Some(&m), accesses));
    let other = Finding {
        id: "contended-line",
        severity: Severity::Warning,
        confidence: None,
        title: "another line".into(),
        evidence: vec![Evidence::new(
            "perf",
            format!("the 64-byte line at {:#x}0 (x)", GLOBAL & !63),
        )],
        remedy: String::new(),
        incident: None,
        explains: Vec::new(),
    };
    let mut findings = vec![other];
    cite(&mut findings, &causes);
    assert_eq!(findings[0].evidence.len(), 1, "{:#?}", findings[0].evidence);
}
