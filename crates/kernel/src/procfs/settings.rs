//! The kernel knobs that decide NUMA behaviour, and `/proc/vmstat`.
//!
//! Each knob is optional: a kernel without NUMA balancing has no
//! `numa_balancing`, one without THP no `transparent_hugepage` directory.

use std::collections::BTreeMap;

use crate::error::{quote, ParseError, ReadError};
use crate::read;
use crate::root::Root;
use crate::sysfs::node::parse_counters;
use crate::unread::Gaps;

pub const VMSTAT: &str = "proc/vmstat";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub numa_balancing: Option<u64>,
    pub zone_reclaim_mode: Option<u64>,
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: Option<u64>,
    /// The bracketed choice of `transparent_hugepage/enabled`.
    pub thp_enabled: Option<ThpMode>,
    pub thp_defrag: Option<ThpMode>,
    /// Active swap areas from `/proc/swaps`.
    pub swap_areas: Option<usize>,
    /// `/proc/cmdline`, for `numa=off` and `numa=fake=`.
    pub kernel_cmdline: Option<String>,
}

/// A transparent-hugepage choice, from `enabled` (always, madvise,
/// never) or `defrag` (also defer, defer+madvise). A word this build does
/// not know is kept as the kernel wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThpMode {
    Always,
    Madvise,
    Never,
    Defer,
    DeferMadvise,
    Other(String),
}

impl From<&str> for ThpMode {
    fn from(word: &str) -> Self {
        match word {
            "always" => ThpMode::Always,
            "madvise" => ThpMode::Madvise,
            "never" => ThpMode::Never,
            "defer" => ThpMode::Defer,
            "defer+madvise" => ThpMode::DeferMadvise,
            other => ThpMode::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for ThpMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ThpMode::Always => "always",
            ThpMode::Madvise => "madvise",
            ThpMode::Never => "never",
            ThpMode::Defer => "defer",
            ThpMode::DeferMadvise => "defer+madvise",
            ThpMode::Other(word) => word,
        })
    }
}

/// The bracketed choice of a `transparent_hugepage` file, typed.
pub fn parse_thp_mode(text: &str) -> Result<ThpMode, ParseError> {
    parse_choice(text).map(|word| ThpMode::from(word.as_str()))
}

/// `always [madvise] never` → `madvise`.
pub fn parse_choice(text: &str) -> Result<String, ParseError> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(String::from)
        .ok_or_else(|| ParseError::new(format!("no [selected] value in `{}`", quote(text.trim()))))
}

/// `/proc/swaps`: a header line, then one line per active area.
pub fn parse_swaps(text: &str) -> Result<usize, ParseError> {
    let mut lines = text.lines();
    match lines.next() {
        Some(header) if header.starts_with("Filename") => Ok(lines.filter(|l| !l.trim().is_empty()).count()),
        _ => Err(ParseError::new("missing `Filename` header")),
    }
}

/// Every knob, each on its own: an unusable file is noted in `gaps` and
/// read as absent, so the checks that need the others still run.
pub fn read(root: &Root, gaps: &mut Gaps) -> Settings {
    let mut number = |path: &str| gaps.keep(read::number(root, path));
    let (numa_balancing, zone_reclaim_mode, min_free_kbytes, watermark_scale_factor) = (
        number("proc/sys/kernel/numa_balancing"),
        number("proc/sys/vm/zone_reclaim_mode"),
        number("proc/sys/vm/min_free_kbytes"),
        number("proc/sys/vm/watermark_scale_factor"),
    );
    Settings {
        numa_balancing,
        zone_reclaim_mode,
        min_free_kbytes,
        watermark_scale_factor,
        thp_enabled: gaps.keep(read::parsed(
            root,
            "sys/kernel/mm/transparent_hugepage/enabled",
            parse_thp_mode,
        )),
        thp_defrag: gaps.keep(read::parsed(
            root,
            "sys/kernel/mm/transparent_hugepage/defrag",
            parse_thp_mode,
        )),
        swap_areas: gaps.keep(read::parsed(root, "proc/swaps", parse_swaps)),
        kernel_cmdline: gaps
            .keep(root.read_optional("proc/cmdline"))
            .map(|t| t.trim().to_string()),
    }
}

/// `vm.zone_reclaim_mode` alone, for samplers that read it every tick;
/// `None` on a kernel without it.
pub fn read_zone_reclaim_mode(root: &Root) -> Result<Option<u64>, ReadError> {
    read::number(root, "proc/sys/vm/zone_reclaim_mode")
}

