//! `numasleuth pmu diff GOOD.json BAD.json`: the comparison is the
//! application layer's (`numasleuth_app::pmu_diff`, which reads the two
//! untrusted files); this checks the flags, asks for it and prints it.

use std::process::ExitCode;

use anyhow::anyhow;
use numasleuth_analyze::pmu::diff::Per;
use numasleuth_app::pmu_diff::DiffRequest;
use numasleuth_kernel::Root;
use numasleuth_report::export::TextJson;
use numasleuth_report::pmu_diff_json::{self, RunJson};
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
    let diffed = numasleuth_app::pmu_diff::run(&request)?;
    let (a_name, b_name) = (args.good.display().to_string(), args.bad.display().to_string());
    let a_json = RunJson {
        file: &a_name,
        duration_s: diffed.good.duration_s,
    };
    let b_json = RunJson {
        file: &b_name,
        duration_s: diffed.bad.duration_s,
    };
    let a = format!("{a_name} ({:.3} s)", diffed.good.duration_s);
    let b = format!("{b_name} ({:.3} s)", diffed.bad.duration_s);
    let report = TextJson::new(pmu_diff_json::build(&diffed.diff, a_json, b_json), |layout| {
        pmu_diff_text::render(&diffed.diff, &a, &b, layout)
    });
    super::output::emit(root, &outputs, &report)?;
    Ok(ExitCode::SUCCESS)
}
