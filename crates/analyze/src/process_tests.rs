//! Process findings on models built the way `inspect` builds them: a
//! stream of mappings, section spans, and per-page answers.

use numasleuth_model::process::{Accuracy, MemoryKind, ProcessBuilder, ProcessModel};
use numasleuth_model::symbol::{SectionClass, SectionSpan};
use numasleuth_model::{Cpu, Node, NumaSource, Topology};
use numasleuth_parse::pages::Residency;
use numasleuth_parse::procfs::maps::parse_line as map_line;
use numasleuth_parse::procfs::numa_maps::parse_line as numa_line;
use numasleuth_parse::procfs::process::{ThreadReading, Vma};
use numasleuth_parse::procfs::task::parse_stat;
use numasleuth_parse::IdList;

use super::*;

const EXE: &str = "/opt/victim";

fn topology(nodes: &[&[u32]]) -> Topology {
    Topology {
        numa: NumaSource::Sysfs,
        nodes: nodes
            .iter()
            .enumerate()
            .map(|(id, cpus)| Node {
                id: id as u32,
                cpus: IdList::new(cpus.to_vec()),
                memory_total_bytes: None,
                memory_free_bytes: None,
                hugetlb_bytes: None,
                distances: Vec::new(),
                has_memory: Some(true),
                access: Vec::new(),
            })
            .collect(),
        cpus: nodes
            .iter()
            .enumerate()
            .flat_map(|(node, cpus)| {
                cpus.iter().map(move |&id| Cpu {
                    id,
                    node: Some(node as u32),
                    online: true,
                    ..Cpu::default()
                })
            })
            .collect(),
        ..Topology::default()
    }
}

fn thread(tid: u32, cpu: u32) -> ThreadReading {
    let stat = format!(
        "{tid} (victim) S 1 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 3 0 99 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 {cpu} 0 0"
    );
    ThreadReading {
        stat: parse_stat(&stat).unwrap(),
        allowed_cpus: Some(IdList::parse("0-3").unwrap()),
        allowed_mems: Some(IdList::parse("0-1").unwrap()),
        sched: None,
    }
}

fn vma(maps: &str, numa: &str) -> Vma {
    Vma {
        mapping: map_line(maps).unwrap(),
        numa: Some(numa_line(numa).unwrap()),
    }
}

/// A builder fed `stream` (maps line, numa_maps line), every mapping of
/// the executable, with the sections of `spans` over them.
fn built(spans: &[SectionSpan], stream: &[(&str, &str)]) -> ProcessBuilder {
    let mut builder = ProcessBuilder::new(4096, 100);
    for (maps, numa) in stream {
        let vma = vma(maps, numa);
        let (start, end) = (vma.mapping.start, vma.mapping.end);
        let over: Vec<&SectionSpan> = spans.iter().filter(|s| s.start < end && s.end > start).collect();
        builder.add(&vma, Some(EXE), &over);
    }
    builder
}

fn span(section: &str, class: SectionClass, start: u64, end: u64) -> SectionSpan {
    SectionSpan {
        object: EXE.into(),
        section: section.into(),
        class,
        start,
        end,
    }
}

/// The victim's layout: .text, then a file-backed RW page holding .data
/// and the start of .bss, then the anonymous rest of .bss; heap; stack.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Answers {
    None,
    All,
    /// "Not present" for the anonymous .bss tail, as move_pages says on
    /// some kernels for pages under NUMA-balancing hinting faults, without
    /// pagemap to tell them from untouched pages.
    HideTail,
    /// The same, with pagemap saying they are present: between hinting
    /// faults.
    HintTail,
}

/// `static_node` is where the static pages are; `answers` says what
/// move_pages answered.
pub(crate) fn victim(static_node: u32, cpus: &[u32], answers: Answers, extra: &[(&str, &str)]) -> ProcessModel {
    let threads: Vec<ThreadReading> = cpus
        .iter()
        .enumerate()
        .map(|(i, &c)| thread(4242 + i as u32, c))
        .collect();
    victim_with(static_node, &threads, answers, extra)
}

