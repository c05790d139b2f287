//! Stage one for `mem` and `c2c`: what the user may type. Lists use
//! numactl syntax and sizes take K/M/G suffixes (powers of 1024); nothing
//! here looks at the machine.

use clap::{Args, Subcommand, ValueEnum};
use numasleuth_kernel::IdList;

use numasleuth_app::limits::text::{buffer_size, size_sweep};
use numasleuth_app::limits::text::{cpu_list, node_list};
use numasleuth_parse::typed::Sizes;

#[derive(Debug, Args)]
#[command(mut_arg("output", |a| a.global(true)), mut_arg("format", |a| a.global(true)))]
pub struct MemArgs {
    #[command(subcommand)]
    pub mode: Option<MemMode>,
    #[command(flatten)]
    pub options: MemOptions,
}

#[derive(Debug, Subcommand)]
pub enum MemMode {
    /// Idle latency: the node×node matrix, or latency against buffer size
    /// with --sizes.
    Latency(LatencyArgs),
    /// The node×node bandwidth matrix for one read:write mix.
    Bandwidth,
    /// Latency while other CPUs read memory at decreasing intensity, like
    /// MLC's --loaded_latency.
    Loaded(LoadedArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MixArg {
    /// Only reads.
    Read,
    /// Two reads per write (c = a + b).
    #[value(name = "2:1")]
    TwoToOne,
    /// One read per write (b = a + 1).
    #[value(name = "1:1")]
    OneToOne,
    /// Only writes (non-temporal stores on x86_64).
    Write,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PagesArg {
    /// Base pages only.
    Small,
    /// Transparent huge pages where the kernel has them (madvise).
    Thp,
    /// Reserved hugetlb pages (MAP_HUGETLB); an error when none are free.
    Huge,
}

#[derive(Debug, Args)]
pub struct MemOptions {
    /// Print JSON (schema numasleuth.mem/2).
    #[arg(long, global = true, conflicts_with = "csv")]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// Print CSV, one row per measured cell.
    #[arg(long, global = true)]
    pub csv: bool,
    /// Also put every sample as measured into the JSON (`raw`): elapsed
    /// ns, clock overhead and loads per sample, bytes per sample.
    #[arg(long, global = true, requires = "json")]
    pub raw: bool,
    /// Only these nodes (numactl syntax, e.g. 0-1,3, or 0-6:2); default all.
    #[arg(short = 'N', long, global = true, value_name = "LIST", value_parser = node_list)]
    pub nodes: Option<IdList>,
    /// Only these CPUs (numactl syntax, e.g. 0-3,8, or 0-30:2), like
    /// numactl --physcpubind: the first listed CPU of each node chases
    /// latency (and the first listed CPU chases in `latency --sizes` and
    /// `loaded`, where the node's other listed CPUs make the load), and a
    /// node's listed CPUs run its bandwidth threads. Default: every CPU
    /// this process may use.
    #[arg(short = 'C', long, global = true, visible_alias = "cpu", value_name = "LIST", value_parser = cpu_list)]
    pub cpus: Option<IdList>,
    /// Fewer, shorter samples: a rough answer sooner. The working set stays
    /// as large as without it (4× the largest cache, 8× for bandwidth), so the figure is
    /// still memory, not cache.
    #[arg(long, global = true)]
    pub quick: bool,
    /// Samples kept per cell, 1 to 1000 (a warm-up sample is always
    /// discarded).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub samples: Option<u32>,
    /// Target duration of one sample: milliseconds (`40`) or a duration
    /// (`40ms`, `0.5s`), 1ms to 60s.
    #[arg(long, global = true, value_name = "MS", value_parser = numasleuth_app::limits::text::sample_ms)]
    pub sample_ms: Option<u64>,
    /// Buffer size per latency cell, and in total per bandwidth cell
    /// (e.g. 256M, 1G): 4K to 16T, and no more than the node's free memory.
    /// Default: 4× the largest cache the measuring CPUs share (from sysfs;
    /// 8× for bandwidth, whose sweep adaptive caches keep a share of),
    /// bounded by the node's free memory above its high watermark. The
    /// latency matrix doubles that default (at most 8×, said on stderr)
    /// while a chase at twice it is over 10% slower: a VM's sysfs may
    /// report less cache than its host has. A --size is honoured as
    /// given (a smaller one with a warning naming the cache), and its
    /// self-check chases twice it once (said on stderr before it runs).
    #[arg(long, global = true, value_name = "BYTES", value_parser = buffer_size)]
    pub size: Option<usize>,
    /// Bandwidth threads per node, 1 to 4096 and at most the node's allowed
    /// CPUs (default: every allowed CPU of the node).
    #[arg(long, global = true, value_name = "N", value_parser = numasleuth_app::limits::text::threads)]
    pub threads: Option<u32>,
    /// Read:write mix for bandwidth.
    #[arg(long, global = true, value_enum, default_value_t = MixArg::Read)]
    pub mix: MixArg,
    /// Page size behind every buffer.
    #[arg(long, global = true, value_enum, default_value_t = PagesArg::Thp)]
    pub pages: PagesArg,
}

#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// Sweep buffer sizes instead of the matrix: `16K..1G` (powers of two)
    /// or a list `32K,1M,256M`; each 4K to 16T, at most 64 sizes.
    #[arg(long, value_name = "SIZES", value_parser = size_sweep)]
    pub sizes: Option<Sizes>,
    /// The one node whose memory the sweep chases through (default: the
    /// chasing CPU's own node). One node, unlike -N's list of nodes to
    /// measure between.
    #[arg(long, value_name = "NODE")]
    pub node: Option<u32>,
}

#[derive(Debug, Args)]
pub struct LoadedArgs {
    /// Busy-wait per 4 KiB read by each load thread, in ns: a list of up
    /// to 64 delays, each 0 to 1000000.
    #[arg(long, value_name = "NS,…", value_parser = numasleuth_app::limits::text::delays_ns)]
    pub delays: Option<numasleuth_parse::typed::DelaysNs>,
    /// The one node whose memory is chased and loaded (default: the
    /// chasing CPU's own node). One node, unlike -N's list of nodes.
    #[arg(long, value_name = "NODE")]
    pub node: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Compare-and-swap ping-pong; reports round trip / 2.
    Cas,
    /// One store timed by the loading CPU's clock.
    OneWay,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SampleArg {
    /// Every CPU up to 64, else one per cache domain.
    Auto,
    /// Every allowed CPU.
    All,
    /// One CPU per physical core (no SMT siblings).
    Core,
    /// One CPU per last-level cache domain (core complex).
    Cache,
    /// One CPU per node.
    Node,
}

#[derive(Debug, Args)]
pub struct C2cArgs {
    /// Print JSON (schema numasleuth.c2c/1).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    #[command(flatten)]
    pub output: super::output::OutputArgs,
    /// Print CSV, one row per measured pair and direction.
    #[arg(long)]
    pub csv: bool,
    /// Only these CPUs (numactl syntax, e.g. 0-3,8, or 0-30:2); default
    /// every allowed CPU.
    #[arg(short = 'C', long, value_name = "LIST", value_parser = cpu_list)]
    pub cpus: Option<IdList>,
    /// The one node whose memory holds the contended line (default: the
    /// first CPU's node); named apart from -N because it places memory
    /// rather than choosing what to measure.
    #[arg(long, value_name = "NODE")]
    pub home_node: Option<u32>,
    #[arg(long, value_enum, default_value_t = MethodArg::Cas)]
    pub method: MethodArg,
    /// Which CPUs stand for the machine, so large machines finish.
    #[arg(long, value_enum, default_value_t = SampleArg::Auto)]
    pub sample: SampleArg,
    /// Samples kept per pair (1 to 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub samples: Option<u32>,
    /// Round trips (or one-way transfers) averaged into one sample (1 to
    /// 10000000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub transfers: Option<u32>,
    /// Fewer samples and transfers.
    #[arg(long)]
    pub quick: bool,
    /// Also put every sample into the JSON: `raw_latency_ns` (ns per
    /// transfer) and `raw_timing` (elapsed ns as measured, clock overhead,
    /// clock reads and transfers per sample).
    #[arg(long, requires = "json")]
    pub raw: bool,
}
