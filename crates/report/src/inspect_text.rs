//! `inspect` for people: threads and where they run, memory per node by
//! kind, the static sections page by page, then findings.

use std::collections::BTreeSet;

use numasleuth_analyze::findings::Finding;
use numasleuth_kernel::IdList;
use numasleuth_model::process::{total, Accuracy, KindGroup, NodeCounts, ProcessModel};

use crate::format::{bytes, columns};

/// How many non-static mappings the text lists (JSON lists more).
const TEXT_OTHER_MAPPINGS: usize = 8;

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

fn pages(counts: &NodeCounts) -> String {
    if counts.is_empty() {
        return "-".into();
    }
    counts
        .iter()
        .map(|(n, c)| format!("N{n}={c}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn render(model: &ProcessModel, findings: &[Finding]) -> String {
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
    for t in &model.threads {
        rows.push(vec![
            t.tid.to_string(),
            opt(t.cpu),
            opt(t.node),
            t.allowed_cpus.as_ref().map_or("?".into(), IdList::to_string),
            t.allowed_nodes.as_ref().map_or("?".into(), IdList::to_string),
            t.nr_migrations.map_or("?".into(), |m| m.to_string()),
            t.comm.clone(),
        ]);
    }
    out.push_str(&indent(&columns(&rows)));
    out.push_str(&format!("threads run on node(s): {}\n\n", model.thread_nodes));
    if !model.kernel_thread {
        out.push_str(&memory_table(model));
        out.push_str(&mappings_table(model));
    }
    for note in &model.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push('\n');
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
            out.push_str(&format!("    evidence: {line}\n"));
        }
        out.push_str(&format!("    remedy:   {}\n\n", f.remedy));
    }
    out
}

fn memory_table(model: &ProcessModel) -> String {
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
    let mut out = indent(&columns(&rows));
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

fn mappings_table(model: &ProcessModel) -> String {
    let static_rows: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.kind.group() == KindGroup::WritableStatic)
        .collect();
    let how = if model.per_page_static {
        "pages per node, per page via move_pages"
    } else {
        "pages per node, per mapping from numa_maps"
    };
    let mut out = String::new();
    let header = || {
        ["range", "kind", "object", "section", "pages", "accuracy"]
            .map(String::from)
            .to_vec()
    };
    let line = |m: &numasleuth_model::process::MappingUsage| {
        vec![
            format!("{:#x}-{:#x}", m.start, m.end),
            m.kind.as_str().to_string(),
            m.object.clone().unwrap_or_else(|| "-".into()),
            m.section.clone().unwrap_or_else(|| "-".into()),
            pages(&m.pages_by_node),
            match m.accuracy {
                Accuracy::PerPage => "per page".into(),
                Accuracy::PerVma => "per mapping".into(),
            },
        ]
    };
    if !static_rows.is_empty() {
        out.push_str(&format!("writable static sections ({how}):\n"));
        let mut rows = vec![header()];
        rows.extend(static_rows.iter().map(|m| line(m)));
        out.push_str(&indent(&columns(&rows)));
        out.push('\n');
    }
    let mut others: Vec<_> = model
        .mappings
        .iter()
        .filter(|m| m.kind.group() != KindGroup::WritableStatic && m.resident_pages() > 0)
        .collect();
    others.sort_by_key(|m| std::cmp::Reverse(m.resident_pages() * m.page_size_bytes));
    if !others.is_empty() {
        out.push_str(&format!(
            "largest other mappings ({} of {} mappings; --json lists more):\n",
            others.len().min(TEXT_OTHER_MAPPINGS),
            model.mappings_total
        ));
        let mut rows = vec![header()];
        rows.extend(others.iter().take(TEXT_OTHER_MAPPINGS).map(|m| line(m)));
        out.push_str(&indent(&columns(&rows)));
        out.push('\n');
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
