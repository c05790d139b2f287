//! `move PID (--range | --symbol | --section) --to-node N`'s pipeline:
//! migrate pages of a live process, a dry run unless the request applies.
//!
//! What to move is resolved to run-time ranges and each page's place is
//! asked of move_pages ([`page_targets::set_up`], shared with `bisect`),
//! the move is planned (`analyze::page_move`), and when applied the pages
//! move through the journal (`change`), after which both verifications
//! are recorded: a fresh move_pages query and numa_maps of the mappings
//! holding the pages. [`run`] returns the document `report` renders;
//! [`leftovers`] is the error a front-end raises after printing it.

use std::path::PathBuf;

use numasleuth_analyze::move_document::{Applied, MoveDocument};
use numasleuth_analyze::page_move::{self, numa_maps_check, MovePlan, TargetNodeError};
use numasleuth_change::{apply_pages, ChangeError, Journal, JournalKey, MachineIdentity, PageMove};
use numasleuth_kernel::pages::{self, Residency};
use numasleuth_kernel::procfs::settings;
use numasleuth_kernel::Root;
use numasleuth_model::Topology;
use numasleuth_report::format;

use crate::page_targets::{self, mapped, residencies, Asked, PageSet, PageSetError};

/// What `move` asks: the pages (`asked`), where to, and whether to do it.
#[derive(Debug, Clone)]
pub struct MoveRequest {
    pub asked: Asked,
    pub to_node: u32,
    /// Move, through a journal; otherwise only plan.
    pub apply: bool,
    /// The journal's path (default: `numasleuth-move-PID-SECS.journal.json`).
    pub journal: Option<PathBuf>,
}

/// Why a move could not be planned or made; nothing of its report is
/// shown. Where the old message wrapped a cause, the cause is the source,
/// so `{:#}` prints the same line.
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    #[error(
        "move needs the live system: where pages are is asked of the kernel (move_pages), not a snapshot (--root)"
    )]
    NotLive,
    #[error(transparent)]
    TargetNode(#[from] TargetNodeError),
    #[error(transparent)]
    PageSet(#[from] PageSetError),
    #[error("cannot seal a journal, so nothing was moved")]
    NoKey {
        #[source]
        error: Box<ChangeError>,
    },
    #[error("cannot move the pages of process {pid}")]
    Apply {
        pid: u32,
        #[source]
        error: Box<ChangeError>,
    },
}

/// Why an applied move is an error, after its report was shown.
#[derive(Debug, thiserror::Error)]
pub enum Leftover {
    #[error(
        "{missing} of {attempted} page(s) are not on node {to_node} afterwards (listed above); the journal {journal} \
         moves back those that moved",
        missing = .attempted - .verified
    )]
    NotVerified {
        attempted: u64,
        verified: u64,
        to_node: u32,
        journal: String,
    },
    #[error(
        "{0} resident page(s) between NUMA-balancing hinting faults could not be moved (see the note above): run as \
         root or the process's user with ptrace rights, or retry once the process has touched them"
    )]
    Hinting(u64),
}

/// Refuses a snapshot: where pages are is the kernel's answer now.
pub fn require_live(root: &Root) -> Result<(), MoveError> {
    if !root.is_live() {
        return Err(MoveError::NotLive);
    }
    Ok(())
}

/// Plans the move, and with `apply` makes it and verifies it.
pub fn run(root: &Root, topology: &Topology, request: &MoveRequest) -> Result<MoveDocument, MoveError> {
    require_live(root)?;
    let target_node = page_move::target_node(topology, request.to_node)?;
    let mut notes: Vec<String> = target_node.note.iter().cloned().collect();
    let set = page_targets::set_up(root, &request.asked, "move", &mut notes)?;
    let mut plan = page_move::plan(&set.addresses, &set.states, request.to_node, set.page_bytes);
    if plan.pages_hinting() > 0 {
        if request.apply {
            plan = reveal_and_replan(root, request, &set, plan, &mut notes)?;
        } else {
            notes.push(format!(
                "{} resident page(s) are between NUMA-balancing hinting faults: move_pages can neither see nor move \
                 them until the process touches them again (numa_maps counts them); --apply first reads one byte of \
                 each (process_vm_readv; the page stays where it is) to end the fault, then moves them",
                plan.pages_hinting()
            ));
        }
    }
    notes.extend(situation_notes(root, request, &plan, &set, topology.nodes.len()));
    let mut doc = MoveDocument::planned(
        request.asked.pid,
        &set.comm,
        &target_node,
        set.targets.clone(),
        &plan,
        set.mapped.vmas.clone(),
        notes,
    );
    if request.apply && plan.pages_to_move() > 0 {
        apply(root, request, &plan, &set, &mut doc)?;
    }
    Ok(doc)
}

