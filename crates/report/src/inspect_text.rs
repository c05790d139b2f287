//! `inspect` for people. By default it fits a screen: threads (the first
//! few), memory per node by kind, the findings, then the writable static
//! data grouped by object. `detail` (`--sections`) lists every thread and
//! every section page by page, as the JSON does.

use std::collections::BTreeSet;

use numasleuth_analyze::findings::Finding;
use numasleuth_model::process::{total, Accuracy, KindGroup, NodeCounts, ProcessModel};
use numasleuth_parse::IdList;

use crate::format::bytes;
use crate::layout::TextLayout;
use crate::table::{columns, table, Col};

/// How many non-static mappings the text lists (JSON lists more).
const TEXT_OTHER_MAPPINGS: usize = 8;
/// Threads and objects listed by default; `--sections` lists them all.
const CONCISE_THREADS: usize = 8;
const CONCISE_OBJECTS: usize = 8;
const CONCISE_OTHER_MAPPINGS: usize = 4;

fn group_label(group: KindGroup) -> &'static str {
    match group {
        KindGroup::WritableStatic => "writable static (.data .bss .got)",
        KindGroup::ReadOnlyStatic => "read-only static (.text .rodata)",
        KindGroup::Heap => "heap",
        KindGroup::Stack => "stack",
        KindGroup::Anonymous => "anonymous",
        KindGroup::File => "file",
        KindGroup::SharedMemory => "shared memory",
        KindGroup::HugePages => "huge pages",
        KindGroup::Special => "vdso/vvar",
    }
}

