//! What a user may type for `hotlines` and `migrations`.

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HotMethod {
    /// Precise memory sampling where the kernel offers it (cpu/mem-loads,
    /// ibs_op), else ip-decode. Arm's arm_spe, whose reading has not met
    /// hardware, only with --method precise.
    Auto,
    /// Timer samples, the sampled instruction decoded (works in VMs).
    IpDecode,
    /// Precise memory sampling only: an error where there is none.
    Precise,
}

#[derive(Debug, Args)]
pub struct HotlinesArgs {
    /// The process to sample.
    #[command(flatten)]
    pub process: super::pid_arg::PidArg,
    /// How long to sample, 100ms to 1h.
    #[arg(long, default_value = "5s", value_parser = numasleuth_app::limits::text::sample_duration)]
    pub duration: std::time::Duration,
    /// Lines shown, 1 to 1000.
    #[arg(long, default_value = "20", value_name = "N", value_parser = numasleuth_app::limits::text::top_lines)]
    pub top: usize,
    /// ip-decode: timer samples per second of each thread's CPU time, 10
    /// to 20000.
    #[arg(long, default_value = "4000", value_name = "HZ", value_parser = numasleuth_app::limits::text::sample_hz)]
    pub frequency: u64,
    /// How accesses are found.
    #[arg(long, value_enum, default_value = "auto", value_name = "METHOD")]
    pub method: HotMethod,
    /// Print JSON (schema numasleuth.hotlines/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MigrationMethod {
    /// The sched_migrate_task tracepoint where permitted, else sampled.
    Auto,
    /// Only the tracepoint: an error where it cannot be used.
    Tracepoint,
    /// Poll /proc/PID/task/*/stat (moves shorter than the interval are
    /// missed).
    Sampled,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["pid", "pid_flag", "all"])))]
pub struct MigrationsArgs {
    /// The process whose threads are followed: a PID (1 to 4194304) or a
    /// name; the same as -p PID.
    #[arg(value_name = "PID", value_parser = super::pid_arg::process, conflicts_with = "pid_flag")]
    pub pid: Option<super::pid_arg::ProcessRef>,
    /// The process whose threads are followed: a PID (1 to 4194304) or a
    /// name.
    #[arg(short = 'p', long = "pid", id = "pid_flag", value_name = "PID", value_parser = super::pid_arg::process)]
    pub pid_flag: Option<super::pid_arg::ProcessRef>,
    /// Every task on the machine.
    #[arg(long)]
    pub all: bool,
    /// How long to watch, 100ms to 1h.
    #[arg(long, default_value = "10s", value_parser = numasleuth_app::limits::text::sample_duration)]
    pub duration: std::time::Duration,
    /// How moves are seen.
    #[arg(long, value_enum, default_value = "auto", value_name = "METHOD")]
    pub method: MigrationMethod,
    /// Polling interval of the sampled method, 1ms to 10s [default: 10ms
    /// for a PID, 100ms with --all].
    #[arg(long, value_name = "DURATION", value_parser = numasleuth_app::limits::text::poll_interval)]
    pub interval: Option<std::time::Duration>,
    /// Print JSON (schema numasleuth.migrations/2) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
}

impl HotlinesArgs {
    pub fn pid(&self) -> u32 {
        self.process.get()
    }
}

impl MigrationsArgs {
    /// The process given bare or with -p, or `None` for `--all`.
    pub fn process(&self) -> Option<u32> {
        self.pid_flag
            .as_ref()
            .or(self.pid.as_ref())
            .map(super::pid_arg::ProcessRef::pid)
    }

    /// The process as typed, for `pid_arg::resolve`.
    pub fn typed_mut(&mut self) -> Option<&mut super::pid_arg::ProcessRef> {
        self.pid_flag.as_mut().or(self.pid.as_mut())
    }
}
