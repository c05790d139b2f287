//! `doctor -p PID`'s live probes: short observations of the running process
//! next to `inspect`'s findings, so `doctor -p` is the one entry point for
//! a process. Each probe is one entry of [`PROBES`] — a check id and a
//! function from the process to findings — so another probe is one more
//! entry. They run side by side within [`BUDGET`], stop early on Ctrl-C
//! (what they saw is judged), and are skipped with the reason under
//! `--quick`, on a snapshot, or for a kernel thread.

use std::time::Duration;

use numasleuth_analyze::findings::{Diagnosis, Finding};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
use numasleuth_model::stop::Stop;
use numasleuth_model::Topology;

use super::hot_args::HotMethod;
use super::hotlines::{sample_process, Sampling};

/// About how long `doctor -p` watches the process: every probe runs for
/// this, all at once.
pub const BUDGET: Duration = Duration::from_secs(1);

/// `contended-line` and `false-sharing` from a short `hotlines` sample.
pub const HOTLINES_CHECK: &str = "process-cache-lines";
/// `thread-hopping-nodes` and `numa-balancing-migrating` from a short
/// `migrations` observation.
pub const MIGRATIONS_CHECK: &str = "process-migrations";

/// What a probe gets: the live root, the machine, the process, how long,
/// and the stop token.
pub struct Target<'a> {
    pub root: &'a Root,
    pub topology: &'a Topology,
    pub pid: u32,
    pub duration: Duration,
    pub stop: &'a Stop,
}

pub struct Probe {
    pub check: &'static str,
    pub run: fn(&Target<'_>) -> anyhow::Result<Vec<Finding>>,
}

/// Every live probe of `doctor -p`, in report order.
pub const PROBES: &[Probe] = &[
    Probe {
        check: HOTLINES_CHECK,
        run: cache_lines,
    },
    Probe {
        check: MIGRATIONS_CHECK,
        run: migrations,
    },
];

/// Runs every probe on `pid` side by side, or records why none can run.
pub fn run(root: &Root, topology: &Topology, pid: u32, quick: bool, diagnosis: &mut Diagnosis) {
    let skip_all = |diagnosis: &mut Diagnosis, why: &str| {
        for probe in PROBES {
            diagnosis.skipped(probe.check, why);
        }
    };
    if quick {
        return skip_all(diagnosis, "--quick skips the live probes of the process");
    }
    if !root.is_live() {
        return skip_all(
            diagnosis,
            "live probes watch the running process; --root names a snapshot",
        );
    }
    match read_process_stat(root, pid) {
        Ok(stat) if stat.is_kernel_thread() => {
            return skip_all(diagnosis, &format!("process {pid} is a kernel thread"))
        }
        Ok(_) => {}
        Err(e) => return skip_all(diagnosis, &format!("process {pid}: {e:#}")),
    }
    say!(
        "numasleuth: watching process {pid} for {:.0} s (cache lines, thread moves)…",
        BUDGET.as_secs_f64()
    );
    let stop = super::stop_signal::stop_on_signals();
    let target = Target {
        root,
        topology,
        pid,
        duration: BUDGET,
        stop: &stop,
    };
    let results: Vec<anyhow::Result<Vec<Finding>>> = std::thread::scope(|scope| {
        let running: Vec<_> = PROBES
            .iter()
            .map(|probe| scope.spawn(|| (probe.run)(&target)))
            .collect();
        running
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the probe failed")))
            })
            .collect()
    });
    for (probe, result) in PROBES.iter().zip(results) {
        match result {
            Ok(found) => diagnosis.ran(probe.check, found),
            Err(e) => diagnosis.skipped(probe.check, format!("process {pid}: {e:#}")),
        }
    }
}

fn cache_lines(t: &Target<'_>) -> anyhow::Result<Vec<Finding>> {
    let how = Sampling {
        duration: t.duration,
        top: 8,
        frequency: 4000,
        method: HotMethod::Auto,
    };
    let sampled = sample_process(t.root, (t.pid, t.topology), &how, t.stop, false)?;
    Ok(numasleuth_analyze::hotlines::findings(
        t.pid,
        &sampled.lines,
        sampled.tally.accesses(),
        sampled.raw.duration_s,
    ))
}

fn migrations(t: &Target<'_>) -> anyhow::Result<Vec<Finding>> {
    super::migrations::doctor_findings(t.root, t.topology, t.pid, t.duration, t.stop)
}
