//! `doctor`'s diagnosis of the machine through the application layer, on
//! a two-node capture: every check the measurements own is skipped with
//! its reason when they are not asked for or cannot run, a process the
//! snapshot lacks is one error line, and the topology is read once with
//! its warnings.

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::Diagnosis;
use numasleuth_app::doctor::machine::{diagnose, DoctorError, MachineRequest, HOT_MEMORY};
use numasleuth_app::doctor::measure::{INTERCONNECT, SIBLINGS};
use numasleuth_app::hotpages::ReaperSpec;
use numasleuth_app::steps::Unobserved;
use numasleuth_app::Quiet;
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;

fn request(pid: Option<u32>, measure: bool) -> MachineRequest {
    MachineRequest {
        pid,
        quick: true,
        measure,
        reaper: ReaperSpec {
            program: Err(std::io::Error::other("no reaper in a test")),
            args: Vec::new(),
        },
    }
}

fn skipped_why(d: &Diagnosis, id: CheckId) -> &str {
    d.checks_skipped
        .iter()
        .find(|s| s.id == id)
        .map(|s| s.why.as_str())
        .unwrap_or_else(|| panic!("{id} not skipped: {d:#?}"))
}

#[test]
fn without_measure_each_measured_check_says_it_needs_it() {
    let root = fixture("qemu-two-nodes");
    let found = diagnose(&root, request(None, false), &Stop::new(), &Quiet, &mut Unobserved).unwrap();
    let d = &found.diagnosis;
    assert!(skipped_why(d, INTERCONNECT).starts_with("needs --measure"));
    assert!(skipped_why(d, SIBLINGS).starts_with("needs --measure"));
    assert!(skipped_why(d, numasleuth_app::readers::CHECK).starts_with("needs --measure"));
    // No process asked about: its checks are neither run nor skipped.
    assert!(!d.checks_skipped.iter().any(|s| s.id == HOT_MEMORY), "{d:#?}");
    assert!(!d.checks_run.is_empty(), "the machine's checks ran");
    assert!(found.headline.starts_with("2 node(s), "), "{}", found.headline);
    assert_eq!(found.topology.nodes.len(), 2);
}

#[test]
fn on_a_snapshot_measure_skips_what_needs_the_live_machine() {
    let root = fixture("qemu-two-nodes");
    let found = diagnose(&root, request(None, true), &Stop::new(), &Quiet, &mut Unobserved).unwrap();
    let d = &found.diagnosis;
    for check in [INTERCONNECT, SIBLINGS] {
        assert_eq!(
            skipped_why(d, check),
            "measuring needs the live machine, not a snapshot given with --root"
        );
    }
    assert_eq!(
        skipped_why(d, numasleuth_app::readers::CHECK),
        "opens happen now; --root names a snapshot"
    );
    assert!(found.measured.is_none());
}

#[test]
fn a_process_the_snapshot_lacks_is_an_error_naming_what_it_holds() {
    let root = fixture("qemu-two-nodes");
    let e = match diagnose(
        &root,
        request(Some(999_999), false),
        &Stop::new(),
        &Quiet,
        &mut Unobserved,
    ) {
        Ok(_) => panic!("a diagnosis of a process that is not there"),
        Err(e) => e,
    };
    assert!(matches!(e, DoctorError::NotInSnapshot(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "process 999999 is not in this snapshot: the snapshot holds no process; take one with \
         `numasleuth snapshot -p 999999 -o FILE` on the machine it runs on"
    );
}

/// The capture copied, with process 4242 added to it.
fn with_a_process() -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/qemu-two-nodes");
    copy_tree(&from, dir.path());
    let stat = "4242 (worker) S 1 4242 1 0 -1 4194304 0 0 0 0 100 50 0 0 20 0 1 0 777 \
                0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
    for path in ["proc/4242/stat", "proc/4242/task/4242/stat"] {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, stat).unwrap();
    }
    let root = Root::directory(dir.path()).unwrap();
    (dir, root)
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

#[test]
fn a_process_in_the_snapshot_gets_its_hot_memory_check_skipped_with_why() {
    let (_dir, root) = with_a_process();
    let found = diagnose(&root, request(Some(4242), true), &Stop::new(), &Quiet, &mut Unobserved).unwrap();
    assert_eq!(
        skipped_why(&found.diagnosis, HOT_MEMORY),
        "DAMON watches a live process; --root names a snapshot"
    );
    let found = diagnose(&root, request(Some(4242), false), &Stop::new(), &Quiet, &mut Unobserved).unwrap();
    assert!(skipped_why(&found.diagnosis, HOT_MEMORY).starts_with("needs --measure"));
}
