//! The placement model of one process (`inspect`'s): read its threads,
//! place its mapped objects, stream the mappings into the model, ask
//! move_pages for the few static pages (live system only), and check the
//! process is still the same one. `inspect`, `doctor -p`, `runs`, `top`,
//! `snapshot -p` and `serve` all build it here.

use numasleuth_kernel::procfs::pagemap;
use numasleuth_kernel::procfs::process::{for_each_vma, read_process_stat, read_threads, ProcessError};
use numasleuth_kernel::Root;
use numasleuth_kernel::{pages, pages_capture};
use numasleuth_model::process::{ProcessBuilder, ProcessModel};
use numasleuth_model::Topology;
use numasleuth_symbols::{ObjectPlacer, SectionSpan};

/// Mappings listed beyond static sections, heap and stack.
const LISTED_MAPPINGS: usize = 200;

/// The placement model of one process; `doctor --pid` judges it too.
pub fn model(root: &Root, pid: u32, all_mappings: bool, topology: &Topology) -> Result<ProcessModel, ProcessError> {
    model_and_objects(root, pid, all_mappings, topology).map(|(model, _)| model)
}

/// [`model`], and the ELF objects placed on the way (`snapshot -p` keeps
/// their build-ids).
pub fn model_and_objects(
    root: &Root,
    pid: u32,
    all_mappings: bool,
    topology: &Topology,
) -> Result<(ProcessModel, numasleuth_symbols::ProcessObjects), ProcessError> {
    let stat = read_process_stat(root, pid)?;
    let threads = read_threads(root, pid)?;
    // Counts from numa_maps carry their own page size; the base page is
    // only the unit of the per-page query, which runs on the live system,
    // where it is always known.
    let base_page_bytes = pages::base_page_bytes(root).unwrap_or(4096);
    let limit = if all_mappings { usize::MAX } else { LISTED_MAPPINGS };
    let mut builder = ProcessBuilder::new(base_page_bytes, limit);
    // One pass: each mapping places its object (if it starts one) and is
    // then attributed to the sections placed so far.
    let mut placer = ObjectPlacer::new(root, pid);
    let summary = for_each_vma(root, pid, |vma| {
        placer.add(&vma.mapping);
        let objects = placer.objects();
        let (start, end) = (vma.mapping.start, vma.mapping.end);
        let object = objects.object_at(start, end).map(|o| o.path.as_str());
        let spans: Vec<&SectionSpan> = objects.spans_overlapping(start, end).collect();
        builder.add(vma, object, &spans);
    })?;
    let objects = placer.finish();
    let mut notes = Vec::new();
    query_static_pages(root, pid, base_page_bytes, &mut builder, &mut notes);
    // The same process from start to end, or nothing it said counts.
    match read_process_stat(root, pid) {
        Ok(after) if after.start_time_ticks == stat.start_time_ticks => {}
        Ok(_) | Err(ProcessError::NoSuchProcess { .. }) => return Err(ProcessError::Exited { pid }),
        Err(e) => return Err(e),
    }
    if stat.state == 'Z' {
        notes.push(format!("process {pid} is a zombie: it has exited and holds no memory"));
    }
    if !summary.numa_maps_available && summary.vmas > 0 {
        notes.push(format!(
            "/proc/{pid}/numa_maps does not exist (kernel without NUMA): no per-node counts"
        ));
    }
    if summary.unmatched_numa_lines > 0 {
        notes.push(format!(
            "{} mapping(s) changed between reading maps and numa_maps and are not counted",
            summary.unmatched_numa_lines
        ));
    }
    for problem in &objects.unreadable {
        notes.push(format!("sections unknown: {problem}"));
    }
    let program = objects.main_object().map(|o| o.path.clone());
    Ok((builder.finish(&stat, program, &threads, topology, notes), objects))
}

/// Under a snapshot: the per-page answers `snapshot -p` kept, else the
/// split stays per mapping and says why.
fn replay_static_pages(
    root: &Root,
    (pid, page_bytes): (u32, u64),
    ranges: Vec<std::ops::Range<u64>>,
    builder: &mut ProcessBuilder,
    notes: &mut Vec<String>,
) {
    let mut missing = false;
    for range in ranges {
        let pages = ((range.end - range.start) / page_bytes.max(1)) as usize;
        match pages_capture::replay(root, pid, range.start, pages) {
            Ok(Some(states)) => builder.set_page_nodes(range.start, states),
            Ok(None) => missing = true,
            Err(e) => {
                notes.push(format!("per-page answers not used: {e}"));
                missing = true;
            }
        }
    }
    if missing {
        notes.push(
            "static sections are split per mapping: a per-page query (move_pages) needs the live system, or a \
             snapshot taken with `snapshot -p`"
                .into(),
        );
    }
}

/// Asks move_pages where each page of the writable static sections is.
/// Only the live system can answer; elsewhere counts stay per mapping.
fn query_static_pages(root: &Root, pid: u32, page_bytes: u64, builder: &mut ProcessBuilder, notes: &mut Vec<String>) {
    let ranges = builder.pages_to_query();
    if ranges.is_empty() {
        return;
    }
    if !root.is_live() {
        replay_static_pages(root, (pid, page_bytes), ranges, builder, notes);
        return;
    }
    let mut pagemap_refused = None;
    for range in ranges {
        let addresses: Vec<u64> = (range.start..range.end).step_by(page_bytes as usize).collect();
        let statuses = match pages::query(pid, &addresses) {
            Ok(statuses) => statuses,
            Err(e) => {
                notes.push(format!("per-page query of static sections: {e}"));
                return;
            }
        };
        // pagemap tells a page between NUMA-balancing hinting faults
        // (present) from a never-touched one: move_pages calls both "not
        // present". Each range is one mapping, so every page is mapped.
        let entries = match pagemap::read(root, pid, &addresses, page_bytes) {
            Ok(entries) => Some(entries),
            Err(e) => {
                pagemap_refused.get_or_insert(e);
                None
            }
        };
        let states: Vec<_> = statuses
            .into_iter()
            .enumerate()
            .map(|(i, s)| pages::residency(s, entries.as_ref().map(|e| e[i]), true))
            .collect();
        // `snapshot -p`: the answers are kept, so a replay splits the same.
        pages_capture::record(root, pid, range.start, &states);
        builder.set_page_nodes(range.start, states);
    }
    if let Some(e) = pagemap_refused {
        notes.push(format!(
            "{e}: pages hidden from move_pages between NUMA-balancing hinting faults cannot be told from untouched ones"
        ));
    }
}
