//! Whether this kernel offers precise memory sampling, which would give
//! the data address of each sampled load or store directly: Intel's
//! `mem-loads`/`mem-stores` (PEBS), AMD's `ibs_op` PMU, Arm's `arm_spe`.
//! VMs and most clouds expose none of them; then only the ip-decode
//! method runs, and `hotlines` says why.

use numasleuth_kernel::Root;

const DEVICES: &str = "sys/bus/event_source/devices";

/// The precise-sampling sources present, by name (empty: none here).
pub fn available(root: &Root) -> Vec<String> {
    let mut found = Vec::new();
    for event in ["mem-loads", "mem-stores"] {
        if root.exists(&format!("{DEVICES}/cpu/events/{event}")) {
            found.push(format!("cpu/{event}"));
        }
    }
    if let Ok(Some(devices)) = root.list(DEVICES) {
        found.extend(
            devices
                .into_iter()
                .filter(|d| d == "ibs_op" || d.starts_with("arm_spe")),
        );
    }
    found
}

/// The line `hotlines` prints about it.
pub fn note(found: &[String]) -> String {
    if found.is_empty() {
        "precise memory sampling not available here (no cpu/mem-loads or cpu/mem-stores event, no ibs_op or \
         arm_spe PMU under /sys/bus/event_source/devices): using ip-decode"
            .to_string()
    } else {
        format!(
            "precise memory sampling is offered here ({}), but this build samples with ip-decode only; \
             `perf mem record` / `perf c2c record` use it",
            found.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dirs: &[&str], files: &[&str]) -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        for d in dirs {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "event=0xcd,umask=0x1,ldlat=3\n").unwrap();
        }
        let root = Root::directory(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn a_vm_without_precise_sampling_says_not_available_here() {
        let (_d, root) = tree(
            &[
                "sys/bus/event_source/devices/software",
                "sys/bus/event_source/devices/tracepoint",
            ],
            &[],
        );
        let found = available(&root);
        assert!(found.is_empty());
        assert!(note(&found).starts_with("precise memory sampling not available here"));
    }

    #[test]
    fn pebs_ibs_and_spe_are_recognised() {
        let (_d, root) = tree(
            &[
                "sys/bus/event_source/devices/ibs_op",
                "sys/bus/event_source/devices/arm_spe_0",
            ],
            &["sys/bus/event_source/devices/cpu/events/mem-loads"],
        );
        let found = available(&root);
        let mut sorted = found.clone();
        sorted.sort();
        assert_eq!(sorted, ["arm_spe_0", "cpu/mem-loads", "ibs_op"]);
        assert!(note(&found).contains("ibs_op"));
    }
}
