//! The driver against fake admin trees: the files a kernel would show
//! after each write are laid out beforehand, and what the driver wrote is
//! read back. The live kernel's side (the kdamond really starting) is
//! tested in the 6.12 guest (crates/testbed/tests/it/hotpages_guest.rs).

use std::fs;

use numasleuth_kernel::sysfs::damon::{ADMIN, KDAMONDS};
use numasleuth_kernel::Root;

use super::*;
use crate::damon_claim::{self, decide, read_claim, Claim, Decision, FILE_NAME};

use numasleuth_kernel::test_support::partial_tree as fixture;

/// A tree as the kernel shows it once kdamond 0 exists, with `nr_kdamonds`
/// and kdamond 0's state as given, and two tried regions.
fn kernel_tree(nr: &str, state: &str) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let k = format!("{KDAMONDS}/0");
    let c = format!("{k}/contexts/0");
    let t = format!("{c}/schemes/0/tried_regions");
    let mut files: Vec<(String, &str)> = vec![
        (format!("{KDAMONDS}/nr_kdamonds"), nr),
        (format!("{k}/state"), state),
        (format!("{k}/pid"), "-1\n"),
        (format!("{k}/contexts/nr_contexts"), "0\n"),
        (format!("{c}/operations"), "paddr\n"),
        (format!("{c}/avail_operations"), "vaddr\nfvaddr\npaddr\n"),
        (format!("{c}/targets/nr_targets"), "0\n"),
        (format!("{c}/targets/0/pid_target"), "0\n"),
        (format!("{c}/schemes/nr_schemes"), "0\n"),
        (format!("{c}/schemes/0/action"), "pageout\n"),
        (format!("{t}/0/start"), "4096\n"),
        (format!("{t}/0/end"), "8192\n"),
        (format!("{t}/0/nr_accesses"), "20\n"),
        (format!("{t}/0/age"), "5\n"),
        (format!("{t}/1/start"), "8192\n"),
        (format!("{t}/1/end"), "65536\n"),
        (format!("{t}/1/nr_accesses"), "0\n"),
        (format!("{t}/1/age"), "50\n"),
    ];
    for name in ["sample_us", "aggr_us", "update_us"] {
        files.push((format!("{c}/monitoring_attrs/intervals/{name}"), "0\n"));
    }
    for name in ["min", "max"] {
        files.push((format!("{c}/monitoring_attrs/nr_regions/{name}"), "0\n"));
        for range in ["sz", "nr_accesses", "age"] {
            files.push((format!("{c}/schemes/0/access_pattern/{range}/{name}"), "0\n"));
        }
    }
    for (path, text) in &files {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    let root = Root::directory(dir.path()).unwrap();
    (dir, root)
}

