//! `doctor -p`'s investigation of a process, through the application
//! layer: what it observes, what it records when it cannot, and that
//! every check it owns is either run or skipped with a reason.

use numasleuth_analyze::doctor::CheckId;
use numasleuth_analyze::findings::Diagnosis;
use numasleuth_app::doctor::{
    judge, observe, Clue, ProcessRequest, HOTLINES_CHECK, JOIN_CHECK, MIGRATIONS_CHECK, PROCESS_CHECK,
};
use numasleuth_app::Quiet;
use numasleuth_kernel::test_support::fixture;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;

fn topology(root: &Root) -> Topology {
    let readings = numasleuth_kernel::gather::read_topology(root).expect("topology");
    Topology::build_degraded(&readings).0
}

fn skipped_why(d: &Diagnosis, id: CheckId) -> Option<&str> {
    d.checks_skipped.iter().find(|s| s.id == id).map(|s| s.why.as_str())
}

#[test]
fn on_a_snapshot_the_live_probes_and_the_join_are_skipped_with_the_reason() {
    let root = fixture("qemu-two-nodes");
    let topo = topology(&root);
    let request = ProcessRequest { pid: 1, quick: false };
    let observed = observe(&root, &topo, request, &Stop::new(), &Quiet);
    assert!(matches!(observed.lines, Clue::Skipped { .. }));
    let mut d = Diagnosis::default();
    judge(&observed, &topo, &mut d);
    for check in [HOTLINES_CHECK, MIGRATIONS_CHECK, JOIN_CHECK] {
        let why = skipped_why(&d, check).unwrap_or_else(|| panic!("{check} neither skipped: {d:#?}"));
        assert!(why.contains("--root names a snapshot"), "{check}: {why}");
    }
    // The fixture holds no process 1: placement is skipped, not run empty.
    assert!(!d.checks_run.contains(&PROCESS_CHECK), "{d:#?}");
    assert!(skipped_why(&d, PROCESS_CHECK).is_some(), "{d:#?}");
}

#[test]
fn quick_skips_the_probes_but_still_models_a_live_process() {
    let root = Root::live();
    let topo = topology(&root);
    let request = ProcessRequest {
        pid: std::process::id(),
        quick: true,
    };
    let observed = observe(&root, &topo, request, &Stop::new(), &Quiet);
    let Clue::Seen(model) = &observed.model else {
        panic!("this test's own process could not be modelled");
    };
    assert_eq!(model.pid, std::process::id());
    let mut d = Diagnosis::default();
    judge(&observed, &topo, &mut d);
    assert!(d.checks_run.contains(&PROCESS_CHECK), "{d:#?}");
    assert_eq!(
        skipped_why(&d, JOIN_CHECK),
        Some("--quick skips the live probes of the process"),
        "{d:#?}"
    );
}