/// Resident memory per node in bytes (`N0=2.9 MiB N1=12 KiB`, as `top`
/// shows it): page counts of `page_bytes` each, which people should not
/// have to multiply.
fn resident(counts: &NodeCounts, page_bytes: u64) -> String {
    if counts.is_empty() {
        return "-".into();
    }
    counts
        .iter()
        .map(|(n, c)| format!("N{n}={}", bytes(c.saturating_mul(page_bytes))))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn render(model: &ProcessModel, findings: &[Finding], detail: bool, layout: &TextLayout) -> String {
    let mut out = format!(
        "process {} ({}){}: {} thread(s)\n",
        model.pid,
        model.comm,
        model.program.as_deref().map(|p| format!(" {p}")).unwrap_or_default(),
        model.threads.len()
    );
    if model.kernel_thread {
        out.push_str("kernel thread: it has no user memory, so there is nothing to place\n");
    }
    let mut rows = vec![[
        "tid",
        "cpu",
        "node",
        "allowed cpus",
        "allowed nodes",
        "migrations",
        "comm",
    ]
    .map(String::from)
    .to_vec()];
    let opt = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
    let shown = if detail { model.threads.len() } else { CONCISE_THREADS };
    for t in model.threads.iter().take(shown) {
        rows.push(vec![
            t.tid.to_string(),
            opt(t.cpu),
            opt(t.node),
            t.allowed_cpus.as_ref().map_or("?".into(), IdList::to_human),
            t.allowed_nodes.as_ref().map_or("?".into(), IdList::to_string),
            t.nr_migrations.map_or("?".into(), |m| m.to_string()),
            t.comm.clone(),
        ]);
    }
    let thread_kinds = [
        Col::Wrap,
        Col::Wrap,
        Col::Wrap,
        Col::Wrap,
        Col::Wrap,
        Col::Wrap,
        Col::Name,
    ];
    out.push_str(&indent(&table(&rows, &thread_kinds, &layout.indented(INDENT))));
    if model.threads.len() > shown {
        out.push_str(&format!(
            "  … {} more thread(s) (--sections lists all)\n",
            model.threads.len() - shown
        ));
    }
    out.push_str(&format!("threads run on node(s): {}\n\n", model.thread_nodes));
    if !model.kernel_thread {
        out.push_str(&memory_table(model, layout));
    }
    out.push_str(&findings_text(findings));
    if !model.kernel_thread {
        if detail {
            out.push_str(&mappings_table(model, layout));
        } else {
            out.push_str(&static_by_object(model, layout));
            out.push_str(&other_mappings(model, CONCISE_OTHER_MAPPINGS, layout));
        }
    }
    for note in &model.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

fn findings_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    if findings.is_empty() {
        out.push_str("No findings: the process's memory and threads are where they should be.\n");
    }
    for f in findings {
        out.push_str(&format!(
            "{:<8}  {}  [{}]\n",
            f.severity.as_str().to_uppercase(),
            f.title,
            f.id
        ));
        for line in &f.evidence {
            out.push_str(&format!("    evidence: {}\n", line.text));
        }
        out.push_str(&format!("    remedy:   {}\n\n", f.remedy));
    }
    out
}

/// The writable static sections summed per object: how many, how big,
/// and on which nodes their pages are. (Pages are not summed: small
/// sections share pages.)
fn static_by_object(model: &ProcessModel, layout: &TextLayout) -> String {
    let mut objects: Vec<(String, usize, u64, BTreeSet<u32>)> = Vec::new();
    for m in model
        .mappings
        .iter()
        .filter(|m| m.kind.group() == KindGroup::WritableStatic)
    {
        let name = m.object.clone().unwrap_or_else(|| "-".into());
        let index = match objects.iter().position(|(o, ..)| *o == name) {
            Some(i) => i,
            None => {
                objects.push((name, 0, 0, BTreeSet::new()));
                objects.len() - 1
            }
        };
        let entry = &mut objects[index];
        entry.1 += 1;
        entry.2 += m.end.saturating_sub(m.start);
        entry
            .3
            .extend(m.pages_by_node.iter().filter(|(_, c)| **c > 0).map(|(n, _)| *n));
    }
    if objects.is_empty() {
        return String::new();
    }
    // The program first (it is mapped first), then the largest.
    let program = model.program.clone();
    objects.sort_by_key(|(name, _, size, _)| (Some(name) != program.as_ref(), std::cmp::Reverse(*size)));
    let mut rows = vec![["object", "sections", "size", "resident on"].map(String::from).to_vec()];
    for (name, sections, size, nodes) in objects.iter().take(CONCISE_OBJECTS) {
        let on = if nodes.is_empty() {
            "none resident".to_string()
        } else {
            // `node 1`, not a bare `1` that reads as a page count.
            let plural = if nodes.len() == 1 { "" } else { "s" };
            format!("node{plural} {}", IdList::new(nodes.iter().copied().collect()))
        };
        rows.push(vec![name.clone(), sections.to_string(), bytes(*size), on]);
    }
    let mut out = String::from("writable static data by object (--sections: every section, page by page):\n");
    out.push_str(&indent(&table(&rows, &[Col::Path], &layout.indented(INDENT))));
    if objects.len() > CONCISE_OBJECTS {
        out.push_str(&format!("  … {} more object(s)\n", objects.len() - CONCISE_OBJECTS));
    }
    out.push('\n');
    out
}

fn memory_table(model: &ProcessModel, layout: &TextLayout) -> String {
    let nodes: BTreeSet<u32> = model.bytes_by_node.keys().copied().collect();
    let mut header = vec!["resident memory".to_string()];
    header.extend(nodes.iter().map(|n| format!("node {n}")));
    header.push("total".into());
    let mut rows = vec![header];
    let row = |label: &str, counts: &NodeCounts| {
        let mut row = vec![label.to_string()];
        row.extend(nodes.iter().map(|n| bytes(counts.get(n).copied().unwrap_or(0))));
        row.push(bytes(total(counts)));
        row
    };
    for (group, counts) in model.bytes_by_group() {
        if total(&counts) == 0 {
            continue;
        }
        rows.push(row(group_label(group), &counts));
    }
    rows.push(row("total", &model.bytes_by_node));
    let mut out = indent(&columns(&rows, &layout.indented(INDENT)));
    if let Some(remote) = model.remote_bytes() {
        let share = if model.total_bytes() > 0 {
            remote as f64 / model.total_bytes() as f64 * 100.0
        } else {
            0.0
        };
        out.push_str(&format!(
            "remote share: {share:.1}% ({} of {} is on nodes where no thread runs)\n\n",
            bytes(remote),
            bytes(model.total_bytes())
        ));
    }
    out
}

/// The object is a path; the section a name (`.data.rel.ro`).
const MAPPING_KINDS: &[Col] = &[Col::Wrap, Col::Wrap, Col::Path, Col::Name];

fn mapping_header() -> Vec<String> {
    ["range", "kind", "object", "section", "resident", "accuracy"]
        .map(String::from)
        .to_vec()
}

fn mapping_line(m: &numasleuth_model::process::MappingUsage) -> Vec<String> {
    vec![
        format!("{:#x}-{:#x}", m.start, m.end),
        m.kind.as_str().to_string(),
        m.object.clone().unwrap_or_else(|| "-".into()),
        m.section.clone().unwrap_or_else(|| "-".into()),
        resident(&m.pages_by_node, m.page_size_bytes),
        match m.accuracy {
            Accuracy::PerPage => "per page".into(),
            Accuracy::PerVma => "per mapping".into(),
        },
    ]
}

/// Every writable static section, page by page (`--sections`).
fn mappings_table(model: &ProcessModel, layout: &TextLayout) -> String {
    let static_rows: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.kind.group() == KindGroup::WritableStatic)
        .collect();
    let how = if model.per_page_static {
        "resident per node, counted page by page via move_pages"
    } else {
        "resident per node, per mapping from numa_maps"
    };
    let mut out = String::new();
    if !static_rows.is_empty() {
        out.push_str(&format!("writable static sections ({how}):\n"));
        let mut rows = vec![mapping_header()];
        rows.extend(static_rows.iter().map(|m| mapping_line(m)));
        out.push_str(&indent(&table(&rows, MAPPING_KINDS, &layout.indented(INDENT))));
        out.push('\n');
    }
    out.push_str(&other_mappings(model, TEXT_OTHER_MAPPINGS, layout));
    out
}

