//! Stage one of the CLI: what the user may type. Nothing here looks at the
//! system; commands resolve these values against it afterwards.

use std::path::PathBuf;

use clap::{Arg, Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "numasleuth",
    version = env!("NUMASLEUTH_LONG_VERSION"),
    about = "Find, prove and explain NUMA and cache-coherence performance problems",
    after_help = "Exit status: 0 success, 1 findings at or above --fail-on, 2 error."
)]
pub struct Cli {
    /// Read /proc and /sys from this directory or snapshot archive
    /// (.tar.gz) instead of the live system. Used by topo, doctor, irq
    /// (without --apply), memwatch, meminfo, snapshot, and inspect / lines
    /// -p of a process captured in the tree; every other command acts on
    /// the live system and refuses it with one line.
    #[arg(long, global = true, value_name = "PATH")]
    pub root: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// Each subcommand's arguments are built only when it runs (`defer`): the
/// whole tree is about 400 arguments, and building it for every run was a
/// third of `topo`'s start-up (bench/RESULTS.md).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Nodes, CPUs, memory per node, distances, caches, devices and the
    /// limits this process runs under.
    #[command(arg = root_arg(ROOT_READ))]
    Topo(TopoArgs),
    /// Capture every /proc and /sys file numasleuth reads, for offline
    /// analysis with --root.
    #[command(arg = root_arg(ROOT_SNAPSHOT))]
    Snapshot(SnapshotArgs),
    /// Every static check, ranked findings with evidence and a remedy.
    #[command(arg = root_arg(ROOT_DOCTOR))]
    Doctor(DoctorArgs),
    /// Device-node vs IRQ-affinity audit; `--fix` plans, `--apply` changes
    /// (with an undo journal).
    #[command(arg = root_arg(ROOT_IRQ))]
    Irq(IrqArgs),
    /// Reverse a change recorded in a journal by `--apply`.
    #[command(arg = root_arg(ROOT_READ))]
    Undo(UndoArgs),
    /// Per-node free memory against watermarks, reclaim and NUMA-fallback
    /// rates over time, with events when a node crosses a watermark.
    #[command(arg = root_arg(ROOT_MEMWATCH))]
    Memwatch(MemwatchArgs),
    /// Each node's meminfo in MiB side by side with a total (huge pages,
    /// slab, file, anon, …), like `numastat -m`.
    #[command(arg = root_arg(ROOT_READ))]
    Meminfo(crate::cmd::meminfo::MeminfoArgs),
    /// Node×node idle latency and bandwidth matrices; `mem latency
    /// --sizes`, `mem bandwidth` and `mem loaded` for one of them or a curve.
    #[command(arg = root_refused())]
    Mem(crate::cmd::measure_args::MemArgs),
    /// Core-to-core cache-line latency matrix, with the line on a chosen
    /// node (--home-node).
    #[command(arg = root_refused())]
    C2c(crate::cmd::measure_args::C2cArgs),
    /// Reproduce false sharing, lock scaling and the remote-global bug on
    /// this machine, and explain the numbers.
    #[command(arg = root_refused())]
    Lab(crate::cmd::lab_args::LabArgs),
    /// Where a process's memory and threads live, down to ELF sections,
    /// with findings (static data remote from its threads, policies).
    #[command(arg = root_arg(ROOT_PROCESS))]
    Inspect(crate::cmd::process_args::InspectArgs),
    /// Which symbols share each cache line of .data/.bss/.tdata/.tbss.
    #[command(arg = root_arg(ROOT_PROCESS))]
    Lines(crate::cmd::process_args::LinesArgs),
    /// Count writes to a symbol or address with a hardware watchpoint on
    /// every thread, and name the code that writes.
    #[command(arg = root_refused())]
    // clap does not wrap a usage line; this one fits 80 columns.
    #[command(override_usage = "numasleuth watch [OPTIONS] <PID|--pid <PID>>\n       <--symbol <NAME>|--addr <ADDR>>")]
    Watch(crate::cmd::process_args::WatchArgs),
    /// Move pages of a live process to a node (dry run unless --apply;
    /// `undo JOURNAL` moves them back).
    #[command(arg = root_refused())]
    // clap does not wrap a usage line; this one fits 80 columns.
    #[command(
        override_usage = "numasleuth move [OPTIONS] --to-node <N> <PID|--pid <PID>>\n       <--range <START-END>|--symbol <NAME>|--section <NAME>>"
    )]
    Move(crate::cmd::process_args::MoveArgs),
    /// Count every PMU event (hardware, cache, software, sysfs aliases) on
    /// a process or a command, scaled for multiplexing, with IPC; `pmu
    /// diff` ranks what changed between a good and a bad run.
    #[command(arg = root_refused())]
    Pmu(crate::cmd::pmu_args::PmuArgs),
    /// Run a workload N times from different start CPUs, decide whether
    /// its metric is bimodal, and explain the modes by start node or
    /// placement.
    #[command(arg = root_arg(ROOT_READ))]
    Runs(crate::cmd::runs_args::RunsArgs),
    /// Find the page whose placement changes a live workload's rate:
    /// move halves of a section's pages to the other node and back,
    /// reading a metric command, down to one page, then name its symbols.
    #[command(arg = root_arg(ROOT_READ))]
    // clap does not wrap a usage line; this one fits 80 columns.
    #[command(
        override_usage = "numasleuth bisect [OPTIONS] --metric-cmd <CMD> <PID|--pid <PID>>\n       <--range <START-END>|--section <NAME>>"
    )]
    Bisect(crate::cmd::bisect_args::BisectArgs),
    /// Prometheus/OpenMetrics exporter: /metrics on 127.0.0.1:9464, or
    /// --textfile DIR for node_exporter's textfile collector.
    #[command(arg = root_arg(ROOT_READ))]
    Serve(crate::cmd::serve_args::ServeArgs),
    /// Issue an operation at a fixed rate and record latency from each
    /// operation's intended start (coordinated omission corrected) beside
    /// the naive figure; spikes lined up with per-node memory events.
    #[command(arg = root_refused())]
    ProbeLatency(crate::cmd::probe_args::ProbeLatencyArgs),
    /// Live terminal view: per node CPU, free memory against watermarks,
    /// NUMA fallback and reclaim; processes with the most remote memory,
    /// CPU use or thread moves; Enter inspects one.
    #[command(arg = root_refused())]
    Top(crate::cmd::top::TopArgs),
    /// Each thread's moves between CPUs and NUMA nodes, and AutoNUMA's
    /// page migrations, over a window.
    #[command(arg = root_refused())]
    Migrations(crate::cmd::hot_args::MigrationsArgs),
    /// Which processes open kernel files that take the allocator's locks
    /// (/proc/slabinfo, pagetypeinfo, others' smaps), how often, and who
    /// started them.
    #[command(arg = root_refused())]
    Readers(crate::cmd::readers_args::ReadersArgs),
    /// Contended cache lines of a running process without a PMU: timer
    /// samples whose instruction is decoded to the address it touches.
    #[command(arg = root_refused())]
    Hotlines(crate::cmd::hot_args::HotlinesArgs),
    /// Hot memory of a running process from DAMON (no PMU needed), joined
    /// with the nodes its pages are on, its threads' nodes and its ELF
    /// symbols: hot remote pages, without moving anything.
    #[command(arg = root_refused())]
    Hotpages(crate::cmd::hotpages_args::HotpagesArgs),
    /// Print a shell completion script (bash, zsh or fish) to stdout.
    #[command(arg = root_refused())]
    Completions(crate::cmd::docs_gen::CompletionsArgs),
    /// Print the man page (roff) to stdout, or write one page per
    /// subcommand with --dir.
    #[command(arg = root_refused())]
    Man(crate::cmd::docs_gen::ManArgs),
}

