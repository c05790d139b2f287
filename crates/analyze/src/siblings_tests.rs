//! Suspected siblings on recorded and constructed matrices.

use numasleuth_model::{CacheDomain, Cpu, Topology};
use numasleuth_parse::IdList;

use super::*;

/// The issue's 16-vCPU VM, reconstructed (see the fixture's header).
const ISSUE_MATRIX: &str = include_str!("fixtures/c2c_issue23_16cpu_vm.txt");
/// The same kind of VM, captured: fast pairs that follow the order of
/// measurement (see the fixtures' headers).
const VM16_FORWARD: &str = include_str!("fixtures/c2c_vm16_order_forward.txt");
const VM16_REVERSE: &str = include_str!("fixtures/c2c_vm16_order_reverse.txt");

fn parse_matrix(text: &str) -> Vec<Vec<Option<f64>>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|v| v.parse().ok()).collect())
        .collect()
}

/// `packages` packages of `cores` cores of `threads` threads; CPU ids
/// go package by package, core by core, thread by thread; one L3 per
/// package.
fn machine(packages: u32, cores: u32, threads: u32) -> Topology {
    let per_package = cores * threads;
    let cpus = (0..packages * per_package)
        .map(|id| {
            let first = id / threads * threads;
            Cpu {
                id,
                node: Some(id / per_package),
                online: true,
                package: Some(id / per_package),
                core: Some(id % per_package / threads),
                thread_siblings: Some(IdList::new((first..first + threads).collect())),
                ..Cpu::default()
            }
        })
        .collect();
    let caches = (0..packages)
        .map(|p| CacheDomain {
            level: 3,
            kind: "Unified".into(),
            size_bytes: Some(300 << 20),
            line_size_bytes: Some(64),
            cpus: IdList::new((p * per_package..(p + 1) * per_package).collect()),
        })
        .collect();
    Topology {
        cpus,
        caches,
        ..Topology::default()
    }
}

#[test]
fn the_issue_vm_has_two_undeclared_sibling_pairs() {
    let matrix = parse_matrix(ISSUE_MATRIX);
    assert_eq!((matrix.len(), matrix[0].len()), (16, 16));
    let topo = machine(1, 16, 1);
    let cpus: Vec<u32> = (0..16).collect();
    let found = suspected(&topo, &cpus, &matrix);
    let pairs: Vec<[u32; 2]> = found.iter().map(|s| s.cpus).collect();
    assert_eq!(pairs, [[6, 9], [7, 13]]);
    let seven = &found[1];
    assert_eq!(seven.latency_ns, 24.8);
    assert!((85.0..95.0).contains(&seven.median_ns), "{}", seven.median_ns);
    assert_eq!(seven.kind.to_string(), "shared L3");
    assert_eq!(
        seven.message,
        format!(
            "CPUs 7 and 13 answer in 24.8 ns, like two threads of one core (median {:.0} ns of the other pairs \
             sharing their L3), but the kernel declares them separate cores: on a VM, the vCPUs are likely on \
             sibling hyperthreads; pin latency-critical threads apart",
            seven.median_ns
        )
    );
    let finding = finding(&found).unwrap();
    assert_eq!((finding.id, finding.severity), ("vcpu-siblings", Severity::Warning));
    assert!(finding.title.contains("6↔9, 7↔13"), "{}", finding.title);
    let values = &finding.evidence[1].values;
    assert_eq!(values.get("cpus"), Some(&crate::evidence::Value::List(vec![7, 13])));
    assert_eq!(values.float("latency_ns"), Some(24.8));
    assert_eq!(values.float("median_ns"), Some(seven.median_ns));
    assert_eq!(finding.evidence[1].source, "measured:c2c");
}

#[test]
fn the_same_vm_without_the_fast_pairs_raises_nothing() {
    let mut matrix = parse_matrix(ISSUE_MATRIX);
    for (a, b) in [(7, 13), (6, 9)] {
        (matrix[a][b], matrix[b][a]) = (Some(88.0), Some(88.0));
    }
    let cpus: Vec<u32> = (0..16).collect();
    assert!(suspected(&machine(1, 16, 1), &cpus, &matrix).is_empty());
    assert!(finding(&[]).is_none());
}

