//! `numasleuth migrations (PID | --all)`: each thread's moves between CPUs
//! and nodes over a window, and what AutoNUMA did meanwhile.
//!
//! Wiring only: topology (`model`) for the node of each CPU, the moves
//! from the tracepoint or a sampled view (`probe::migrations`), counts and
//! findings (`analyze::migrations`), output (`report`).

use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use numasleuth_analyze::migrations::findings;
use numasleuth_app::migrations::{observe, How};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;
use numasleuth_model::stop::RunSpan;
use numasleuth_probe::migrations::Scope;
use numasleuth_report::{migrations_json, migrations_text};

use super::hot_args::{MigrationMethod, MigrationsArgs};
use numasleuth_report::export::TextJson;

impl From<MigrationMethod> for How {
    fn from(method: MigrationMethod) -> Self {
        match method {
            MigrationMethod::Auto => How::Auto,
            MigrationMethod::Tracepoint => How::Tracepoint,
            MigrationMethod::Sampled => How::Sampled,
        }
    }
}

pub fn run(root: &Root, args: &MigrationsArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    if !root.is_live() {
        bail!("migrations needs the live system: moves happen now, a snapshot (--root) has none");
    }
    let scope = match args.process() {
        Some(pid) => {
            if read_process_stat(root, pid)?.is_kernel_thread() {
                bail!("process {pid} is a kernel thread: use --all to see kernel threads' moves");
            }
            Scope::Process(pid)
        }
        None => Scope::All,
    };
    let topo = super::topology(root)?;
    say!(
        "numasleuth: following thread moves {}…",
        super::stop_signal::how_long(Some(args.duration))
    );
    let stop = super::stop_signal::stop_on_signals();
    let start = Instant::now();
    let how = (args.duration, args.method.into(), args.interval);
    let seen = observe(root, &topo, scope, how, &stop, &crate::output::Say)?;
    let span = RunSpan::timed(start, Some(args.duration), &stop);
    let pid = args.process();
    let found = pid.map_or_else(Vec::new, |p| {
        findings(p, &seen.threads, &seen.numa, &seen.method, seen.duration_s)
    });
    let document = migrations_json::build(
        pid,
        &seen.method,
        seen.duration_s,
        &seen.threads,
        &seen.numa,
        &found,
        &seen.notes,
    );
    let view = migrations_text::View {
        pid,
        method: &seen.method,
        duration_s: seen.duration_s,
        threads: &seen.threads,
        numa: &seen.numa,
        findings: &found,
        notes: &seen.notes,
    };
    super::output::emit_run(
        root,
        &outputs,
        &TextJson::new(document, |layout| migrations_text::render(&view, layout)),
        Some(span),
    )?;
    Ok(ExitCode::SUCCESS)
}
