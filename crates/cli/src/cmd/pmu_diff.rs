//! `numasleuth pmu diff GOOD.json BAD.json`: read two `pmu --json` files
//! and rank every event by how much it changed.
//!
//! The files are untrusted input: each must be a regular file (a FIFO or
//! device is refused without blocking on it), at most 16 MiB (a real one
//! is a few hundred KiB even with thousands of events), and of schema
//! `numasleuth.pmu/1`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::anyhow;
use numasleuth_analyze::pmu::diff::{diff, Per};
use numasleuth_kernel::{untrusted, Root};
use numasleuth_report::pmu_diff_json::{self, RunJson};
use numasleuth_report::{pmu_diff_text, pmu_json};

use super::pmu_args::PmuDiffArgs;
use numasleuth_report::export::TextJson;

pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The file's text, or why it is not one `pmu diff` reads: only a regular
/// file (a FIFO would block), at most 16 MiB.
fn read_document(path: &Path) -> Result<String, String> {
    let (file, meta) = untrusted::open_regular(path, true).map_err(|e| e.to_string())?;
    let bytes = untrusted::read_capped(file, meta.len(), MAX_FILE_BYTES)
        .map_err(|e| format!("{e} (no numasleuth.pmu/1 file is that large)"))?;
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 text, so not JSON".to_string())
}

pub fn run(root: &Root, args: &PmuDiffArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
    let load = |path: &Path, side: &str| {
        read_document(path)
            .and_then(|text| pmu_json::parse(&text).map_err(|e| e.to_string()))
            .map_err(|why| anyhow!("{side} {}: {why}", path.display()))
    };
    let good = load(&args.good, "GOOD")?;
    let bad = load(&args.bad, "BAD")?;
    let per = match args.per.as_str() {
        "second" => Per::Second,
        "op" => match (args.ops_good, args.ops_bad) {
            (Some(good), Some(bad)) => Per::Op {
                ops_a: good as f64,
                ops_b: bad as f64,
            },
            _ => return Err(anyhow!("--per op needs --ops-good N and --ops-bad N")),
        },
        event => Per::Event(event.to_string()),
    };
    if !matches!(per, Per::Op { .. }) && (args.ops_good.is_some() || args.ops_bad.is_some()) {
        return Err(anyhow!("--ops-good and --ops-bad apply only with --per op"));
    }
    let result = diff(&good, &bad, &per, args.min_count as f64).map_err(|why| {
        anyhow!(
            "{why} (A is GOOD {}, B is BAD {})",
            args.good.display(),
            args.bad.display()
        )
    })?;
    let (a_name, b_name) = (args.good.display().to_string(), args.bad.display().to_string());
    let a_json = RunJson {
        file: &a_name,
        duration_s: good.duration_s,
    };
    let b_json = RunJson {
        file: &b_name,
        duration_s: bad.duration_s,
    };
    let a = format!("{a_name} ({:.3} s)", good.duration_s);
    let b = format!("{b_name} ({:.3} s)", bad.duration_s);
    let report = TextJson::new(pmu_diff_json::build(&result, a_json, b_json), |layout| {
        pmu_diff_text::render(&result, &a, &b, layout)
    });
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
