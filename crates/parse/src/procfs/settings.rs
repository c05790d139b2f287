//! The kernel knobs that decide NUMA behaviour, and `/proc/vmstat`.
//!
//! Each knob is optional: a kernel without NUMA balancing has no
//! `numa_balancing`, one without THP no `transparent_hugepage` directory.

use crate::error::{quote, ParseError};

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
