//! `numasleuth migrations (PID | --all)`: each thread's moves between CPUs
//! and nodes over a window, and what AutoNUMA did meanwhile.
//!
//! Wiring only: the window is watched and judged by
//! `numasleuth_app::migrations`; this renders it (`report`).

use std::process::ExitCode;

use numasleuth_app::migrations::{How, MigrationsRequest};
use numasleuth_kernel::Root;
use numasleuth_report::export::TextJson;
use numasleuth_report::{migrations_json, migrations_text};

use super::hot_args::{MigrationMethod, MigrationsArgs};

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
    let request = MigrationsRequest {
        pid: args.process(),
        duration: args.duration,
        how: args.method.into(),
        interval: args.interval,
    };
    let stop = super::stop_signal::stop_on_signals();
    let done = numasleuth_app::migrations::run(root, &request, &stop, &crate::output::Say)?;
    let document = &done.document;
    super::output::emit_run(
        root,
        &outputs,
        &TextJson::new(migrations_json::document(document), |layout| {
            migrations_text::render(document, layout)
        }),
        Some(done.span),
    )?;
    Ok(ExitCode::SUCCESS)
}