/// The error (raised after the report is shown) when an applied move left
/// pages behind; `None` for a dry run or a complete move.
pub fn leftovers(doc: &MoveDocument, request: &MoveRequest) -> Option<Leftover> {
    if let Some(applied) = &doc.applied {
        if applied.verified < applied.attempted {
            return Some(Leftover::NotVerified {
                attempted: applied.attempted,
                verified: applied.verified,
                to_node: request.to_node,
                journal: applied.journal.clone(),
            });
        }
    }
    // The document's plan is the last one made: pages still hidden after
    // an applied move's reveal are counted there.
    (request.apply && doc.hinting_faults > 0).then_some(Leftover::Hinting(doc.hinting_faults))
}

/// Ends the hinting faults of the plan's hidden pages (applied moves only:
/// reading them is a change, however small) and plans again.
fn reveal_and_replan(
    root: &Root,
    request: &MoveRequest,
    set: &PageSet,
    plan: MovePlan,
    notes: &mut Vec<String>,
) -> Result<MovePlan, PageSetError> {
    let pid = request.asked.pid;
    let hidden = plan.hinting_addresses();
    match pages::reveal(pid, &hidden, request.to_node) {
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
            let states = residencies(root, pid, &set.addresses, &set.mapped.vmas, notes)?;
            Ok(page_move::plan(
                &set.addresses,
                &states,
                request.to_node,
                plan.page_bytes,
            ))
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

/// What the user should know beside the plan: asked memory that is not
/// mapped, an applied move with nothing to do, and AutoNUMA that may undo
/// it.
fn situation_notes(root: &Root, request: &MoveRequest, plan: &MovePlan, set: &PageSet, nodes: usize) -> Vec<String> {
    let pid = request.asked.pid;
    let mut out = Vec::new();
    let asked_bytes = page_move::asked_bytes(&set.ranges);
    let mapped_bytes = set.mapped.mapped_bytes;
    if asked_bytes > mapped_bytes {
        out.push(format!(
            "{} of what was asked for is not mapped by process {pid}, so it has no pages and was left out",
            format::bytes(asked_bytes - mapped_bytes)
        ));
    }
    if request.apply && plan.pages_to_move() == 0 && plan.pages_hinting() == 0 {
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

/// Moves the plan's pages through a sealed journal, then records both
/// verifications (move_pages and numa_maps) in `doc`.
fn apply(
    root: &Root,
    request: &MoveRequest,
    plan: &MovePlan,
    set: &PageSet,
    doc: &mut MoveDocument,
) -> Result<(), MoveError> {
    let pid = request.asked.pid;
    let page_bytes = plan.page_bytes;
    let path = request.journal.clone().unwrap_or_else(|| default_journal(pid));
    let mut journal = Journal::pages(
        MachineIdentity::read(root),
        unix_now_s(),
        page_moves(plan, pid, set.start_time),
    );
    let key = JournalKey::for_this_user().map_err(|e| MoveError::NoKey { error: Box::new(e) })?;
    let outcome = apply_pages(root, &mut journal, &path, &key).map_err(|e| MoveError::Apply {
        pid,
        error: Box::new(e),
    })?;
    let after = mapped(root, pid, &set.ranges, page_bytes)?.vmas;
    let check = numa_maps_check(&set.mapped.vmas, &after, request.to_node, outcome.verified);
    if let Some(why) = &outcome.reveal_failed {
        doc.notes.push(why.clone());
    }
    let not_moved: Vec<(u64, Residency)> = outcome.not_moved.iter().map(|s| (s.address, s.residency)).collect();
    doc.numa_maps_after = Some(after);
    doc.applied = Some(Applied {
        journal: path.display().to_string(),
        attempted: outcome.attempted,
        verified: outcome.verified,
        not_moved: page_move::state_runs(&not_moved, page_bytes),
        revealed: outcome.revealed,
        numa_maps_gained: check.gained,
        numa_maps_agrees: check.agrees,
    });
    Ok(())
}

fn unix_now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn default_journal(pid: u32) -> PathBuf {
    PathBuf::from(format!("numasleuth-move-{pid}-{}.journal.json", unix_now_s()))
}
