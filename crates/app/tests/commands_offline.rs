//! `snapshot`, `meminfo`, `irq`, `pmu`, `pmu diff` and `lines` through the
//! application layer, on captures and temporary files: what each returns,
//! and each refusal as the one line the binary prints.

use std::sync::Mutex;

use numasleuth_analyze::pmu::diff::Per;
use numasleuth_analyze::pmu::plan::Selection;
use numasleuth_app::irq::{IrqError, IrqRequest};
use numasleuth_app::lines::{LinesError, LinesRequest};
use numasleuth_app::meminfo::{MeminfoError, MeminfoRequest};
use numasleuth_app::pmu::{PmuCountError, PmuRequest};
use numasleuth_app::pmu_diff::DiffRequest;
use numasleuth_app::snapshot::SnapshotRequest;
use numasleuth_app::{Observer, Quiet};
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::IdList;
use numasleuth_model::stop::Stop;

/// Keeps every line it hears.
#[derive(Default)]
struct Heard(Mutex<Vec<String>>);

impl Observer for Heard {
    fn progress(&self, line: &str) {
        self.0.lock().unwrap().push(line.to_string());
    }
}

/// The error of a call that must fail.
fn err<T, E>(result: Result<T, E>) -> E {
    match result {
        Ok(_) => panic!("succeeded where it must refuse"),
        Err(e) => e,
    }
}

#[test]
fn a_snapshot_of_a_capture_replays_the_same_topology() {
    let root = fixture("qemu-two-nodes");
    let dir = tempfile::tempdir().unwrap();
    let request = SnapshotRequest {
        pids: Vec::new(),
        output: dir.path().join("again.tar.gz"),
        command_line: vec!["numasleuth".into(), "snapshot".into()],
    };
    let summary = numasleuth_app::snapshot::record(&root, &request, &Quiet).unwrap();
    assert!(summary.files > 0 && summary.bytes > 0);
    let replay = numasleuth_kernel::snapshot::open(&request.output).unwrap();
    let (first, again) = (
        numasleuth_app::env::read_degraded(&root).unwrap(),
        numasleuth_app::env::read_degraded(&replay).unwrap(),
    );
    assert_eq!(first.topology, again.topology);
}

#[test]
fn a_snapshot_that_cannot_be_written_names_the_file() {
    let root = fixture("qemu-two-nodes");
    let request = SnapshotRequest {
        pids: Vec::new(),
        output: "/nonexistent-dir/x.tar.gz".into(),
        command_line: Vec::new(),
    };
    let e = err(numasleuth_app::snapshot::record(&root, &request, &Quiet));
    assert!(
        numasleuth_app::error_chain(&e).starts_with("cannot write snapshot /nonexistent-dir/x.tar.gz: "),
        "{e:?}"
    );
}

#[test]
fn meminfo_has_a_column_per_node_and_refuses_a_node_it_lacks() {
    let root = fixture("qemu-two-nodes");
    let heard = Heard::default();
    let table = numasleuth_app::meminfo::run(&root, &MeminfoRequest { nodes: None }, &heard).unwrap();
    assert_eq!(table.nodes, vec![0, 1]);
    assert!(!table.rows.is_empty());
    let only = MeminfoRequest {
        nodes: Some(IdList::new(vec![1])),
    };
    assert_eq!(
        numasleuth_app::meminfo::run(&root, &only, &heard).unwrap().nodes,
        vec![1]
    );
    let absent = MeminfoRequest {
        nodes: Some(IdList::new(vec![5])),
    };
    let e = err(numasleuth_app::meminfo::run(&root, &absent, &heard));
    assert!(matches!(e, MeminfoError::NoSuchNode { missing: 5, .. }), "{e:?}");
    assert_eq!(e.to_string(), "node 5 has no meminfo here; the nodes with one are 0-1");
}

#[test]
fn meminfo_of_an_unreadable_tree_warns_then_refuses() {
    // A meminfo that is not one: a gap to warn about, and nothing to show.
    let (_dir, root) = numasleuth_kernel::test_support::temp_tree(&[("proc/meminfo", "MemTotal: lots\n")]);
    let heard = Heard::default();
    let e = err(numasleuth_app::meminfo::run(
        &root,
        &MeminfoRequest { nodes: None },
        &heard,
    ));
    assert_eq!(
        e.to_string(),
        "no node's meminfo could be read (see the warnings above)"
    );
    let lines = heard.0.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("numasleuth: warning: could not read ")),
        "{lines:?}"
    );
}

#[test]
fn irq_audits_a_capture_and_refuses_to_apply_to_it() {
    let root = fixture("qemu-three-nodes-nic");
    let audit = IrqRequest {
        fix: true,
        apply: false,
        journal: None,
    };
    let outcome = numasleuth_app::irq::run(&root, &audit, &Quiet).unwrap();
    assert!(outcome.journal.is_none(), "a plan is not a change");
    let apply = IrqRequest { apply: true, ..audit };
    let e = err(numasleuth_app::irq::run(&root, &apply, &Quiet));
    assert!(matches!(e, IrqError::UnderSnapshot), "{e:?}");
    assert_eq!(
        e.to_string(),
        "irq --apply changes the live system; --root names a snapshot, which is not a system to change"
    );
}

#[test]
fn pmu_counts_nothing_on_a_snapshot() {
    let root = fixture("qemu-two-nodes");
    let request = PmuRequest {
        target: None,
        events: Selection::All,
        max_threads: 1,
        path: None,
    };
    let e = err(numasleuth_app::pmu::run(&root, request, &Stop::new(), &Quiet));
    assert!(matches!(e, PmuCountError::NotLive), "{e:?}");
}

#[test]
fn pmu_diff_names_the_side_whose_file_is_not_a_pmu_document() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, "not json").unwrap();
    let request = DiffRequest {
        good: good.clone(),
        bad: dir.path().join("missing.json"),
        per: Per::Second,
        min_count: 100.0,
    };
    let e = err(numasleuth_app::pmu_diff::run(&request));
    assert!(e.to_string().starts_with(&format!("GOOD {}: ", good.display())), "{e}");
}

#[test]
fn lines_refuses_a_pid_given_as_a_file_and_nothing_given() {
    let root = fixture("qemu-two-nodes");
    let mut request = LinesRequest {
        pid: None,
        binary: Some("123456789".into()),
        line_size: 64,
        symbol: None,
    };
    let e = err(numasleuth_app::lines::run(&root, &request));
    assert_eq!(
        e.to_string(),
        "`123456789` is not a file; to read process 123456789, use `numasleuth lines -p 123456789`"
    );
    request.binary = None;
    let e = err(numasleuth_app::lines::run(&root, &request));
    assert!(matches!(e, LinesError::NothingGiven), "{e:?}");
}

#[test]
fn lines_of_this_test_binary_finds_its_data_symbols() {
    let root = fixture("qemu-two-nodes");
    let request = LinesRequest {
        pid: None,
        binary: Some(std::env::current_exe().unwrap()),
        line_size: 64,
        symbol: None,
    };
    let found = numasleuth_app::lines::run(&root, &request)
        .map_err(|e| e.to_string())
        .unwrap();
    assert_eq!(found.load_bias, 0, "a file is read at link-time addresses");
    assert!(found.data_symbols > 0, "a Rust test binary has .data and .bss symbols");
}
