//! `numasleuth move PID (--range | --symbol | --section) --to-node N`:
//! migrate pages of a live process, dry run unless `--apply`.
//!
//! Wiring only: resolve what to move to run-time ranges (`symbols`), ask
//! move_pages where each page is, plan (`analyze`), and with `--apply`
//! move through the journal (`change`), then show both verifications: a
//! fresh move_pages query and numa_maps of the mappings holding the pages.

use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use numasleuth_analyze::page_move::{self, numa_maps_check, MovePlan, VmaPages};
use numasleuth_change::{apply_pages, Journal, JournalKey, MachineIdentity, PageMove};
use numasleuth_kernel::pages::{self, Residency};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::procfs::settings;
use numasleuth_kernel::Root;
use numasleuth_report::move_json::{self, AppliedJson, MoveDocument, VmaJson};
use numasleuth_report::{format, move_text};

use super::page_targets::{mapped, residencies, targets, Asked};
use super::process_args::MoveArgs;
use numasleuth_report::export::TextJson;

/// Ends the hinting faults of the plan's hidden pages (`--apply` only:
/// reading them is a change, however small) and plans again.
fn reveal_and_replan(
    root: &Root,
    args: &MoveArgs,
    addresses: &[u64],
    mapped: &[VmaPages],
    plan: MovePlan,
    notes: &mut Vec<String>,
) -> anyhow::Result<MovePlan> {
    let hidden = plan.hinting_addresses();
    match pages::reveal(args.pid(), &hidden, args.to_node) {
        Ok(done) => {
            notes.push(format!(
                "{} of {} page(s) between NUMA-balancing hinting faults were read once (process_vm_readv) to end the \
                 fault, so move_pages can see and move them{}",
                done.read,
                hidden.len(),
                if done.placement_kept {
                    ""
                } else {
                    " (the reading thread's memory policy was refused: a fault may have moved a page first)"
                }
            ));
            let states = residencies(root, args.pid(), addresses, mapped, notes)?;
            Ok(page_move::plan(addresses, &states, args.to_node, plan.page_bytes))
        }
        Err(e) => {
            notes.push(format!(
                "{} resident page(s) between NUMA-balancing hinting faults could not be read to end the fault ({e}); \
                 they stay where they are until the process touches them",
                hidden.len()
            ));
            Ok(plan)
        }
    }
}

fn vma_json(vmas: &[VmaPages]) -> Vec<VmaJson> {
    vmas.iter()
        .map(|v| VmaJson {
            start: format!("{:#x}", v.span.start),
            end: format!("{:#x}", v.span.end),
            pages_by_node: v.pages_by_node.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
        })
        .collect()
}

fn page_moves(plan: &MovePlan, pid: u32, start_time: u64) -> Vec<PageMove> {
    plan.to_move
        .iter()
        .filter_map(|run| {
            Some(PageMove {
                pid,
                pid_start_time: start_time,
                address: run.start,
                pages: run.pages,
                page_bytes: plan.page_bytes,
                from_node: run.node?,
                to_node: plan.to_node,
            })
        })
        .collect()
}

pub fn run(root: &Root, args: &MoveArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    if !root.is_live() {
        bail!(
            "move needs the live system: where pages are is asked of the kernel (move_pages), not a snapshot (--root)"
        );
    }
    let topology = super::topology(root)?;
    let target_node = page_move::target_node(&topology, args.to_node)?;
    let pid = args.pid();
    let stat = read_process_stat(root, pid)?;
    if stat.is_kernel_thread() {
        bail!("process {pid} is a kernel thread: it has no user memory to move");
    }
    let Some(start_time) = stat.start_time_ticks else {
        bail!("/proc/{pid}/stat has no start time: cannot tie a journal to this process");
    };
    let asked = Asked {
        pid,
        range: args.range,
        symbol: args.symbol.as_deref(),
        section: args.section.as_deref(),
        object: args.object.as_deref(),
    };
    let targets = targets(root, &asked)?;
    let ranges: Vec<Range<u64>> = targets.iter().map(|(_, r)| r.clone()).collect();
    let page_bytes = pages::page_size_bytes();
    let found = mapped(root, pid, &ranges, page_bytes)?;
    if found.parts.is_empty() {
        bail!("process {pid} maps nothing in the pages asked for (see /proc/{pid}/maps)");
    }
    let addresses = page_move::pages_of(&found.parts, page_bytes);
    let before = found.vmas;
    let mut notes: Vec<String> = target_node.note.iter().cloned().collect();
    let states = residencies(root, pid, &addresses, &before, &mut notes)?;
    let mut plan = page_move::plan(&addresses, &states, args.to_node, page_bytes);
    if plan.pages_hinting() > 0 {
        if args.apply {
            plan = reveal_and_replan(root, args, &addresses, &before, plan, &mut notes)?;
        } else {
            notes.push(format!(
                "{} resident page(s) are between NUMA-balancing hinting faults: move_pages can neither see nor move \
                 them until the process touches them again (numa_maps counts them); --apply first reads one byte of \
                 each (process_vm_readv; the page stays where it is) to end the fault, then moves them",
                plan.pages_hinting()
            ));
        }
    }
    notes.extend(situation_notes(
        root,
        args,
        &plan,
        &ranges,
        found.mapped_bytes,
        topology.nodes.len(),
    ));
    let mut doc = move_json::plan(
        pid,
        &stat.comm,
        &target_node,
        targets.into_iter().map(|(t, _)| t).collect(),
        &plan,
        vma_json(&before),
        notes,
    );
    if args.apply && plan.pages_to_move() > 0 {
        let applied = Applied {
            plan: &plan,
            before: &before,
            ranges: &ranges,
            start_time,
        };
        apply(root, args, &applied, &mut doc)?;
    }
    let report = TextJson::new(&doc, |layout| move_text::render(&doc, layout));
    super::output::emit(root, &outputs, &report)?;
    refuse_leftovers(&doc, &plan, args)?;
    Ok(ExitCode::SUCCESS)
}

