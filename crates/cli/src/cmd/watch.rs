//! `numasleuth watch PID --symbol S | --addr A`: count the writes to one
//! address with a hardware watchpoint on every thread, and name the code
//! that writes.
//!
//! Wiring only: resolve the symbol to a run-time address (`symbols`),
//! choose an aligned length (`analyze`), watch (`probe`), name the sampled
//! instruction addresses (`symbols`), rank (`analyze`), print (`report`).

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail};
use numasleuth_analyze::watch::{choose_len, len_beyond_object, summarize, Target};
use numasleuth_kernel::procfs::process::{mapping_at, read_process_stat};
use numasleuth_kernel::Root;
use numasleuth_model::stop::RunSpan;
use numasleuth_probe::{Access, WatchSpec};
use numasleuth_report::{watch_json, watch_text};
use numasleuth_symbols::{locate_all, ProcessObjects};

use super::process_args::WatchArgs;
use numasleuth_report::export::TextJson;

/// How often threads started during the watch are looked for.
const RESCAN_MS: u64 = 100;
/// Sample ring buffer per thread: 64 KiB, drained every 10 ms.
const RING_PAGES: usize = 16;

/// x86 reports a data watchpoint after the accessing instruction, so the
/// address looked up is one byte back, inside that instruction; Arm
/// reports the accessing instruction itself.
const IP_BACK_BYTES: u64 = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    1
} else {
    0
};

struct Resolved {
    address: u64,
    size_bytes: Option<u64>,
    symbol: Option<String>,
    object: Option<String>,
    notes: Vec<String>,
}

fn resolve(objects: &Result<ProcessObjects, anyhow::Error>, args: &WatchArgs) -> anyhow::Result<Resolved> {
    let Some(name) = &args.symbol else {
        let address = args.addr.ok_or_else(|| anyhow!("give --symbol NAME or --addr ADDR"))?;
        let object = objects
            .as_ref()
            .ok()
            .and_then(|o| o.object_at(address, address.saturating_add(1)))
            .map(|o| o.path.clone());
        return Ok(Resolved {
            address,
            size_bytes: None,
            symbol: None,
            object,
            notes: Vec::new(),
        });
    };
    let objects = objects.as_ref().map_err(|e| anyhow!("{e:#}"))?;
    let found = objects.find_symbol(name, args.object.as_deref())?;
    let Some(location) = found.iter().find(|l| l.runtime.is_some()) else {
        bail!("symbol `{name}` is thread-local: each thread has its own copy; watch one copy with --addr");
    };
    let range = location.runtime.clone().unwrap_or_default();
    let mut notes = Vec::new();
    let others: BTreeSet<&str> = found
        .iter()
        .map(|l| l.object.as_str())
        .filter(|o| *o != location.object)
        .collect();
    if !others.is_empty() {
        notes.push(format!(
            "`{name}` is also defined in {}; watching the one in {} (choose with --object)",
            others.into_iter().collect::<Vec<_>>().join(", "),
            location.object
        ));
    }
    Ok(Resolved {
        address: range.start,
        size_bytes: Some(location.symbol.size_bytes),
        symbol: Some(location.symbol.name.clone()),
        object: Some(location.object.clone()),
        notes,
    })
}

/// A watchpoint on an address no mapping holds would run and count 0
/// writes, which reads as "nobody writes it": refused instead. Maps that
/// cannot be read leave the answer to perf.
fn require_mapped(root: &Root, pid: u32, address: u64) -> anyhow::Result<()> {
    match mapping_at(root, pid, address) {
        Ok(Some(_)) | Err(_) => Ok(()),
        Ok(None) => bail!(
            "address {address:#x} is not mapped in process {pid} (no mapping in /proc/{pid}/maps holds it), so \
             nothing can write it; take an address from `numasleuth inspect -p {pid}` or name a --symbol"
        ),
    }
}

/// The watched length for `target` (refused when nothing maps its
/// address), and the warning when `--len` covers more than the symbol.
fn watched_len(root: &Root, pid: u32, target: &Resolved, asked: Option<u64>) -> anyhow::Result<(u64, Option<String>)> {
    require_mapped(root, pid, target.address)?;
    let len_bytes = choose_len(target.address, target.size_bytes, asked)?;
    let beyond = len_beyond_object(len_bytes, target.size_bytes);
    if let Some(warning) = &beyond {
        say!("numasleuth: warning: {warning}");
    }
    Ok((len_bytes, beyond))
}

pub fn run(root: &Root, args: &WatchArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    if !root.is_live() {
        bail!("watch needs the live system: a hardware watchpoint cannot be set on a snapshot (--root)");
    }
    let pid = args.pid();
    if read_process_stat(root, pid)?.is_kernel_thread() {
        bail!("process {pid} is a kernel thread: it has no user memory to watch");
    }
    let objects = ProcessObjects::load(root, pid).map_err(anyhow::Error::from);
    let target = resolve(&objects, args)?;
    let (len_bytes, beyond) = watched_len(root, pid, &target, args.len)?;
    let paranoid = numasleuth_kernel::procfs::settings::perf_event_paranoid(root);
    let spec = WatchSpec {
        pid,
        address: target.address,
        len_bytes,
        access: if args.rw { Access::ReadWrite } else { Access::Write },
        duration: args.duration,
        rescan_interval: std::time::Duration::from_millis(RESCAN_MS),
        ring_pages: RING_PAGES,
        paranoid,
    };
    let shown = target
        .symbol
        .clone()
        .unwrap_or_else(|| format!("{:#x}", target.address));
    say!(
        "numasleuth: watching {shown} ({len_bytes} byte(s) at {:#x}) in every thread of process {pid} {}…",
        target.address,
        super::stop_signal::how_long(args.duration)
    );
    let stop = super::stop_signal::stop_on_signals();
    let start = Instant::now();
    let raw = numasleuth_probe::watch(&spec, &stop)?;
    let span = RunSpan::timed(start, args.duration, &stop);
    let ips: Vec<u64> = raw
        .threads
        .iter()
        .flat_map(|t| &t.ip_hits)
        .map(|h| h.ip)
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    let mut notes = target.notes;
    notes.extend(beyond);
    if let Some(size) = target.size_bytes.filter(|s| *s > len_bytes) {
        notes.push(format!(
            "watching the first {len_bytes} of the {size} bytes of {shown} (a debug register covers at most 8)"
        ));
    }
    let locations = match &objects {
        Ok(objects) if !ips.is_empty() => {
            let (locations, problems) = locate_all(objects, &ips, IP_BACK_BYTES);
            notes.extend(problems);
            locations
        }
        Ok(_) => Vec::new(),
        Err(e) => {
            notes.push(format!("writers not named: {e:#}"));
            Vec::new()
        }
    };
    let mut summary = summarize(
        &raw,
        &locations,
        Target {
            symbol: target.symbol,
            object: target.object,
        },
    );
    summary.notes.splice(0..0, notes);
    let report = TextJson::new(watch_json::build(&summary), |layout| {
        watch_text::render(&summary, layout)
    });
    super::output::emit_run(root, &outputs, &report, Some(span))?;
    Ok(ExitCode::SUCCESS)
}
