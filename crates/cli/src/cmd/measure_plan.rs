//! Stage two for `mem` and `c2c`: resolve what the user typed against the
//! live machine (nodes, allowed CPUs, free memory) and refuse, with a clear
//! message, anything that could not be measured honestly.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use numasleuth_analyze::mem::placement_note;
use numasleuth_analyze::memwatch::node_samples;
use numasleuth_analyze::working_set::NodeRoom;
use numasleuth_kernel::procfs::zoneinfo;
use numasleuth_kernel::{IdList, Root};
use numasleuth_measure::steps::StepError;
use numasleuth_measure::{affinity, clock, PageKind, Placement};
use numasleuth_model::stop::{RunSpan, Stop};
use numasleuth_model::Topology;
use numasleuth_report::format;
use numasleuth_report::mem_json::PlacementCheck;

use super::measure_args::PagesArg;

pub struct Machine {
    pub topo: Topology,
    /// CPUs this process can pin to: its affinity mask, online only.
    pub allowed_cpus: IdList,
    /// Each node's high watermark over its ordinary zones, in bytes, from
    /// /proc/zoneinfo; empty when it could not be read. Working sets keep
    /// clear of it.
    pub high_watermark_bytes: BTreeMap<u32, u64>,
}

pub fn machine(root: &Root, command: &str) -> anyhow::Result<Machine> {
    if !root.is_live() {
        bail!(
            "`{command}` measures this machine, so it cannot run on --root {}",
            root.base().display()
        );
    }
    let topo = super::topology(root)?;
    let mask: IdList = affinity::allowed_cpus()
        .context("cannot tell which CPUs this process may use")?
        .into_iter()
        .collect();
    let online = topo.online_cpus();
    let allowed_cpus = if online.is_empty() {
        mask
    } else {
        mask.intersection(&online)
    };
    if allowed_cpus.is_empty() {
        bail!("this process may run on no online CPU");
    }
    Ok(Machine {
        topo,
        allowed_cpus,
        high_watermark_bytes: high_watermarks(root),
    })
}

/// High watermarks by node, summed over the zones ordinary allocations use
/// (memwatch's one definition); empty when /proc/zoneinfo is unreadable,
/// which the working-set notes then say.
fn high_watermarks(root: &Root) -> BTreeMap<u32, u64> {
    let Ok(zones) = zoneinfo::read(root) else {
        return BTreeMap::new();
    };
    let page_bytes = numasleuth_kernel::pages::page_size_bytes();
    node_samples(&zones, &BTreeMap::new(), &BTreeMap::new())
        .into_iter()
        .map(|n| (n.node, n.high_pages.saturating_mul(page_bytes)))
        .collect()
}

impl Machine {
    /// Narrows the CPUs to those given with `-C`, refusing any this process
    /// may not use: pinning there would fail mid-run, or measure nothing.
    pub fn restrict_cpus(&mut self, only: Option<&IdList>) -> anyhow::Result<()> {
        let Some(only) = only else {
            return Ok(());
        };
        let outside = only.difference(&self.allowed_cpus);
        if !outside.is_empty() {
            bail!(
                "CPU{} {} {} outside the CPUs this process may use ({}; sched_getaffinity and the online mask)",
                plural(outside.len()),
                outside.to_human(),
                if outside.len() == 1 { "is" } else { "are" },
                self.allowed_cpus.to_human()
            );
        }
        self.allowed_cpus = only.clone();
        Ok(())
    }

    fn node_ids(&self) -> String {
        self.topo.nodes.iter().map(|n| n.id).collect::<IdList>().to_string()
    }

    pub fn check_node(&self, node: u32) -> anyhow::Result<()> {
        match self.topo.node(node) {
            None => bail!(
                "node {node} does not exist; this machine has node{} {}",
                plural(self.topo.nodes.len()),
                self.node_ids()
            ),
            Some(n) if !n.may_hold_memory() => bail!("node {node} has no memory to place a buffer on"),
            Some(_) => Ok(()),
        }
    }