/// What the user should know beside the plan: asked memory that is not
/// mapped, an `--apply` with nothing to do, and AutoNUMA that may undo it.
fn situation_notes(
    root: &Root,
    args: &MoveArgs,
    plan: &MovePlan,
    ranges: &[Range<u64>],
    mapped_bytes: u64,
    nodes: usize,
) -> Vec<String> {
    let pid = args.pid();
    let mut out = Vec::new();
    let asked_bytes = page_move::asked_bytes(ranges);
    if asked_bytes > mapped_bytes {
        out.push(format!(
            "{} of what was asked for is not mapped by process {pid}, so it has no pages and was left out",
            format::bytes(asked_bytes - mapped_bytes)
        ));
    }
    if args.apply && plan.pages_to_move() == 0 && plan.pages_hinting() == 0 {
        out.push("--apply: nothing to move, so nothing was changed and no journal was written".into());
    }
    if settings::numa_balancing_on(root) && nodes > 1 {
        out.push(
            "kernel.numa_balancing is on: AutoNUMA may move these pages again, towards the threads that touch them"
                .into(),
        );
    }
    out
}

/// What `apply` needs of the plan made before it.
struct Applied<'a> {
    plan: &'a MovePlan,
    before: &'a [VmaPages],
    ranges: &'a [Range<u64>],
    start_time: u64,
}

/// Moves the plan's pages through a sealed journal, then records both
/// verifications (move_pages and numa_maps) in `doc`.
fn apply(root: &Root, args: &MoveArgs, a: &Applied<'_>, doc: &mut MoveDocument) -> anyhow::Result<()> {
    let pid = args.pid();
    let page_bytes = a.plan.page_bytes;
    let path = args.journal.clone().unwrap_or_else(|| default_journal(pid));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut journal = Journal::pages(MachineIdentity::read(root), now, page_moves(a.plan, pid, a.start_time));
    let key = JournalKey::for_this_user().context("cannot seal a journal, so nothing was moved")?;
    let outcome = apply_pages(root, &mut journal, &path, &key)
        .with_context(|| format!("cannot move the pages of process {pid}"))?;
    let after = mapped(root, pid, a.ranges, page_bytes)?.vmas;
    let check = numa_maps_check(a.before, &after, args.to_node, outcome.verified);
    if let Some(why) = &outcome.reveal_failed {
        doc.notes.push(why.clone());
    }
    let not_moved: Vec<(u64, Residency)> = outcome.not_moved.iter().map(|s| (s.address, s.residency)).collect();
    doc.numa_maps_after = Some(vma_json(&after));
    doc.applied = Some(AppliedJson {
        journal: path.display().to_string(),
        attempted: outcome.attempted,
        verified: outcome.verified,
        not_moved: move_json::state_runs(&not_moved, page_bytes),
        revealed: outcome.revealed,
        numa_maps_gained: check.gained,
        numa_maps_agrees: check.agrees,
    });
    Ok(())
}

/// An error (after the report is printed) when `--apply` left pages behind.
fn refuse_leftovers(doc: &MoveDocument, plan: &MovePlan, args: &MoveArgs) -> anyhow::Result<()> {
    if let Some(applied) = &doc.applied {
        if applied.verified < applied.attempted {
            bail!(
                "{} of {} page(s) are not on node {} afterwards (listed above); the journal {} moves back those that moved",
                applied.attempted - applied.verified,
                applied.attempted,
                args.to_node,
                applied.journal
            );
        }
    }
    if args.apply && plan.pages_hinting() > 0 {
        bail!(
            "{} resident page(s) between NUMA-balancing hinting faults could not be moved (see the note above): run as \
             root or the process's user with ptrace rights, or retry once the process has touched them",
            plan.pages_hinting()
        );
    }
    Ok(())
}

fn default_journal(pid: u32) -> PathBuf {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from(format!("numasleuth-move-{pid}-{now}.journal.json"))
}