/// `kernel.numa_balancing` (AutoNUMA's mode: 0 off, 1 on, 2 tiering);
/// `None` on a kernel without it.
pub fn read_numa_balancing(root: &Root) -> Result<Option<u64>, ReadError> {
    read::number(root, "proc/sys/kernel/numa_balancing")
}

/// Whether AutoNUMA is on; `false` when the kernel has no such knob or it
/// cannot be read.
pub fn numa_balancing_on(root: &Root) -> bool {
    matches!(read_numa_balancing(root), Ok(Some(mode)) if mode != 0)
}

/// `kernel.perf_event_paranoid` (-1 to 4; it decides which perf events an
/// unprivileged user may open); `None` when absent or unreadable, as the
/// callers only quote it in an explanation.
pub fn perf_event_paranoid(root: &Root) -> Option<i32> {
    root.read("proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// All of `/proc/vmstat`; callers pick the reclaim, compaction, `numa_*`,
/// `pgmigrate*` and `numa_hint*` counters they need.
pub fn read_vmstat(root: &Root) -> Result<BTreeMap<String, u64>, ReadError> {
    let text = root.read(VMSTAT)?;
    parse_counters(&text).map_err(|e| ReadError::malformed(VMSTAT, e.0))
}

/// The vmstat counters that tell a NUMA or reclaim story.
pub fn is_numa_relevant(counter: &str) -> bool {
    const PREFIXES: [&str; 9] = [
        "numa_",
        "pgmigrate",
        "pgscan_",
        "pgsteal_",
        "allocstall",
        "compact_",
        "zone_reclaim",
        "kswapd",
        "pgdemote",
    ];
    PREFIXES.iter().any(|p| counter.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bracketed_choice() {
        // transparent_hugepage/{enabled,defrag} on this project's dev VM.
        assert_eq!(parse_choice("always [madvise] never\n").unwrap(), "madvise");
        assert_eq!(
            parse_choice("always defer defer+madvise [madvise] never\n").unwrap(),
            "madvise"
        );
        assert!(parse_choice("always madvise never").is_err());
        let defrag = parse_thp_mode("always defer [defer+madvise] madvise never\n").unwrap();
        assert_eq!(
            (defrag.clone(), defrag.to_string()),
            (ThpMode::DeferMadvise, "defer+madvise".into())
        );
        assert_eq!(
            parse_thp_mode("[sometimes] never").unwrap(),
            ThpMode::Other("sometimes".into())
        );
    }

    #[test]
    fn per_tick_knobs() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::directory(dir.path()).unwrap();
        assert_eq!(read_zone_reclaim_mode(&root).unwrap(), None);
        assert!(!numa_balancing_on(&root));
        std::fs::create_dir_all(dir.path().join("proc/sys/vm")).unwrap();
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
        std::fs::write(dir.path().join("proc/sys/vm/zone_reclaim_mode"), "1\n").unwrap();
        std::fs::write(dir.path().join("proc/sys/kernel/numa_balancing"), "2\n").unwrap();
        assert_eq!(read_zone_reclaim_mode(&root).unwrap(), Some(1));
        assert!(numa_balancing_on(&root));
        std::fs::write(dir.path().join("proc/sys/kernel/numa_balancing"), "0\n").unwrap();
        assert!(!numa_balancing_on(&root));
        std::fs::write(dir.path().join("proc/sys/vm/zone_reclaim_mode"), "on\n").unwrap();
        assert!(read_zone_reclaim_mode(&root).is_err());
        assert_eq!(perf_event_paranoid(&root), None);
        std::fs::write(dir.path().join("proc/sys/kernel/perf_event_paranoid"), "-1\n").unwrap();
        assert_eq!(perf_event_paranoid(&root), Some(-1));
    }

    #[test]
    fn swaps() {
        assert_eq!(
            parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n").unwrap(),
            0
        );
        assert_eq!(
            parse_swaps("Filename Type Size Used Priority\n/dev/vdb partition 1048572 0 -2\n").unwrap(),
            1
        );
        assert!(parse_swaps("").is_err());
    }

    #[test]
    fn relevant_counters() {
        assert!(is_numa_relevant("numa_hint_faults"));
        assert!(is_numa_relevant("pgmigrate_success"));
        assert!(is_numa_relevant("allocstall_normal"));
        assert!(!is_numa_relevant("nr_free_pages"));
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,60}") {
            let _ = parse_choice(&text);
            let _ = parse_swaps(&text);
        }
    }
}