/// `--root` as each subcommand's help shows it: the top-level text lists
/// every command, so a subcommand says only what `--root` does there, and
/// one that refuses it (it measures or watches the live system) hides it.
/// The argument stays global with the top level's id, so
/// `numasleuth mem --root X` still parses and refuses with its one line.
fn root_arg(help: &'static str) -> Arg {
    Arg::new("root")
        .long("root")
        .global(true)
        .value_name("PATH")
        .value_parser(clap::value_parser!(PathBuf))
        .help(help)
}

fn root_refused() -> Arg {
    root_arg("Refused: this command acts on the live system").hide(true)
}

const ROOT_READ: &str =
    "Read /proc and /sys from this directory or snapshot archive (.tar.gz) instead of the live system";
const ROOT_SNAPSHOT: &str = "Capture from this directory or snapshot archive instead of the live system";
const ROOT_DOCTOR: &str =
    "Diagnose this directory or snapshot archive (.tar.gz) instead of the live system; live probes and --measure are skipped";
const ROOT_IRQ: &str =
    "Audit this directory or snapshot archive (.tar.gz) instead of the live system; --apply needs the live system";
const ROOT_MEMWATCH: &str =
    "Show the one moment captured in this directory or snapshot archive (.tar.gz) instead of watching the live system";
const ROOT_PROCESS: &str =
    "Read this directory or snapshot archive (.tar.gz) instead of the live system; -p names a process captured in it";

/// `numasleuth damon-reaper --claims DIR`: the internal command that
/// `hotpages` starts to remove its kdamond after a SIGKILL. It is parsed on
/// its own, before [`Cli`], so it is in no help, completion script or man
/// page: nobody is offered a command they should not type.
#[derive(Debug, Parser)]
#[command(name = "numasleuth damon-reaper", hide = true)]
pub struct DamonReaperCli {
    #[command(flatten)]
    pub args: crate::cmd::hotpages_args::DamonReaperArgs,
}

impl DamonReaperCli {
    pub const NAME: &'static str = "damon-reaper";
}

