//! A hot line whose remote touches all come from threads that touched it
//! from its page's node too: those threads moved while they were sampled.
//! No node suits a page whose users move, so where `migrations` saw the
//! threads hop, the join hands the line to that finding instead of
//! blaming the page (whose remedy, moving it, would only chase the thread).

use std::collections::{BTreeMap, BTreeSet};

use numasleuth_parse::pages::Residency;
use numasleuth_parse::IdList;

use super::{cause_address, is_hot, Clues};
use crate::findings::{Evidence, Finding};
use crate::hotlines::NamedLine;
use crate::migrations::THREAD_HOPPING_NODES;

/// A hot line that follows its moving threads.
struct Followed<'a> {
    line: &'a NamedLine,
    page_node: u32,
    movers: Vec<u32>,
    nodes: BTreeSet<u32>,
}

/// The threads that touched the line from a node other than `page_node`,
/// if every one of them touched it from `page_node` as well.
fn movers(line: &NamedLine, page_node: u32) -> Option<(Vec<u32>, BTreeSet<u32>)> {
    let remote: Vec<(&u32, &BTreeSet<u32>)> = line
        .line
        .thread_nodes
        .iter()
        .filter(|(_, nodes)| nodes.iter().any(|n| *n != page_node))
        .collect();
    if remote.is_empty() || !remote.iter().all(|(_, nodes)| nodes.contains(&page_node)) {
        return None;
    }
    let nodes = remote.iter().flat_map(|(_, nodes)| nodes.iter().copied()).collect();
    Some((remote.into_iter().map(|(tid, _)| *tid).collect(), nodes))
}

fn followed<'a>(clues: &Clues<'a>) -> BTreeMap<u64, Followed<'a>> {
    let pages: BTreeMap<u64, Residency> = clues.pages.iter().map(|p| (p.line_address, p.residency)).collect();
    clues
        .lines
        .iter()
        .filter(|l| is_hot(l, clues.accesses))
        .filter_map(|line| {
            let page_node = pages.get(&line.line.address)?.node()?;
            let (movers, nodes) = movers(line, page_node)?;
            Some((
                line.line.address,
                Followed {
                    line,
                    page_node,
                    movers,
                    nodes,
                },
            ))
        })
        .collect()
}

/// Moves each hot remote line whose users moved out of `causes` and into
/// the `thread-hopping-nodes` finding among `moves`, as its evidence.
/// Without that finding the lines stay where they are: the sample alone
/// is no rate of moves.
pub fn defer_to_moves(causes: &mut Vec<Finding>, moves: &mut [Finding], clues: &Clues<'_>) {
    let Some(hopping) = moves.iter_mut().find(|f| f.id == THREAD_HOPPING_NODES) else {
        return;
    };
    let followed = followed(clues);
    causes.retain(|cause| {
        let Some(f) = cause_address(cause).and_then(|a| followed.get(&a)) else {
            return true;
        };
        hopping.evidence.push(
            Evidence::new(
                "doctor's join of the process's observations",
                format!(
                    "thread(s) {} touched the hot line at {:#x} ({}) from nodes {} while sampled, and its page is \
                     on node {}: no node suits a page whose users move, so bind the threads before placing it",
                    IdList::new(f.movers.clone()).to_human(),
                    f.line.line.address,
                    f.line.region,
                    IdList::new(f.nodes.iter().copied().collect()).to_human(),
                    f.page_node,
                ),
            )
            .with("line_address", f.line.line.address)
            .with("page_node", f.page_node)
            .with("threads", f.movers.as_slice()),
        );
        false
    });
}
