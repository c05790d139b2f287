//! The numa_maps reader over synthetic trees: its cap, a bad line, a
//! process that is gone.

use super::*;

const THREE: &str = "\
7f00 default anon=3 N0=2 N1=1 kernelpagesize_kB=4
not a numa_maps line at all
7f20 bind:1 anon=1 N1=1 kernelpagesize_kB=4
";

fn starts(entries: &mut NumaMapsEntries) -> Vec<Result<u64, String>> {
    let mut out = Vec::new();
    loop {
        match entries.next_entry() {
            Ok(Some(entry)) => out.push(Ok(entry.start)),
            Ok(None) => return out,
            Err(e) => out.push(Err(e.to_string())),
        }
    }
}

#[test]
fn every_line_parsed_in_order_and_a_bad_one_named() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/numa_maps", THREE)]);
    let mut entries = NumaMapsFile::open(&root, 7).unwrap().entries(u64::MAX);
    let got = starts(&mut entries);
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0], Ok(0x7f00));
    assert!(
        got[1].as_ref().unwrap_err().starts_with("/proc/7/numa_maps: malformed"),
        "{got:?}"
    );
    assert_eq!(got[2], Ok(0x7f20));
}

#[test]
fn the_cap_counts_lines_bad_ones_included() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/numa_maps", THREE)]);
    let mut entries = NumaMapsFile::open(&root, 7).unwrap().entries(2);
    let got = starts(&mut entries);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[1].is_err());
    assert!(starts(&mut NumaMapsFile::open(&root, 7).unwrap().entries(0)).is_empty());
}

#[test]
fn a_process_without_the_file_is_not_found() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/7/numa_maps", THREE)]);
    let err = NumaMapsFile::open(&root, 8).unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert_eq!(err.to_string(), "/proc/8/numa_maps: not found");
}