/// [`victim`] with the threads given as read.
fn victim_with(static_node: u32, threads: &[ThreadReading], answers: Answers, extra: &[(&str, &str)]) -> ProcessModel {
    let spans = [
        span(".text", SectionClass::Text, 0x555555555000, 0x555555556000),
        span(".data", SectionClass::Data, 0x555555558000, 0x555555558100),
        span(".bss", SectionClass::Bss, 0x555555558100, 0x55555555b000),
    ];
    let n = static_node;
    let mut stream = vec![
        (
            "555555555000-555555556000 r-xp 00001000 fe:00 12 /opt/victim".to_string(),
            "555555555000 default file=/opt/victim mapped=1 N0=1 kernelpagesize_kB=4".to_string(),
        ),
        (
            "555555558000-555555559000 rw-p 00003000 fe:00 12 /opt/victim".into(),
            format!("555555558000 default file=/opt/victim anon=1 dirty=1 N{n}=1 kernelpagesize_kB=4"),
        ),
        (
            "555555559000-55555555c000 rw-p 00000000 00:00 0".into(),
            format!("555555559000 default anon=3 dirty=3 N{n}=3 kernelpagesize_kB=4"),
        ),
        (
            "55555555c000-55555557d000 rw-p 00000000 00:00 0 [heap]".into(),
            format!("55555555c000 default heap anon=64 dirty=64 N{n}=64 kernelpagesize_kB=4"),
        ),
        (
            "7ffc9c7d7000-7ffc9c7f8000 rw-p 00000000 00:00 0 [stack]".into(),
            format!("7ffc9c7d7000 default stack anon=3 dirty=3 N{n}=3 kernelpagesize_kB=4"),
        ),
    ];
    stream.extend(extra.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    let mut builder = ProcessBuilder::new(4096, 100);
    for (maps, numa) in &stream {
        let vma = vma(maps, numa);
        let (start, end) = (vma.mapping.start, vma.mapping.end);
        let object = (start < 0x55555555c000).then_some(EXE);
        let over: Vec<&SectionSpan> = spans.iter().filter(|s| s.start < end && s.end > start).collect();
        builder.add(&vma, object, &over);
    }
    if answers != Answers::None {
        for range in builder.pages_to_query() {
            let pages = ((range.end - range.start) / 4096) as usize;
            let tail = range.start == 0x555555559000;
            let status = match answers {
                Answers::HideTail if tail => Residency::NotYetTouched,
                Answers::HintTail if tail => Residency::HintingFault,
                _ => Residency::Node(n),
            };
            builder.set_page_nodes(range.start, vec![status; pages]);
        }
    }
    builder.finish(
        &threads[0].stat,
        Some(EXE.into()),
        threads,
        &topology(&[&[0, 1], &[2, 3]]),
        Vec::new(),
    )
}

#[path = "process_tests_placement.rs"]
mod placement;

#[test]
fn the_incident_static_data_on_node_1_threads_on_node_0() {
    let model = victim(1, &[0, 1, 1], Answers::All, &[]);
    assert_eq!(model.thread_nodes.ids(), [0]);
    let bss: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.section.as_deref() == Some(".bss"))
        .collect();
    assert_eq!(
        bss.len(),
        2,
        "file-backed part and anonymous tail: {:#?}",
        model.mappings
    );
    assert!(bss
        .iter()
        .all(|m| m.accuracy == Accuracy::PerPage && m.kind == MemoryKind::Bss));
    assert_eq!(bss[1].pages_by_node.get(&1), Some(&2));
    // The third page of the anonymous mapping is past .bss: plain anon.
    assert!(model
        .mappings
        .iter()
        .any(|m| m.kind == MemoryKind::Anon && m.start == 0x555555559000));
    assert_eq!(model.remote_bytes(), Some(model.total_bytes() - 4096));
    let found = findings(&model, &topology(&[&[0, 1], &[2, 3]]));
    let f = found
        .iter()
        .find(|f| f.id == "static-data-remote")
        .expect("static-data-remote");
    assert_eq!(
        f.title,
        "writable static data of /opt/victim is on node 1 while all 3 threads run on node 0"
    );
    assert!(
        f.remedy
            .contains("numasleuth move -p 4242 --section .bss --to-node 0 --apply"),
        "{}",
        f.remedy
    );
    assert!(f.remedy.contains("numactl --cpunodebind=0 --membind=0"));
    assert!(
        f.evidence
            .iter()
            .any(|e| e.text.contains(".bss: node 1: 3 pages") && e.text.contains("per page")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn static_data_local_is_clean() {
    let model = victim(0, &[0, 1], Answers::All, &[]);
    assert_eq!(model.remote_bytes(), Some(0));
    assert!(findings(&model, &topology(&[&[0, 1], &[2, 3]])).is_empty());
}

#[test]
fn without_page_answers_counts_are_per_mapping_and_said_so() {
    let model = victim(1, &[0], Answers::None, &[]);
    assert!(!model.per_page_static);
    assert!(model.notes.iter().any(|n| n.contains("per page")));
    let data_vma: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.start >= 0x555555558000 && m.end <= 0x555555559000)
        .collect();
    assert!(data_vma.iter().all(|m| m.accuracy == Accuracy::PerVma));
    let f = static_data_remote(&model).expect("still found per mapping");
    assert!(f.evidence.iter().any(|e| e.text.contains("per mapping")));
}

#[test]
fn threads_spread_memory_on_one_node() {
    let big = [(
        "7f0000000000-7f0000400000 rw-p 00000000 00:00 0",
        "7f0000000000 default anon=1024 dirty=1024 N0=1024 kernelpagesize_kB=4",
    )];
    let model = victim(0, &[0, 2], Answers::All, &big);
    let found = findings(&model, &topology(&[&[0, 1], &[2, 3]]));
    let f = found
        .iter()
        .find(|f| f.id == "threads-spread-memory-local")
        .expect("spread");
    assert_eq!(f.title, "threads run on nodes 0-1 while 100% of memory sits on node 0");
    assert!(
        static_data_remote(&model).is_none(),
        "threads on two nodes: no single home"
    );
}

#[test]
fn bind_to_a_node_without_cpus() {
    let bound = [(
        "7f0000000000-7f0000010000 rw-p 00000000 00:00 0",
        "7f0000000000 bind:2 anon=16 dirty=16 N2=16 kernelpagesize_kB=4",
    )];
    let model = victim(0, &[0], Answers::All, &bound);
    let topo = topology(&[&[0, 1], &[2, 3], &[]]);
    let found = policy_binds_cpuless_node(&model, &topo);
    assert_eq!(found.len(), 1);
    assert!(found[0].title.contains("bind:2"));
    assert!(found[0]
        .evidence
        .iter()
        .any(|e| e.text == "node 2 has no CPUs (memory-only node)"));
    assert!(found[0].remedy.contains("--membind=0-1"));
    // Node 1 has CPUs, but none the process may use.
    let mut model = victim(
        0,
        &[0],
        Answers::All,
        &[(bound[0].0, "7f0000000000 bind:1 anon=16 N1=16 kernelpagesize_kB=4")],
    );
    for t in &mut model.threads {
        t.allowed_cpus = Some(IdList::parse("0-1").unwrap());
    }
    let found = policy_binds_cpuless_node(&model, &topology(&[&[0, 1], &[2, 3]]));
    assert!(
        found[0].evidence[1]
            .text
            .contains("outside the process's allowed CPUs 0-1"),
        "{:?}",
        found[0].evidence
    );
}

#[test]
fn interleave_is_reported_as_info() {
    let spread = [(
        "7f0000000000-7f0000010000 rw-p 00000000 00:00 0",
        "7f0000000000 interleave:0-1 anon=16 dirty=16 N0=8 N1=8 kernelpagesize_kB=4",
    )];
    let model = victim(0, &[0], Answers::All, &spread);
    let two_nodes = topology(&[&[0, 1], &[2, 3]]);
    let f = interleave_in_use(&model, &two_nodes).unwrap();
    assert_eq!(f.severity, Severity::Info);
    assert!(f.evidence[0]
        .text
        .starts_with("policy interleave:0-1 on 1 mapping(s): node 0: 32 KiB, node 1: 32 KiB"));
}

#[test]
fn interleaving_over_one_node_is_no_finding() {
    // `numactl --interleave=all` on a one-node machine: interleave:0.
    let one = [(
        "7f0000000000-7f0000010000 rw-p 00000000 00:00 0",
        "7f0000000000 interleave:0 anon=16 dirty=16 N0=16 kernelpagesize_kB=4",
    )];
    let model = victim(0, &[0], Answers::All, &one);
    assert!(interleave_in_use(&model, &topology(&[&[0, 1]])).is_none());
    // Nor on two nodes when the policy names only one of them.
    assert!(interleave_in_use(&model, &topology(&[&[0, 1], &[2, 3]])).is_none());
}

#[test]
fn kinds_and_groups_are_totalled_once() {
    let model = victim(0, &[0], Answers::All, &[]);
    let kinds = &model.bytes_by_kind;
    assert_eq!(kinds[&MemoryKind::Heap][&0], 64 * 4096);
    assert_eq!(kinds[&MemoryKind::Stack][&0], 3 * 4096);
    assert_eq!(kinds[&MemoryKind::Text][&0], 4096);
    let static_bytes: u64 = [MemoryKind::Data, MemoryKind::Bss]
        .iter()
        .filter_map(|k| kinds.get(k))
        .map(|c| c.values().sum::<u64>())
        .sum();
    assert_eq!(static_bytes, 3 * 4096, "the shared .data/.bss page is counted once");
    assert_eq!(model.total_bytes(), (1 + 1 + 3 + 64 + 3) * 4096);
}

#[test]
fn pages_move_pages_cannot_see_fall_back_to_numa_maps() {
    let model = victim(1, &[0], Answers::HideTail, &[]);
    assert!(!model.per_page_static);
    assert!(
        model
            .notes
            .iter()
            .any(|n| n.starts_with("move_pages saw 0 of the 3 resident pages")),
        "{:?}",
        model.notes
    );
    let tail: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.start >= 0x555555559000 && m.end <= 0x55555555c000)
        .collect();
    assert!(tail.iter().all(|m| m.accuracy == Accuracy::PerVma));
    assert_eq!(tail.iter().map(|m| m.resident_pages()).sum::<u64>(), 3);
    let f = static_data_remote(&model).unwrap();
    assert!(
        f.evidence
            .iter()
            .any(|e| e.text.contains(".bss: node 1: 4 pages") && e.text.contains("per mapping")),
        "{:?}",
        f.evidence
    );
}

/// RELRO (.data.rel.ro, mapped r--p after relocation) on the far node does
/// not keep the finding alive once the writable .bss is local: read-only
/// pages cause no remote invalidations. (Seen in the QEMU guest after
/// `move --section .bss`: glibc's static RELRO outnumbered the .bss.)
#[test]
fn read_only_relro_is_not_writable_static_data() {
    let spans = [
        span(".data.rel.ro", SectionClass::Data, 0x555555557000, 0x55555555c000),
        span(".bss", SectionClass::Bss, 0x55555555c000, 0x55555555e000),
    ];
    let stream = [
        (
            "555555557000-55555555c000 r--p 00002000 fe:00 12 /opt/victim",
            "555555557000 default file=/opt/victim anon=5 dirty=5 N1=5 kernelpagesize_kB=4",
        ),
        (
            "55555555c000-55555555e000 rw-p 00000000 00:00 0",
            "55555555c000 default anon=2 dirty=2 N0=2 kernelpagesize_kB=4",
        ),
    ];
    let builder = built(&spans, &stream);
    let threads = vec![thread(4242, 0), thread(4243, 1)];
    let model = builder.finish(
        &threads[0].stat,
        Some(EXE.into()),
        &threads,
        &topology(&[&[0, 1], &[2, 3]]),
        Vec::new(),
    );
    assert!(
        model
            .mappings
            .iter()
            .any(|m| m.section.as_deref() == Some(".data.rel.ro")),
        "{:#?}",
        model.mappings
    );
    assert!(static_data_remote(&model).is_none());
}