    pub fn check_cpu(&self, cpu: u32) -> anyhow::Result<()> {
        if !self.allowed_cpus.contains(cpu) {
            bail!(
                "CPU {cpu} is outside the CPUs this process may use ({}; sched_getaffinity and the online mask)",
                self.allowed_cpus
            );
        }
        Ok(())
    }

    /// What node `node` has free for a working set; `None` when its free
    /// memory is unknown.
    pub fn room(&self, node: u32) -> Option<NodeRoom> {
        Some(NodeRoom {
            node,
            free_bytes: self.topo.node(node)?.memory_free_bytes?,
            high_watermark_bytes: self.high_watermark_bytes.get(&node).copied(),
            // The buffers are allocated here, so this machine's page size.
            base_page_bytes: numasleuth_kernel::pages::page_size_bytes(),
        })
    }

    /// The node `cpu` is on, or a one-line error when the kernel does not
    /// say: a measurement is never placed on node 0 by guess.
    pub fn cpu_home_node(&self, cpu: u32) -> anyhow::Result<u32> {
        self.topo
            .node_of_cpu(cpu)
            .with_context(|| format!("the kernel does not say which node CPU {cpu} is on (no node lists it)"))
    }

    /// Allowed CPUs of `node`, in order.
    pub fn cpus_of(&self, node: u32) -> Vec<u32> {
        match self.topo.node(node) {
            Some(n) => n.cpus.intersection(&self.allowed_cpus).iter().collect(),
            None => Vec::new(),
        }
    }

    /// (initiators, targets): nodes with allowed CPUs, nodes with memory,
    /// limited to `only` when given (every id in it must exist).
    pub fn nodes(&self, only: Option<&IdList>) -> anyhow::Result<(Vec<u32>, Vec<u32>)> {
        if let Some(only) = only {
            for id in only.iter() {
                if self.topo.node(id).is_none() {
                    bail!(
                        "node {id} does not exist; this machine has node{} {}",
                        plural(self.topo.nodes.len()),
                        self.node_ids()
                    );
                }
            }
        }
        let chosen = |id: u32| only.is_none_or(|o| o.contains(id));
        let initiators: Vec<u32> = self
            .topo
            .nodes
            .iter()
            .map(|n| n.id)
            .filter(|&id| chosen(id) && !self.cpus_of(id).is_empty())
            .collect();
        let targets: Vec<u32> = self
            .topo
            .nodes
            .iter()
            .filter(|n| chosen(n.id) && n.may_hold_memory())
            .map(|n| n.id)
            .collect();
        if initiators.is_empty() {
            bail!(
                "none of the chosen nodes has a CPU this process may use (allowed CPUs {})",
                self.allowed_cpus
            );
        }
        if targets.is_empty() {
            bail!("none of the chosen nodes has memory");
        }
        Ok((initiators, targets))
    }

