//! `numasleuth watch PID --symbol S | --addr A`: count the writes to one
//! address with a hardware watchpoint on every thread, and name the code
//! that writes.
//!
//! Wiring only: resolve the symbol to a run-time address (`symbols`),
//! choose an aligned length (`analyze`), watch (`probe`), name the sampled
//! instruction addresses (`symbols`), rank (`analyze`), print (`report`).

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{anyhow, bail};
use numasleuth_analyze::watch::{choose_len, summarize, Target};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
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
    let len_bytes = choose_len(target.address, target.size_bytes, args.len).map_err(anyhow::Error::msg)?;
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
        "numasleuth: watching {shown} ({len_bytes} byte(s) at {:#x}) in every thread of process {pid} for {:.1} s…",
        target.address,
        args.duration.as_secs_f64()
    );
    let raw = numasleuth_probe::watch(&spec)?;
    let ips: Vec<u64> = raw
        .threads
        .iter()
        .flat_map(|t| &t.ip_hits)
        .map(|h| h.ip)
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    let mut notes = target.notes;
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
    let report = TextJson::new(watch_json::build(&summary), |_| watch_text::render(&summary));
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
