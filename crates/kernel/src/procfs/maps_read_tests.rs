//! The maps reader over synthetic trees: its caps, a bad line, a process
//! that is gone, and this process's own maps.

use super::*;
use crate::error::ReadError;

const THREE: &str = "\
00400000-00401000 r-xp 00000000 08:01 12 /bin/app
00600000-00601000 rw-p 00000000 08:01 12 /bin/app
7f0000000000-7f0000002000 rw-p 00000000 00:00 0
";

fn starts(maps: &Maps) -> Vec<u64> {
    maps.mappings.iter().map(|m| m.start).collect()
}

#[test]
fn every_mapping_in_order_when_under_the_caps() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/maps", THREE)]);
    let maps = read(&root, 7, MapsCap::KEPT).unwrap();
    assert_eq!(starts(&maps), [0x400000, 0x600000, 0x7f0000000000]);
    assert_eq!(maps.cap_hit, None);
    assert_eq!(read(&root, 7, MapsCap::STREAMED).unwrap(), maps);
}

#[test]
fn the_mapping_cap_keeps_the_first_and_says_so() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/maps", THREE)]);
    let cap = |mappings| MapsCap {
        mappings,
        bytes: u64::MAX,
    };
    let maps = read(&root, 7, cap(2)).unwrap();
    assert_eq!(starts(&maps), [0x400000, 0x600000]);
    assert_eq!(maps.cap_hit, Some(CapHit::Mappings { pid: 7, cap: 2 }));
    assert_eq!(
        maps.cap_hit.unwrap().to_string(),
        "/proc/7/maps has more than 2 mappings"
    );
    // Exactly as many as the cap: nothing was left out.
    assert_eq!(read(&root, 7, cap(3)).unwrap().cap_hit, None);
}

#[test]
fn the_byte_cap_stops_before_the_line_that_crosses_it() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/maps", THREE)]);
    let two_lines = THREE.lines().take(2).map(|l| l.len() as u64 + 1).sum::<u64>();
    let cap = |bytes| MapsCap {
        mappings: u64::MAX,
        bytes,
    };
    let maps = read(&root, 7, cap(two_lines)).unwrap();
    assert_eq!(starts(&maps), [0x400000, 0x600000]);
    assert_eq!(
        maps.cap_hit,
        Some(CapHit::Bytes {
            pid: 7,
            cap_bytes: two_lines
        })
    );
    assert_eq!(read(&root, 7, cap(THREE.len() as u64)).unwrap().cap_hit, None);
    let hit = CapHit::Bytes {
        pid: 7,
        cap_bytes: 64 << 20,
    };
    assert_eq!(hit.to_string(), "/proc/7/maps is longer than 64 MiB");
}

#[test]
fn a_stream_stays_stopped_at_its_cap() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/maps", THREE)]);
    let cap = MapsCap {
        mappings: 1,
        bytes: u64::MAX,
    };
    let mut stream = MapsStream::open(&root, 7, cap).unwrap();
    assert!(stream.next_mapping().unwrap().is_some());
    assert_eq!(stream.cap_hit(), None);
    assert_eq!(stream.next_mapping().unwrap(), None);
    assert_eq!(stream.next_mapping().unwrap(), None);
    assert!(stream.cap_hit().is_some());
}

#[test]
fn a_bad_line_is_an_error_naming_the_file() {
    let text = THREE.replace("rw-p 00000000 08:01", "rw-q 00000000 08:01");
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/maps", &text)]);
    let err = read(&root, 7, MapsCap::KEPT).unwrap_err();
    assert!(
        matches!(err, ProcessError::Read(ReadError::Malformed { .. })),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("/proc/7/maps: malformed"), "{err}");
    // Over the cap, the bad line is never parsed.
    let first = MapsCap {
        mappings: 1,
        bytes: u64::MAX,
    };
    assert_eq!(read(&root, 7, first).unwrap().mappings.len(), 1);
}

#[test]
fn a_process_that_is_gone_exited_one_that_is_there_lacks_the_file() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/8/stat", "8 (x) S 1")]);
    assert_eq!(
        read(&root, 9, MapsCap::KEPT).unwrap_err(),
        ProcessError::Exited { pid: 9 }
    );
    let err = read(&root, 8, MapsCap::KEPT).unwrap_err();
    assert!(matches!(err, ProcessError::Read(ReadError::NotFound { .. })), "{err:?}");
}

#[test]
fn this_process_maps_its_own_code() {
    let here = this_process_maps_its_own_code as fn() as usize as u64;
    let maps = read(&Root::live(), std::process::id(), MapsCap::KEPT).unwrap();
    assert!(maps.mappings.iter().any(|m| (m.start..m.end).contains(&here)));
    assert!(maps.mappings.windows(2).all(|w| w[0].end <= w[1].start));
}