fn read(root: &Root, relative: &str) -> String {
    fs::read_to_string(root.base().join(relative))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn this_machine_is_refused_before_anything_is_written() {
    // The development machine: 6.18 without CONFIG_DAMON_VADDR, and its own
    // paddr kdamond running. The kernel lacking vaddr is said first.
    let admin = admin(&fixture("damon-host-paddr")).unwrap();
    let e = check_available(&admin).unwrap_err().to_string();
    assert!(
        e.contains("no virtual-address operations") && e.contains("avail_operations: paddr"),
        "{e}"
    );
}

#[test]
fn a_foreign_kdamond_is_named_and_left_alone() {
    let (_d, root) = kernel_tree("1\n", "on\n");
    let e = check_available(&admin(&root).unwrap()).unwrap_err().to_string();
    assert!(
        e.contains("cannot get a kdamond of its own") && e.contains("kdamond 0 (on"),
        "{e}"
    );
    let claims = tempfile::tempdir().unwrap();
    let started = Session::start(&root, 4242, DEFAULT_ATTRS, &[], claims.path().to_path_buf());
    assert!(matches!(started, Err(DamonError::Busy { .. })));
    assert_eq!(read(&root, &format!("{KDAMONDS}/0/state")), "on");
    assert_eq!(read(&root, &format!("{KDAMONDS}/0/contexts/0/operations")), "paddr");
    assert!(!claims.path().join(FILE_NAME).exists());
}

#[test]
fn no_damon_and_no_root_are_said_as_such() {
    let empty = tempfile::tempdir().unwrap();
    let e = admin(&Root::directory(empty.path()).unwrap()).unwrap_err();
    assert!(matches!(e, DamonError::NoDamon { .. }), "{e}");
    assert!(e.to_string().contains(&format!("/{ADMIN}")));
}

#[test]
fn a_session_sets_up_samples_and_removes_its_kdamond() {
    let (_d, root) = kernel_tree("0\n", "off\n");
    let claims = tempfile::tempdir().unwrap();
    let t = format!("{KDAMONDS}/0/contexts/0/targets/0/regions");
    for (file, text) in [
        ("nr_regions", "0"),
        ("0/start", "0"),
        ("0/end", "0"),
        ("1/start", "0"),
        ("1/end", "0"),
    ] {
        let full = root.base().join(format!("{t}/{file}"));
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    let regions = [(0x40_0000, 0x4c_0000), (0x4c_5000, 0x4c_d000)];
    let mut session = Session::start(&root, 4242, DEFAULT_ATTRS, &regions, claims.path().to_path_buf()).unwrap();
    assert_eq!(read(&root, &format!("{t}/nr_regions")), "2");
    assert_eq!(read(&root, &format!("{t}/1/start")), (0x4c_5000u64).to_string());
    assert_eq!(read(&root, &format!("{t}/1/end")), (0x4c_d000u64).to_string());
    let c = format!("{KDAMONDS}/0/contexts/0");
    assert_eq!(read(&root, &format!("{c}/operations")), "vaddr");
    assert_eq!(read(&root, &format!("{c}/targets/0/pid_target")), "4242");
    assert_eq!(read(&root, &format!("{c}/schemes/0/action")), "stat");
    assert_eq!(
        read(&root, &format!("{c}/monitoring_attrs/intervals/aggr_us")),
        "100000"
    );
    assert_eq!(
        read(&root, &format!("{c}/schemes/0/access_pattern/nr_accesses/max")),
        u64::MAX.to_string()
    );
    assert_eq!(read(&root, &format!("{KDAMONDS}/0/state")), "on");
    let claim = read_claim(&claims.path().join(FILE_NAME)).unwrap().unwrap();
    assert_eq!((claim.kdamond_index, claim.target_pid), (0, 4242));
    assert_eq!(claim.owner_pid, std::process::id());

    let regions = session.snapshot().unwrap();
    assert_eq!(
        read(&root, &format!("{KDAMONDS}/0/state")),
        "update_schemes_tried_regions"
    );
    assert_eq!(regions.len(), 2);
    assert_eq!((regions[0].start, regions[0].nr_accesses), (4096, 20));

    session.stop().unwrap();
    assert_eq!(read(&root, &format!("{KDAMONDS}/nr_kdamonds")), "0");
    assert!(!claims.path().join(FILE_NAME).exists());
}

#[test]
fn an_error_or_a_panic_still_removes_the_kdamond() {
    let (_d, root) = kernel_tree("0\n", "off\n");
    let claims = tempfile::tempdir().unwrap();
    let dir = claims.path().to_path_buf();
    let unwound = std::panic::catch_unwind(|| {
        let _session = Session::start(&root, 7, DEFAULT_ATTRS, &[], dir).unwrap();
        panic!("a bug while sampling");
    });
    assert!(unwound.is_err());
    assert_eq!(read(&root, &format!("{KDAMONDS}/nr_kdamonds")), "0");
    assert_eq!(read(&root, &format!("{KDAMONDS}/0/state")), "off");
    assert!(!claims.path().join(FILE_NAME).exists());
}

#[test]
fn a_second_claim_is_refused() {
    let (_d, root) = kernel_tree("0\n", "off\n");
    let claims = tempfile::tempdir().unwrap();
    let _first = Session::start(&root, 7, DEFAULT_ATTRS, &[], claims.path().to_path_buf()).unwrap();
    // The first run's kdamond exists now: a second run finds it busy.
    let second = Session::start(&root, 8, DEFAULT_ATTRS, &[], claims.path().to_path_buf());
    assert!(matches!(second, Err(DamonError::Busy { .. })));
}

fn claim(target: u32, kdamond: Option<u32>) -> Claim {
    Claim {
        schema: "numasleuth.damon-claim/1".into(),
        owner_pid: 4_194_000,
        owner_start_ticks: Some(1),
        kdamond_index: 0,
        target_pid: target,
        kdamond_pid: kdamond,
    }
}

fn admin_with(state: &str, pid: &str, target: &str, ops: &str) -> DamonAdmin {
    let (_d, root) = kernel_tree("1\n", state);
    let k = format!("{KDAMONDS}/0");
    fs::write(root.base().join(format!("{k}/pid")), pid).unwrap();
    fs::write(root.base().join(format!("{k}/contexts/nr_contexts")), "1").unwrap();
    fs::write(root.base().join(format!("{k}/contexts/0/targets/nr_targets")), "1").unwrap();
    fs::write(root.base().join(format!("{k}/contexts/0/targets/0/pid_target")), target).unwrap();
    fs::write(root.base().join(format!("{k}/contexts/0/operations")), ops).unwrap();
    admin(&root).unwrap()
}

#[test]
fn reaping_removes_only_the_claimed_kdamond_of_a_dead_owner() {
    let on = admin_with("on", "900", "42", "vaddr");
    assert_eq!(decide(&claim(42, Some(900)), &on, true), Decision::OwnerAlive);
    assert_eq!(
        decide(&claim(42, Some(900)), &on, false),
        Decision::Remove { switch_off: true }
    );
    // Killed between switching it on and noting its thread: the target
    // alone identifies it.
    assert_eq!(
        decide(&claim(42, None), &on, false),
        Decision::Remove { switch_off: true }
    );
    // Another kernel thread, another target, other operations: not ours.
    for (c, a) in [
        (claim(42, Some(901)), &on),
        (claim(43, Some(900)), &on),
        (claim(42, Some(900)), &admin_with("on", "900", "42", "paddr")),
    ] {
        assert!(matches!(decide(&c, a, false), Decision::Stale(_)), "{c:?}");
    }
    // Its target exited, so the kdamond stopped: removed without switching.
    let off = admin_with("off", "-1", "42", "vaddr");
    assert_eq!(
        decide(&claim(42, Some(900)), &off, false),
        Decision::Remove { switch_off: false }
    );
    // Killed before the target was written.
    let bare = admin_with("off", "-1", "0", "vaddr");
    assert_eq!(
        decide(&claim(42, None), &bare, false),
        Decision::Remove { switch_off: false }
    );
}

#[test]
fn reap_switches_off_removes_and_drops_the_claim() {
    let (_d, root) = kernel_tree("1\n", "on\n");
    let k = format!("{KDAMONDS}/0");
    for (file, text) in [
        ("pid", "900"),
        ("contexts/nr_contexts", "1"),
        ("contexts/0/operations", "vaddr"),
        ("contexts/0/targets/nr_targets", "1"),
        ("contexts/0/targets/0/pid_target", "42"),
    ] {
        fs::write(root.base().join(format!("{k}/{file}")), text).unwrap();
    }
    let claims = tempfile::tempdir().unwrap();
    let text = serde_json::to_string(&claim(42, Some(900))).unwrap();
    let path = claims.path().join(FILE_NAME);
    fs::write(&path, text).unwrap();
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let said = damon_claim::reap(&root, claims.path()).unwrap().unwrap();
    assert!(said.contains("removed kdamond 0"), "{said}");
    assert_eq!(read(&root, &format!("{k}/state")), "off");
    assert_eq!(read(&root, &format!("{KDAMONDS}/nr_kdamonds")), "0");
    assert!(!path.exists());
    // Nothing claimed: nothing to say.
    assert_eq!(damon_claim::reap(&root, claims.path()).unwrap(), None);
}

#[test]
fn hostile_claims_are_refused() {
    let claims = tempfile::tempdir().unwrap();
    let path = claims.path().join(FILE_NAME);
    fs::write(&path, "x".repeat(5000)).unwrap();
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    assert!(read_claim(&path).unwrap_err().to_string().contains("longer than"));
    fs::write(&path, "{}").unwrap();
    assert!(read_claim(&path).is_err());
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    assert!(read_claim(&path)
        .unwrap_err()
        .to_string()
        .contains("writable by others"));
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &path).unwrap();
    assert!(read_claim(&path).is_err());
}

#[test]
fn a_busy_lock_is_tried_again_and_other_errors_are_not() {
    let busy = || std::io::Error::from_raw_os_error(libc::EBUSY);
    let is_busy = |e: &std::io::Error| e.raw_os_error() == Some(libc::EBUSY);
    let mut tries = 0;
    let answer = retry_busy(
        || {
            tries += 1;
            if tries < 3 {
                Err(busy())
            } else {
                Ok(tries)
            }
        },
        is_busy,
    );
    assert_eq!(answer.unwrap(), 3);
    let mut tries = 0;
    let answer: Result<(), _> = retry_busy(
        || {
            tries += 1;
            Err(std::io::Error::from_raw_os_error(libc::EINVAL))
        },
        is_busy,
    );
    assert_eq!(answer.unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert_eq!(tries, 1);
    let read = |errno| ReadError::Io {
        path: "/sys/kernel/mm/damon/admin/kdamonds/0/pid".into(),
        message: "busy".into(),
        errno,
    };
    assert!(read_is_busy(&read(Some(libc::EBUSY))));
    assert!(!read_is_busy(&read(Some(libc::EIO))));
    assert!(!read_is_busy(&read(None)));
    // Writes go through Root::write now: its EBUSY must still read as busy.
    let busy = std::io::Error::from_raw_os_error(libc::EBUSY);
    assert!(read_is_busy(&ReadError::from_io("sys/kernel/mm/damon/x", &busy)));
}

/// Root::write words a missing file and a refusal in its own way; the
/// DAMON error still ends in the system's words, as it did before.
#[test]
fn a_failed_write_names_the_path_value_and_the_system_cause() {
    let (_d, root) = kernel_tree("1\n", "on\n");
    let err = write(&root, &format!("{KDAMONDS}/0/nothing"), "on")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!("writing `on` to /{KDAMONDS}/0/nothing: No such file or directory (os error 2)")
    );
    let denied = ReadError::PermissionDenied { path: "/x".into() };
    assert_eq!(write_cause(&denied), "Permission denied (os error 13)");
}

#[test]
fn regions_damon_would_refuse_are_refused_before_anything_is_written() {
    let (_d, root) = kernel_tree("0\n", "off\n");
    let claims = tempfile::tempdir().unwrap();
    let overlapping = [(0x4c_5000, 0x4c_d000), (0x4c_c000, 0x4d_0000)];
    let e = Session::start(&root, 7, DEFAULT_ATTRS, &overlapping, claims.path().to_path_buf()).err();
    assert!(matches!(e, Some(DamonError::Regions(_))), "{e:?}");
    assert_eq!(read(&root, &format!("{KDAMONDS}/nr_kdamonds")), "0");
    assert!(!claims.path().join(FILE_NAME).exists());
}
