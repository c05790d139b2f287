use std::fs;

use proptest::prelude::*;

use super::*;

use crate::test_support::partial_tree as fixture;

/// Writes `files` (path relative to the admin dir, contents) into a fresh
/// tree.
fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let full = dir.path().join(ADMIN).join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    let root = Root::directory(dir.path()).unwrap();
    (dir, root)
}

#[test]
fn the_development_machine_runs_a_paddr_kdamond_of_its_own() {
    // tests/partial-trees/damon-host-paddr (a DAMON tree, not a machine: kept out of tests/fixtures, whose every tree must replay as one): copied from the 6.18 KVM machine.
    let admin = read_admin(&fixture("damon-host-paddr")).unwrap().unwrap();
    assert_eq!(admin.nr_kdamonds, 1);
    let k = &admin.kdamonds[0];
    assert_eq!((k.index, &k.state, k.pid), (0, &KdamondState::On, Some(77)));
    assert_eq!(k.contexts.len(), 1);
    assert_eq!(k.contexts[0].operations.as_deref(), Some("paddr"));
    // paddr's target has pid_target 0: no process.
    assert_eq!(k.contexts[0].target_pids, vec![None]);
    assert_eq!(admin.avail_operations(), Some(&["paddr".to_string()][..]));
    let attrs = read_attrs(&fixture("damon-host-paddr"), 0, 0).unwrap();
    assert_eq!(
        attrs,
        DamonAttrs {
            sample_us: 500_000,
            aggr_us: 5_000_000,
            update_us: 60_000_000,
            min_regions: 1024,
            max_regions: 8192
        }
    );
}

#[test]
fn a_kernel_without_damon_sysfs_is_none() {
    let (_dir, root) = tree(&[]);
    assert_eq!(read_admin(&root).unwrap(), None);
}

#[test]
fn no_kdamonds_and_a_stopped_one() {
    let (_d, root) = tree(&[("kdamonds/nr_kdamonds", "0\n")]);
    let admin = read_admin(&root).unwrap().unwrap();
    assert_eq!((admin.nr_kdamonds, admin.kdamonds.len()), (0, 0));
    assert_eq!(admin.avail_operations(), None);

    let (_d, root) = tree(&[
        ("kdamonds/nr_kdamonds", "1\n"),
        ("kdamonds/0/state", "off\n"),
        ("kdamonds/0/pid", "-1\n"),
        ("kdamonds/0/contexts/nr_contexts", "1\n"),
        ("kdamonds/0/contexts/0/operations", "vaddr\n"),
        ("kdamonds/0/contexts/0/avail_operations", "vaddr\nfvaddr\npaddr\n"),
        ("kdamonds/0/contexts/0/targets/nr_targets", "1\n"),
        ("kdamonds/0/contexts/0/targets/0/pid_target", "4242\n"),
    ]);
    let admin = read_admin(&root).unwrap().unwrap();
    let k = &admin.kdamonds[0];
    assert_eq!((&k.state, k.pid), (&KdamondState::Off, None));
    assert_eq!(k.contexts[0].target_pids, vec![Some(4242)]);
    assert_eq!(admin.avail_operations().unwrap().len(), 3);
}

#[test]
fn hostile_counts_are_refused_with_the_file_named() {
    let (_d, root) = tree(&[("kdamonds/nr_kdamonds", "100000000\n")]);
    let e = read_admin(&root).unwrap_err().to_string();
    assert!(
        e.contains("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds") && e.contains("more than"),
        "{e}"
    );
    let (_d, root) = tree(&[("kdamonds/nr_kdamonds", "one\n")]);
    assert!(read_admin(&root).unwrap_err().to_string().contains("not a number"));
    let (_d, root) = tree(&[
        ("kdamonds/nr_kdamonds", "1\n"),
        ("kdamonds/0/state", "on\n"),
        ("kdamonds/0/pid", "12\n"),
        ("kdamonds/0/contexts/nr_contexts", "99999\n"),
    ]);
    assert!(read_admin(&root).unwrap_err().to_string().contains("nr_contexts"));
    // A kdamond directory missing its files is an error, not a default.
    let (_d, root) = tree(&[("kdamonds/nr_kdamonds", "1\n")]);
    assert!(read_admin(&root).unwrap_err().is_not_found());
}

#[test]
fn tried_regions_are_read_in_address_order_and_checked() {
    let dir = "kdamonds/0/contexts/0/schemes/0/tried_regions";
    let region = |i: u32, s: u64, e: u64, n: u64, a: u64| {
        [
            (format!("{dir}/{i}/start"), format!("{s}\n")),
            (format!("{dir}/{i}/end"), format!("{e}\n")),
            (format!("{dir}/{i}/nr_accesses"), format!("{n}\n")),
            (format!("{dir}/{i}/age"), format!("{a}\n")),
        ]
    };
    // Written out of order, with 10 before 2 as a name sort would put it.
    let mut files: Vec<(String, String)> = Vec::new();
    files.extend(region(10, 0x7000, 0x9000, 0, 40));
    files.extend(region(2, 0x4000, 0x5000, 20, 3));
    files.extend(region(0, 0x1000, 0x4000, 1, 7));
    files.push((format!("{dir}/total_bytes"), "20480\n".into()));
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (_d, root) = tree(&refs);
    let regions = read_tried_regions(&root, 0, 0, 0).unwrap();
    let starts: Vec<u64> = regions.iter().map(|r| r.start).collect();
    assert_eq!(starts, vec![0x1000, 0x4000, 0x7000]);
    assert_eq!(regions[1].nr_accesses, 20);
    assert_eq!(regions[1].age, 3);
    assert_eq!(regions[2].bytes(), 0x2000);

    // No tried regions yet: an empty list.
    let (_d, root) = tree(&[]);
    assert!(read_tried_regions(&root, 0, 0, 0).unwrap().is_empty());

    let mut bad = region(0, 0x5000, 0x5000, 0, 0).to_vec();
    bad.push((format!("{dir}/total_bytes"), "0\n".into()));
    let refs: Vec<(&str, &str)> = bad.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (_d, root) = tree(&refs);
    let e = read_tried_regions(&root, 0, 0, 0).unwrap_err().to_string();
    assert!(e.contains("tried_regions/0") && e.contains("at or before"), "{e}");
}

#[test]
fn parsers_say_what_is_wrong() {
    assert_eq!(parse_pid("-1\n").unwrap(), None);
    assert_eq!(parse_pid("0\n").unwrap(), None);
    assert_eq!(parse_pid("77\n").unwrap(), Some(77));
    assert!(parse_pid("x").is_err());
    assert_eq!(KdamondState::parse("on\n"), KdamondState::On);
    assert_eq!(KdamondState::parse("off"), KdamondState::Off);
    assert_eq!(KdamondState::parse("weird"), KdamondState::Other("weird".into()));
    assert_eq!(parse_operations("vaddr fvaddr\npaddr\n").unwrap().len(), 3);
    assert!(parse_operations(&"x ".repeat(17)).is_err());
    assert!(parse_number("18446744073709551616").is_err());
    assert_eq!(parse_number("18446744073709551615\n").unwrap(), u64::MAX);
}

proptest! {
    #[test]
    fn parsers_never_panic(a in "\\PC{0,30}", b in "\\PC{0,30}") {
        let _ = parse_region(&a, &b, &a, &b);
        let _ = parse_pid(&a);
        let _ = parse_operations(&a);
        let _ = KdamondState::parse(&b);
    }
}