impl Command {
    /// Every process the user named (by PID or by name), for
    /// `pid_arg::resolve` once the root is open. Every command is listed,
    /// with no catch-all arm: a command that gains a process argument
    /// cannot be left out of name resolution by accident (`hotpages -p
    /// NAME` once was, and ran on PID 0).
    pub fn processes_mut(&mut self) -> Vec<&mut crate::cmd::pid_arg::ProcessRef> {
        match self {
            Command::Doctor(a) => a.pid.iter_mut().collect(),
            Command::Snapshot(a) => a.pids.iter_mut().collect(),
            Command::Inspect(a) => a.process.typed_mut().into_iter().collect(),
            Command::Lines(a) => a.process.iter_mut().collect(),
            Command::Watch(a) => a.process.typed_mut().into_iter().collect(),
            Command::Move(a) => a.process.typed_mut().into_iter().collect(),
            Command::Pmu(a) => a.pid.iter_mut().collect(),
            Command::Bisect(a) => a.process.typed_mut().into_iter().collect(),
            Command::Serve(a) => a.pids.iter_mut().collect(),
            Command::Top(a) => a.pid.iter_mut().collect(),
            Command::Migrations(a) => a.typed_mut().into_iter().collect(),
            Command::Hotlines(a) => a.process.typed_mut().into_iter().collect(),
            Command::Hotpages(a) => a.process.typed_mut().into_iter().collect(),
            Command::Topo(_)
            | Command::Irq(_)
            | Command::Undo(_)
            | Command::Memwatch(_)
            | Command::Meminfo(_)
            | Command::Mem(_)
            | Command::C2c(_)
            | Command::Lab(_)
            | Command::Runs(_)
            | Command::ProbeLatency(_)
            | Command::Readers(_)
            | Command::Completions(_)
            | Command::Man(_) => Vec::new(),
        }
    }
}

#[derive(Debug, Args)]
pub struct TopoArgs {
    /// Print JSON (schema numasleuth.topo/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: crate::cmd::output::OutputArgs,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Where to write: a name ending in .tar.gz or .tgz makes an archive,
    /// anything else a new directory. Never overwrites.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: PathBuf,
    /// Also capture this process, by PID or by name (matched as every
    /// command's -p matches one: its comm, which must name one living
    /// process): what `inspect`, `lines -p` and `doctor -p` read of it,
    /// and each mapped file's path and build-id, so they run offline
    /// (`--root`). Repeat for several, at most 64.
    #[arg(short = 'p', long = "pid", value_name = "PID|NAME", action = clap::ArgAction::Append,
          value_parser = crate::cmd::pid_arg::process)]
    pub pids: Vec<crate::cmd::pid_arg::ProcessRef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Info,
    Warning,
    Critical,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON (schema numasleuth.doctor/2) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML report to this file (same as
    /// `-o FILE.html`).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub output: crate::cmd::output::OutputArgs,
    /// Exit 1 when a finding at or above this severity exists.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
    /// Also measure: a quick node×node latency and bandwidth matrix and the
    /// interconnect verdict (a few seconds per node pair; live system
    /// only), and with --pid a 3-second `hotpages` where DAMON can watch
    /// the process.
    #[arg(long)]
    pub measure: bool,
    /// Also judge this process: its placement (the `inspect` findings,
    /// e.g. static data on another node than its threads) and, live, about
    /// a second of its cache lines (false sharing, contended lines) and
    /// thread moves. A PID (1 to 4194304) or a process name.
    #[arg(short = 'p', long, value_name = "PID", value_parser = crate::cmd::pid_arg::process)]
    pub pid: Option<crate::cmd::pid_arg::ProcessRef>,
    /// With -p: only what can be read at once, without the second of live
    /// probes (cache lines, thread moves).
    #[arg(long, requires = "pid")]
    pub quick: bool,
}

#[derive(Debug, Args)]
pub struct IrqArgs {
    /// Print JSON (schema numasleuth.irq/1) instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub output: crate::cmd::output::OutputArgs,
    /// Print a plan that moves off-node IRQs onto their device's local CPUs.
    #[arg(long)]
    pub fix: bool,
    /// Apply the plan (implies --fix); needs root. Writes an undo journal.
    #[arg(long)]
    pub apply: bool,
    /// Where --apply writes its journal [default: ./numasleuth-irq-<time>.journal.json].
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub journal: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// A journal written by `--apply`.
    #[arg(value_name = "JOURNAL")]
    pub journal: PathBuf,
}

#[derive(Debug, Args)]
pub struct MemwatchArgs {
    /// Time between samples, 100ms to 1h (faster sampling would start to
    /// cost what it measures).
    #[arg(long, default_value = "1s", value_parser = numasleuth_app::limits::text::memwatch_interval)]
    pub interval: std::time::Duration,
    /// How long to watch, 100ms to 7 days (168h); at most 100000 samples.
    #[arg(long, default_value = "60s", value_parser = numasleuth_app::limits::text::memwatch_duration)]
    pub duration: std::time::Duration,
    /// Print JSON lines (schema numasleuth.memwatch/2), one per sample.
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG chart of free pages against the low and min
    /// watermarks per node (same as `-o FILE.svg`).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub output: crate::cmd::output::OutputArgs,
}