/// The largest resident mappings that are not writable static data.
fn other_mappings(model: &ProcessModel, limit: usize, layout: &TextLayout) -> String {
    let mut others: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.kind.group() != KindGroup::WritableStatic && m.resident_pages() > 0)
        .collect();
    if others.is_empty() {
        return String::new();
    }
    others.sort_by_key(|m| std::cmp::Reverse(m.resident_pages() * m.page_size_bytes));
    // Point at the JSON only when this table left some out.
    let more = if others.len() > limit {
        "; --json lists the rest"
    } else {
        ""
    };
    let mut out = format!(
        "largest other mappings ({} of {} mappings{more}):\n",
        others.len().min(limit),
        model.mappings_total
    );
    let mut rows = vec![mapping_header()];
    rows.extend(others.iter().take(limit).map(|m| mapping_line(m)));
    out.push_str(&indent(&table(&rows, MAPPING_KINDS, &layout.indented(INDENT))));
    out.push('\n');
    out
}

/// Tables sit two columns in under their heading.
const INDENT: usize = 2;

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::resident;
    use numasleuth_model::process::NodeCounts;

    #[test]
    fn resident_pages_are_shown_in_bytes_per_node() {
        let counts: NodeCounts = [(0, 753), (1, 1)].into_iter().collect();
        assert_eq!(resident(&counts, 4096), "N0=2.9 MiB N1=4 KiB");
        // A huge-page mapping counts 2 MiB pages.
        let huge: NodeCounts = [(1, 3)].into_iter().collect();
        assert_eq!(resident(&huge, 2 << 20), "N1=6 MiB");
        assert_eq!(resident(&NodeCounts::new(), 4096), "-");
    }
}
