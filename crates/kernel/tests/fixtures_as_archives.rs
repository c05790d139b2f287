//! Every committed fixture tree opens as a root and reads whole; written
//! back out as a `.tar.gz` snapshot through a recording root, the archive
//! opens again (through the hardened reader) and reads the same. This pins
//! the caps and checks against real captures: none of them may trip.

use std::path::PathBuf;

use numasleuth_kernel::gather::{read_host, read_topology};
use numasleuth_kernel::snapshot;

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut trees: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    trees.sort();
    assert!(trees.len() >= 5, "fixtures missing: {trees:?}");
    trees
}

#[test]
fn fixtures_survive_a_round_trip_through_an_archive() {
    let out = tempfile::tempdir().unwrap();
    for tree in fixtures() {
        let name = tree.file_name().unwrap().to_string_lossy().into_owned();
        let (root, recording) = snapshot::open(&tree).unwrap().recording();
        let direct = read_topology(&root).unwrap_or_else(|e| panic!("{name}: {e}"));
        let host = read_host(&root, &direct);
        let archive = out.path().join(format!("{name}.tar.gz"));
        snapshot::write(&recording.lock().unwrap(), "{}", &archive).unwrap();
        let replayed = snapshot::open(&archive).unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = read_topology(&replayed).unwrap_or_else(|e| panic!("{name} replayed: {e}"));
        assert_eq!(format!("{direct:?}"), format!("{again:?}"), "{name}");
        // Every host reading (zoneinfo, IRQs, settings, …) replays the same,
        // failures included: the archive holds what the readers opened.
        let host_again = read_host(&replayed, &again);
        assert_eq!(format!("{host:?}"), format!("{host_again:?}"), "{name}");
    }
}