/// Two sockets of 4 cores × 2 threads: declared siblings 15 ns, same
/// socket 45 ns, across sockets 120 ns. Nothing is undeclared, and the
/// slower cross-socket pairs must not make one socket's pairs look fast
/// (45 / 120 is below 0.4).
fn bare_metal() -> (Topology, Vec<u32>, Vec<Vec<Option<f64>>>) {
    let topo = machine(2, 4, 2);
    let cpus: Vec<u32> = (0..16).collect();
    let matrix = (0..16u32)
        .map(|a| {
            (0..16u32)
                .map(|b| match (a == b, a / 2 == b / 2, a / 8 == b / 8) {
                    (true, _, _) => None,
                    (_, true, _) => Some(15.0 + f64::from(a % 3)),
                    (_, _, true) => Some(45.0 + f64::from((a + b) % 5)),
                    _ => Some(120.0 + f64::from((a * b) % 7)),
                })
                .collect()
        })
        .collect();
    (topo, cpus, matrix)
}

#[test]
fn declared_smt_siblings_and_a_second_socket_raise_nothing() {
    let (topo, cpus, matrix) = bare_metal();
    assert!(suspected(&topo, &cpus, &matrix).is_empty());
}

#[test]
fn an_undeclared_pair_on_a_two_socket_machine_is_compared_within_its_socket() {
    let (topo, cpus, mut matrix) = bare_metal();
    (matrix[2][5], matrix[5][2]) = (Some(14.0), Some(14.0));
    let found = suspected(&topo, &cpus, &matrix);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].cpus, found[0].kind),
        ([2, 5], PairKind::SharedCache { level: 3 })
    );
    assert!((45.0..50.0).contains(&found[0].median_ns), "{}", found[0].median_ns);
}

#[test]
fn too_few_pairs_or_unmeasured_cells_judge_nothing() {
    let topo = machine(1, 4, 1);
    let small = vec![
        vec![None, Some(10.0), Some(90.0), Some(90.0)],
        vec![Some(10.0), None, Some(90.0), Some(90.0)],
        vec![Some(90.0), Some(90.0), None, Some(90.0)],
        vec![Some(90.0), Some(90.0), Some(90.0), None],
    ];
    // Four CPUs: the fast pair has five others, enough to judge.
    assert_eq!(suspected(&topo, &[0, 1, 2, 3], &small).len(), 1);
    // Three: two others are too few.
    let three: Vec<Vec<Option<f64>>> = small[..3].iter().map(|row| row[..3].to_vec()).collect();
    assert!(suspected(&topo, &[0, 1, 2], &three).is_empty());
    let empty: Vec<Vec<Option<f64>>> = vec![vec![None; 16]; 16];
    let cpus: Vec<u32> = (0..16).collect();
    assert!(suspected(&machine(1, 16, 1), &cpus, &empty).is_empty());
    // A ragged or short matrix is not a panic.
    assert!(suspected(&machine(1, 16, 1), &cpus, &[vec![None, Some(1.0)]]).is_empty());
    let nan = vec![vec![None, Some(f64::NAN)], vec![Some(f64::NAN), None]];
    assert!(suspected(&machine(1, 2, 1), &[0, 1], &nan).is_empty());
}

/// Captured matrices whose fast pairs form a chain (0↔1, 1↔2, …) or a star
/// (15 with everyone): no CPU pairs off, so nothing is reported, and the
/// check says why.
#[test]
fn fast_pairs_that_do_not_pair_off_are_not_siblings() {
    let topo = machine(1, 16, 1);
    let cpus: Vec<u32> = (0..16).collect();
    for (name, text, crowded) in [("forward", VM16_FORWARD, "1-7"), ("reverse", VM16_REVERSE, "15")] {
        let matrix = parse_matrix(text);
        assert_eq!((matrix.len(), matrix[5].len()), (16, 16), "{name}");
        let result = check(&topo, &cpus, &matrix);
        assert!(result.pairs.is_empty(), "{name}: {:?}", result.pairs);
        let note = result.left_out.unwrap_or_else(|| panic!("{name}: no note"));
        assert!(
            note.contains(&format!("CPU(s) {crowded} answered below 0.5×")),
            "{name}: {note}"
        );
        assert!(finding(&result.pairs).is_none());
    }
    // The issue's two pairs share no CPU: both stay.
    let issue = check(&topo, &cpus, &parse_matrix(ISSUE_MATRIX));
    assert_eq!((issue.pairs.len(), issue.left_out), (2, None));
}

