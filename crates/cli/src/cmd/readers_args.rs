//! What a user may type for `readers`; nothing here looks at the system.

use clap::{Args, ValueEnum};
use numasleuth_model::readers::LockFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReadersMethod {
    /// A kprobe where the kernel has a kprobe PMU, else the open
    /// tracepoints, else a /proc/*/fd scan (root).
    Auto,
    /// Only kprobes on the files' kernel functions: an error where
    /// there is no kprobe PMU.
    Kprobe,
    /// Only the syscalls:sys_enter_open* tracepoints with a name filter.
    Tracepoint,
    /// Scan /proc/*/fd every 100 ms (sampled: lower bounds).
    FdScan,
}

/// `--files slabinfo,smaps`: the lock files to watch, by their name in
/// /proc (a leading /proc/ or /proc/PID/ is accepted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files(pub Vec<LockFile>);

pub fn files(text: &str) -> Result<Files, String> {
    let known = || LockFile::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ");
    let mut chosen: Vec<LockFile> = Vec::new();
    for name in text.split(',').map(str::trim) {
        let file = LockFile::from_name(name).ok_or_else(|| {
            format!(
                "`{}` is not a file readers watches; give a comma-separated list of: {}",
                numasleuth_kernel::error::quote(name),
                known()
            )
        })?;
        if !chosen.contains(&file) {
            chosen.push(file);
        }
    }
    Ok(Files(chosen))
}

#[derive(Debug, Args)]
pub struct ReadersArgs {
    /// How long to watch, 100ms to 1h.
    #[arg(long, default_value = "30s", value_parser = numasleuth_app::limits::text::sample_duration)]
    pub duration: std::time::Duration,
    /// The files to watch, comma-separated: slabinfo, pagetypeinfo, smaps,
    /// smaps_rollup, numa_maps, kpageflags, kpagecount [default: all].
    #[arg(long, value_name = "LIST", value_parser = files)]
    pub files: Option<Files>,
    /// How opens are seen.
    #[arg(long, value_enum, default_value = "auto", value_name = "METHOD")]
    pub method: ReadersMethod,
    /// Print JSON (schema numasleuth.readers/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

impl ReadersArgs {
    pub fn files(&self) -> Vec<LockFile> {
        self.files
            .as_ref()
            .map_or_else(|| LockFile::ALL.to_vec(), |f| f.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lists() {
        assert_eq!(files("slabinfo").unwrap().0, [LockFile::Slabinfo]);
        assert_eq!(
            files("/proc/slabinfo, smaps_rollup,slabinfo").unwrap().0,
            [LockFile::Slabinfo, LockFile::SmapsRollup]
        );
        assert_eq!(files("/proc/PID/numa_maps").unwrap().0, [LockFile::NumaMaps]);
        for bad in ["", "meminfo", "slabinfo,", "slabinfo,,smaps", "nan", "\u{1b}[2J"] {
            let err = files(bad).unwrap_err();
            assert!(err.contains("is not a file readers watches"), "{bad}: {err}");
            assert!(!err.contains('\u{1b}'), "{err}");
        }
    }
}
