//! DAMON's hot remote regions (`doctor -p --measure`) meet the other
//! observations of the process:
//! - a region that holds a hot remote line agrees with it: the line's
//!   finding says so, and `hot-remote-memory` cites it rather than
//!   standing as a second account of the same page;
//! - a region in the program's static data names its symbols in
//!   `static-data-remote`, whether or not a cache-line sample saw them;
//! - where no hot line explains `static-data-remote`, a hot region in
//!   static data does, and ranks before it.

use numasleuth_model::hotpages::HotRemoteRegion;
use numasleuth_model::process::KindGroup;

use super::{cause_address, HOT_REMOTE_GLOBAL, HOT_REMOTE_LINE};
use crate::findings::{Evidence, Finding};
use crate::hotpages::HOT_REMOTE_MEMORY;
use crate::process::STATIC_DATA_REMOTE;

const JOIN: &str = "doctor's join of the process's observations";

/// Joins `regions` (the hot remote ones, hottest first) into `findings`.
pub fn with_hot_regions(findings: &mut [Finding], regions: &[HotRemoteRegion]) {
    if regions.is_empty() {
        return;
    }
    let agreed = agree_with_lines(findings, regions);
    let in_static: Vec<&HotRemoteRegion> = regions.iter().filter(|r| is_static(r)).collect();
    name_in_static_data(findings, &in_static);
    if agreed.is_empty() && !in_static.is_empty() {
        explain_static_data(findings);
    }
}

fn is_static(region: &HotRemoteRegion) -> bool {
    region
        .name
        .as_ref()
        .and_then(|n| n.kind)
        .is_some_and(|k| k.group() == KindGroup::WritableStatic)
}

fn nodes(list: &[u32]) -> String {
    list.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// Each hot remote line that lies in a hot remote region gets DAMON's
/// word in its own finding; `hot-remote-memory` cites the first such
/// cause. Returns the titles of the causes that agreed.
fn agree_with_lines(findings: &mut [Finding], regions: &[HotRemoteRegion]) -> Vec<String> {
    let mut agreed = Vec::new();
    for cause in findings
        .iter_mut()
        .filter(|f| f.id == HOT_REMOTE_GLOBAL || f.id == HOT_REMOTE_LINE)
    {
        let Some(address) = cause_address(cause) else {
            continue;
        };
        let Some(region) = regions.iter().find(|r| r.contains(address)) else {
            continue;
        };
        cause.evidence.push(
            Evidence::new(
                "DAMON (hotpages), physical accessed bits",
                format!(
                    "DAMON agrees: the region {:#x}-{:#x} holding the line was accessed in {:.0}% of its samples, \
                     on node(s) {} while the threads run on node(s) {}",
                    region.start,
                    region.end,
                    region.access_percent,
                    nodes(&region.nodes),
                    nodes(&region.thread_nodes)
                ),
            )
            .with("region_start", region.start)
            .with("region_end", region.end)
            .with("access_percent", region.access_percent),
        );
        if !cause.explains.contains(&HOT_REMOTE_MEMORY) {
            cause.explains.push(HOT_REMOTE_MEMORY);
        }
        agreed.push(format!("{} above: {}", cause.id, cause.title));
    }
    if let Some(first) = agreed.first() {
        for memory in findings.iter_mut().filter(|f| f.id == HOT_REMOTE_MEMORY) {
            memory
                .evidence
                .push(Evidence::new(JOIN, format!("the same page as {first}")));
        }
    }
    agreed
}

/// `static-data-remote` names the symbols DAMON found hot in it.
fn name_in_static_data(findings: &mut [Finding], in_static: &[&HotRemoteRegion]) {
    let mut symbols: Vec<&str> = Vec::new();
    for region in in_static {
        for symbol in region.symbols() {
            if symbols.len() < 3 && !symbols.contains(&symbol.as_str()) {
                symbols.push(symbol);
            }
        }
    }
    if symbols.is_empty() {
        return;
    }
    for f in findings.iter_mut().filter(|f| f.id == STATIC_DATA_REMOTE) {
        f.evidence.push(Evidence::new(
            "DAMON (hotpages), physical accessed bits",
            format!(
                "DAMON found these symbols' pages hot and remote: {}",
                symbols.join(", ")
            ),
        ));
    }
}

/// With no hot line to name the cause, a hot remote region in static
/// data is the nearest one: `hot-remote-memory` explains
/// `static-data-remote`, which cites it.
fn explain_static_data(findings: &mut [Finding]) {
    let Some(memory) = findings.iter_mut().find(|f| f.id == HOT_REMOTE_MEMORY) else {
        return;
    };
    if !memory.explains.contains(&STATIC_DATA_REMOTE) {
        memory.explains.push(STATIC_DATA_REMOTE);
    }
    let citation = format!("explained by {} above: {}", memory.id, memory.title);
    for f in findings.iter_mut().filter(|f| f.id == STATIC_DATA_REMOTE) {
        f.evidence.push(Evidence::new(JOIN, citation.clone()));
    }
}
