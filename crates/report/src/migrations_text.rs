//! `migrations` as text: one row per thread that moved (hoppers first),
//! then AutoNUMA's state and the findings.

use std::fmt::Write;

use numasleuth_analyze::migrations::{Method, MigrationsDocument, NumaBalancing, ThreadMigrations};

use crate::layout::TextLayout;
use crate::table::{table, Col};

/// Rows shown; the JSON has every thread.
const MAX_ROWS: usize = 40;

/// `0-3,8`, as every list a person reads is written.
fn list(ids: &[u32]) -> String {
    numasleuth_parse::IdList::new(ids.to_vec()).to_human()
}

pub fn render(v: &MigrationsDocument, layout: &TextLayout) -> String {
    let mut out = String::new();
    let what = v.pid.map_or("every task".to_string(), |p| format!("process {p}"));
    let how = match &v.method {
        Method::Tracepoint => "sched:sched_migrate_task tracepoint (every move)".to_string(),
        Method::Sampled { interval_ms, reason } => {
            format!("SAMPLED view, /proc/*/task/*/stat every {interval_ms} ms (lower bounds; tracepoint not used: {reason})")
        }
    };
    let _ = writeln!(out, "migrations of {what} over {:.1} s, from the {how}", v.duration_s);
    let moved: Vec<&ThreadMigrations> = v.threads.iter().filter(|t| t.cpu_migrations > 0).collect();
    let still = v.threads.len() - moved.len();
    let mut rows = vec![["tid", "comm", "cpu moves", "node moves", "nodes/s", "nodes", "cpus"]
        .map(String::from)
        .to_vec()];
    for t in moved.iter().take(MAX_ROWS) {
        rows.push(vec![
            t.tid.to_string(),
            t.comm.clone(),
            t.cpu_migrations.to_string(),
            t.node_migrations.to_string(),
            format!("{:.1}", t.node_migrations_per_s),
            list(&t.nodes_visited),
            list(&t.cpus_visited),
        ]);
    }
    out.push('\n');
    out.push_str(&table(&rows, &[Col::Wrap, Col::Name], layout));
    if moved.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "… and {} more threads that moved (see --json)",
            moved.len() - MAX_ROWS
        );
    }
    if still > 0 {
        let _ = writeln!(out, "{still} thread(s) did not move");
    }
    render_numa(&mut out, &v.numa);
    for f in &v.findings {
        let _ = writeln!(out, "\n[{}] {}: {}", f.severity.as_str(), f.id, f.title);
        for e in &f.evidence {
            let _ = writeln!(out, "    {}", e.text);
        }
        let _ = writeln!(out, "    remedy: {}", f.remedy);
    }
    for note in &v.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

fn render_numa(out: &mut String, numa: &NumaBalancing) {
    let mode = match numa.mode {
        Some(0) => "off".to_string(),
        Some(m) => format!("on (mode {m})"),
        None => "unknown (no /proc/sys/kernel/numa_balancing)".to_string(),
    };
    let _ = writeln!(out, "\nAutoNUMA: {mode}");
    match numa.pages_migrated_during() {
        Some(pages) => {
            let _ = writeln!(
                out,
                "  pages migrated meanwhile: {pages} (total {})",
                numa.pages_migrated_after.unwrap_or(0)
            );
        }
        None => {
            let _ = writeln!(out, "  pages migrated: not reported by this kernel");
        }
    }
    for t in numa.tasks.iter().take(MAX_ROWS) {
        let preferred = t.numa_preferred_nid.map_or("-".into(), |n| n.to_string());
        let _ = writeln!(
            out,
            "  tid {:>8}: preferred node {preferred}, pages migrated {}, faults {}, Mems_allowed {}",
            t.tid,
            t.numa_pages_migrated.map_or("-".into(), |n| n.to_string()),
            t.total_numa_faults.map_or("-".into(), |n| n.to_string()),
            t.mems_allowed.as_deref().unwrap_or("-")
        );
    }
}