#[test]
fn pair_medians_keep_each_median_and_each_gap() {
    let summary = |median: f64| crate::stats::Summary {
        median,
        p10: median - 1.0,
        p90: median + 1.0,
        samples: 9,
    };
    let matrix = vec![vec![None, Some(summary(40.0))], vec![Some(summary(42.5)), None]];
    assert_eq!(pair_medians(&matrix), [vec![None, Some(40.0)], vec![Some(42.5), None]]);
    assert!(pair_medians(&[]).is_empty());
}

/// The issue's matrix rebuilt from raw timings (200 transfers a sample, 5
/// samples a pair), each pair within ±2% of its median except where
/// `noisy` says: those pairs' samples spread from 0.5× to 2× their median.
fn timed_issue_matrix(noisy: &[(usize, usize)]) -> Vec<Vec<Option<crate::stats::Summary>>> {
    let medians = parse_matrix(ISSUE_MATRIX);
    let mut pairs = Vec::new();
    for (a, row) in medians.iter().enumerate() {
        for (b, ns) in row.iter().enumerate().skip(a + 1) {
            let Some(ns) = ns else { continue };
            let factors: &[f64] = if noisy.contains(&(a, b)) {
                &[0.5, 1.0, 2.0, 1.0, 0.6]
            } else {
                &[0.98, 1.0, 1.02, 1.0, 0.99]
            };
            let timing = crate::timing::TimedSamples {
                elapsed_ns: factors.iter().map(|f| (ns * f * 200.0) as u64).collect(),
                timer_overhead_ns: 0.0,
                timer_reads_per_sample: 1,
                ops_per_sample: 200,
            };
            pairs.push((a, b, timing));
        }
    }
    crate::c2c::matrix(medians.len(), pairs, false).latency_ns
}

#[test]
fn steady_sibling_pairs_warn_and_carry_their_confidence() {
    let matrix = timed_issue_matrix(&[]);
    let cpus: Vec<u32> = (0..16).collect();
    let topo = machine(1, 16, 1);
    let found = suspected(&topo, &cpus, &pair_medians(&matrix));
    let finding = measured_finding(&topo, &found, &cpus, &matrix).expect("the issue's pairs");
    assert_eq!(finding.severity, Severity::Warning);
    let confidence = finding.confidence.expect("measured");
    assert!(confidence.holds && confidence.samples == 5, "{confidence:?}");
    assert!(!finding.title.contains("inconclusive"), "{}", finding.title);
    // The same steady pairs timed on an emulated CPU: the emulator's threads.
    let mut emulated = topo.clone();
    emulated.cpu_model = Some("QEMU TCG CPU version 2.5+".into());
    let finding = measured_finding(&emulated, &found, &cpus, &matrix).expect("the issue's pairs");
    assert_eq!(finding.severity, Severity::Info);
    assert!(finding.title.ends_with("(emulated CPU)"), "{}", finding.title);
}

#[test]
fn a_noisy_sibling_pair_is_only_inconclusive() {
    let matrix = timed_issue_matrix(&[(7, 13)]);
    let cpus: Vec<u32> = (0..16).collect();
    let topo = machine(1, 16, 1);
    let found = suspected(&topo, &cpus, &pair_medians(&matrix));
    assert_eq!(found.len(), 2, "the medians still stand out: {found:?}");
    let finding = measured_finding(&topo, &found, &cpus, &matrix).expect("the issue's pairs");
    assert_eq!(finding.severity, Severity::Info);
    let confidence = finding.confidence.expect("measured");
    assert!(!confidence.holds && confidence.spread_pct > 100.0, "{confidence:?}");
    assert!(
        finding
            .title
            .ends_with(&format!("(inconclusive: spread {:.0}%)", confidence.spread_pct)),
        "{}",
        finding.title
    );
    let last = finding.evidence.last().expect("the spread");
    assert_eq!(
        (last.source.as_str(), last.values.float("spread_pct")),
        (MEASURED_C2C, Some(confidence.spread_pct))
    );
}
