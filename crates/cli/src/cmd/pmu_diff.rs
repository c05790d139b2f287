//! `numasleuth pmu diff GOOD.json BAD.json`: the comparison is the
//! application layer's (`numasleuth_app::pmu_diff`, which reads the two
//! untrusted files); this checks the flags, asks for it and prints it.

use std::process::ExitCode;

use anyhow::anyhow;
use numasleuth_analyze::pmu::diff::Per;
use numasleuth_app::pmu_diff::DiffRequest;
use numasleuth_kernel::Root;
use numasleuth_report::export::TextJson;
use numasleuth_report::pmu_diff_json;
use numasleuth_report::pmu_diff_text;

use super::pmu_args::PmuDiffArgs;

pub fn run(root: &Root, args: &PmuDiffArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan_text_json(args.json)?;
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
    let request = DiffRequest {
        good: args.good.clone(),
        bad: args.bad.clone(),
        per,
        min_count: args.min_count as f64,
    };
    let doc = numasleuth_app::pmu_diff::run(&request)?;
    let a = format!("{} ({:.3} s)", doc.a.file, doc.a.duration_s);
    let b = format!("{} ({:.3} s)", doc.b.file, doc.b.duration_s);
    let report = TextJson::new(pmu_diff_json::document(&doc), |layout| {
        pmu_diff_text::render(&doc.diff, &a, &b, layout)
    });
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
