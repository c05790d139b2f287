//! What a user may type for `hotpages`, and the hidden reaper command
//! `hotpages` starts beside itself.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct HotpagesArgs {
    /// The process whose memory DAMON watches.
    #[command(flatten)]
    pub process: super::pid_arg::PidArg,
    /// How long DAMON watches, 1s to 1h.
    #[arg(long, default_value = "10s", value_parser = numasleuth_app::limits::text::damon_duration)]
    pub duration: std::time::Duration,
    /// Regions shown, 1 to 1000.
    #[arg(long, default_value = "20", value_name = "N", value_parser = numasleuth_app::limits::text::top_lines)]
    pub top: usize,
    /// Print JSON (schema numasleuth.hotpages/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

impl HotpagesArgs {
    pub fn pid(&self) -> u32 {
        self.process.get()
    }
}

/// `numasleuth damon-reaper --claims DIR`: started by `hotpages` with a
/// pipe on stdin; when the pipe closes (numasleuth ended, however) it
/// removes the kdamond a claim in DIR names, if it is still there.
#[derive(Debug, Args)]
pub struct DamonReaperArgs {
    #[arg(long, value_name = "DIR")]
    pub claims: PathBuf,
}
