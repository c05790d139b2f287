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
    let why = choose(&read_pmus(&root).unwrap(), true).unwrap_err();
    assert_eq!(why, PreciseError::NotAvailable);
    assert!(
        why.to_string()
            .starts_with("precise memory sampling not available here"),
        "{why}"
    );
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
    let precise = choose(&read_pmus(&root).unwrap(), true).unwrap();
    assert_eq!(precise.method, "precise:cpu/mem-loads");
    assert_eq!(
        (precise.event.type_id, precise.event.config, precise.event.config1),
        (4, 0x1cd, 3)
    );
    assert_eq!(precise.period, MEM_LOADS_PERIOD);
}

#[test]
fn ibs_op_is_preferred() {
    let (_d, root) = tree(&[("ibs_op/type", "11\n"), ("cpu/type", "4\n")]);
    let precise = choose(&read_pmus(&root).unwrap(), true).unwrap();
    assert_eq!(precise.method, "precise:ibs_op");
    assert_eq!(precise.source, Source::SampleAddr);
    assert_eq!((precise.event.type_id, precise.event.config), (11, 0));
}

/// `arm_spe_0` as drivers/perf/arm_spe_pmu.c lays out its sysfs
/// directory: the format fields with their bits, the caps, a cpumask.
const SPE_SYSFS: [(&str, &str); 13] = [
    ("arm_spe_0/type", "8\n"),
    ("arm_spe_0/cpumask", "0-79\n"),
    ("arm_spe_0/caps/min_interval", "1024\n"),
    ("arm_spe_0/format/ts_enable", "config:0\n"),
    ("arm_spe_0/format/pa_enable", "config:1\n"),
    ("arm_spe_0/format/pct_enable", "config:2\n"),
    ("arm_spe_0/format/jitter", "config:16\n"),
    ("arm_spe_0/format/branch_filter", "config:32\n"),
    ("arm_spe_0/format/load_filter", "config:33\n"),
    ("arm_spe_0/format/store_filter", "config:34\n"),
    ("arm_spe_0/format/event_filter", "config1:0-63\n"),
    ("arm_spe_0/format/min_latency", "config2:0-11\n"),
    ("arm_spe_0/format/inv_event_filter", "config3:0-63\n"),
];

#[test]
fn spe_is_encoded_from_its_format_fields_where_this_build_reads_it() {
    let (_d, root) = tree(&SPE_SYSFS);
    let readings = read_pmus(&root).unwrap();
    assert_eq!(available(&readings), ["arm_spe_0"]);
    let precise = choose(&readings, true).unwrap();
    assert_eq!(precise.method, "precise:arm_spe_0");
    assert_eq!(precise.source, Source::SpeAux);
    assert_eq!(precise.period, SPE_PERIOD);
    assert_eq!(precise.period % 256, 0, "the interval register holds multiples of 256");
    // ts_enable (bit 0), jitter (16), load_filter (33), store_filter (34);
    // not pa_enable, the branch filter, events or a latency floor.
    let e = &precise.event;
    assert_eq!((e.type_id, e.config), (8, (1 << 0) | (1 << 16) | (1 << 33) | (1 << 34)));
    assert_eq!((e.config1, e.config2, e.config3), (0, 0, 0));
    assert!(
        precise.note.contains("not yet been checked on SPE hardware"),
        "{}",
        precise.note
    );
    assert!(!precise.note.contains("has no"), "{}", precise.note);
}

#[test]
fn spe_without_some_fields_names_them_and_elsewhere_is_declined() {
    let (_d, root) = tree(&[
        ("arm_spe_0/type", "8\n"),
        ("arm_spe_0/format/load_filter", "config:33\n"),
        ("arm_spe_0/format/store_filter", "config:34\n"),
    ]);
    let precise = choose(&read_pmus(&root).unwrap(), true).unwrap();
    assert_eq!(precise.event.config, (1 << 33) | (1 << 34));
    assert!(
        precise.note.contains("arm_spe_0/format has no ts_enable, jitter"),
        "{}",
        precise.note
    );
    // An x86-64 build (say, reading an arm64 machine's snapshot) declines.
    let (_d, root) = tree(&SPE_SYSFS);
    let why = choose(&read_pmus(&root).unwrap(), false).unwrap_err().to_string();
    assert!(
        why.starts_with("arm_spe_0 is present, but only an aarch64 build reads"),
        "{why}"
    );
}
