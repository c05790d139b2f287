//! `numasleuth snapshot -o PATH [-p PID|NAME…]`: the recording is the
//! application layer's (`numasleuth_app::snapshot`); this resolves the
//! processes, asks for it and says what was written.

use std::process::ExitCode;

use numasleuth_app::snapshot::{self, SnapshotRequest};
use numasleuth_kernel::Root;

use crate::cli::SnapshotArgs;

pub fn run(root: &Root, args: &SnapshotArgs) -> anyhow::Result<ExitCode> {
    // Names were resolved on the plain root (in main), so the snapshot does
    // not keep every process's comm that was looked at.
    let pids = numasleuth_app::process_ref::existing_pids(root, &args.pids)?;
    let request = SnapshotRequest {
        pids,
        output: args.output.clone(),
        command_line: std::env::args().collect(),
    };
    let summary = snapshot::record(root, &request, &crate::output::Say)?;
    let held = if request.pids.is_empty() {
        String::new()
    } else {
        format!(", processes {}", numasleuth_kernel::IdList::new(request.pids))
    };
    say!(
        "numasleuth: wrote {} ({} files, {} links, {} bytes of kernel data{held})",
        args.output.display(),
        summary.files,
        summary.symlinks,
        summary.bytes
    );
    Ok(ExitCode::SUCCESS)
}