    /// Refuses a buffer larger than the node's free memory: binding it
    /// there would wake the OOM killer rather than fail cleanly.
    pub fn check_fits(&self, node: u32, bytes: usize, what: &str) -> anyhow::Result<()> {
        let free = self.topo.node(node).and_then(|n| n.memory_free_bytes);
        if free.is_none() {
            // The node's free memory is unknown: the machine's memory is
            // still a hard bound, so a typo cannot summon the OOM killer.
            if let Some(total) = self.topo.memory_total_bytes.filter(|t| bytes as u64 > *t) {
                bail!(
                    "{what} needs {}, more than this machine's {} of memory (MemTotal in /proc/meminfo); use a \
                     smaller --size",
                    format::bytes(bytes as u64),
                    format::bytes(total)
                );
            }
        }
        if let Some(free) = free {
            if bytes as u64 > free {
                bail!(
                    "{what} needs {} on node {node}, more than its {} of free memory \
                     (MemFree in /sys/devices/system/node/node{node}/meminfo); use a smaller --size",
                    format::bytes(bytes as u64),
                    format::bytes(free)
                );
            }
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub fn page_kind(pages: PagesArg) -> PageKind {
    match pages {
        PagesArg::Small => PageKind::Small,
        PagesArg::Thp => PageKind::Transparent,
        PagesArg::Huge => PageKind::HugeTlb,
    }
}

pub fn page_kind_name(pages: PagesArg) -> &'static str {
    match pages {
        PagesArg::Small => "base",
        PagesArg::Thp => "transparent huge",
        PagesArg::Huge => "hugetlb",
    }
}

pub fn placement_check(what: String, placement: &Placement) -> PlacementCheck {
    let elsewhere: Vec<(u32, usize)> = placement.pages_elsewhere.iter().map(|e| (e.node, e.pages)).collect();
    let note = placement_note(
        placement.verified,
        placement.unverifiable.as_deref(),
        &elsewhere,
        placement.pages_unknown,
    );
    PlacementCheck {
        what,
        node: placement.requested_node,
        pages_checked: placement.pages_checked,
        pages_on_node: placement.pages_on_node,
        verified: placement.verified,
        note,
    }
}

/// A grid step that failed, as the one-line error `numasleuth` prints:
/// `what` names the step ("CPUs 0 and 1"), the cause follows.
pub fn step_error<S>(failed: StepError<S>, what: impl FnOnce(&S) -> String) -> anyhow::Error {
    anyhow::Error::new(failed.error).context(what(&failed.step))
}

/// Reference cycles per ns when known, and what they are or why not.
pub fn cycles() -> (Option<f64>, String) {
    match clock::cycle_clock(20) {
        Ok(c) => (Some(c.cycles_per_ns), c.source),
        Err(reason) => (None, reason.to_string()),
    }
}

/// Colour only for a terminal, and never when NO_COLOR is set
/// (https://no-color.org).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A progress bar on stderr that appears only once work has taken more
/// than a second, and only on a terminal.
/// Progress of a run of steps (matrix cells, configurations), on stderr
/// once it takes more than a second, and the stop token its loop polls:
/// each loop asks [`Progress::stopped`] before its next step, so Ctrl-C
/// ends the run after the step under way and the report shows the steps
/// done ([`Progress::span`]).
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    total: u64,
    done: u64,
    message: String,
    stop: Stop,
}

impl Progress {
    pub fn new(total: u64, message: &str) -> Self {
        Progress {
            bar: None,
            start: Instant::now(),
            total,
            done: 0,
            message: message.to_string(),
            stop: super::stop_signal::stop_on_signals(),
        }
    }

    pub fn step(&mut self, what: &str) {
        if self.bar.is_none() && self.start.elapsed() > Duration::from_secs(1) && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(self.total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(numasleuth_kernel::safe_text::for_terminal(&self.message).into_owned());
            bar.set_position(self.done);
            self.bar = Some(bar);
        }
        self.done += 1;
        if let Some(bar) = &self.bar {
            // The progress bar is the one way to stderr that bypasses `say!`.
            bar.set_message(numasleuth_kernel::safe_text::for_terminal(what).into_owned());
            bar.set_position(self.done);
        }
    }

    /// Adds `steps` to those planned (cells measured again).
    pub fn plan_more(&mut self, steps: u64) {
        self.total += steps;
        if let Some(bar) = &self.bar {
            bar.set_length(self.total);
        }
    }

    /// Whether a stop (Ctrl-C, SIGTERM) was asked for: the caller ends
    /// before its next step.
    pub fn stopped(&self) -> bool {
        self.stop.requested()
    }

    /// The stop token for a measure grid to look at between its steps.
    pub fn stop_token(&self) -> Stop {
        self.stop.clone()
    }

    /// How the run went: the steps begun (each finishes before the loop
    /// looks at the token again) of those planned, in `unit`s.
    pub fn span(&self, unit: &str) -> RunSpan {
        RunSpan::stepped(self.start, self.done, self.total, unit)
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
