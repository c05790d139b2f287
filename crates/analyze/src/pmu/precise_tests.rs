use super::*;
use numasleuth_kernel::sysfs::pmu::read_pmus;
use numasleuth_kernel::Root;

/// A sysfs tree of PMUs: (path under devices/, content).
fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("sys/bus/event_source/devices");
    std::fs::create_dir_all(base.join("software")).unwrap();
    std::fs::write(base.join("software/type"), "1\n").unwrap();
    for (path, text) in files {
        let path = base.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    (dir, root)
}

#[test]
fn a_vm_without_precise_sampling_says_not_available_here() {
    let (_d, root) = tree(&[]);
    assert!(available(&read_pmus(&root).unwrap()).is_empty());
    let why = choose(&read_pmus(&root).unwrap()).unwrap_err();
    assert!(why.starts_with("precise memory sampling not available here"), "{why}");
}

/// Intel's core PMU as sysfs shows it on an Ice Lake server (format
/// fields and the `mem-loads` alias as the kernel's
/// arch/x86/events/intel/core.c writes them).
#[test]
fn pebs_mem_loads_is_encoded_with_its_latency_threshold() {
    let (_d, root) = tree(&[
        ("cpu/type", "4\n"),
        ("cpu/format/event", "config:0-7\n"),
        ("cpu/format/umask", "config:8-15\n"),
        ("cpu/format/ldlat", "config1:0-15\n"),
        ("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n"),
        ("cpu/events/mem-stores", "event=0xd0,umask=0x82\n"),
    ]);
    let mut found = available(&read_pmus(&root).unwrap());
    found.sort();
    assert_eq!(found, ["cpu/mem-loads", "cpu/mem-stores"]);
    let precise = choose(&read_pmus(&root).unwrap()).unwrap();
    assert_eq!(precise.method, "precise:cpu/mem-loads");
    assert_eq!(
        (precise.event.type_id, precise.event.config, precise.event.config1),
        (4, 0x1cd, 3)
    );
    assert_eq!(precise.period, MEM_LOADS_PERIOD);
}

#[test]
fn ibs_op_is_preferred_and_spe_is_said_unsupported() {
    let (_d, root) = tree(&[("ibs_op/type", "11\n"), ("cpu/type", "4\n")]);
    let precise = choose(&read_pmus(&root).unwrap()).unwrap();
    assert_eq!(precise.method, "precise:ibs_op");
    assert_eq!((precise.event.type_id, precise.event.config), (11, 0));
    let (_d, root) = tree(&[("arm_spe_0/type", "8\n")]);
    assert_eq!(available(&read_pmus(&root).unwrap()), ["arm_spe_0"]);
    assert!(choose(&read_pmus(&root).unwrap()).unwrap_err().contains("AUX buffer"));
}
