//! `numasleuth c2c`: the core-to-core cache-line latency matrix, with the
//! contended line on a node the user chooses (`--home-node`).
//!
//! Wiring only: the pipeline is `numasleuth_app::c2c` (the CPUs chosen
//! and thinned, every pair measured once through a line on the home node,
//! the matrix judged against the declared topology); this turns the
//! arguments into its request, draws its progress and prints the document.

use std::process::ExitCode;

use numasleuth_analyze::cpu_sample::CpuSample;
use numasleuth_app::c2c::C2cRequest;
use numasleuth_kernel::Root;
use numasleuth_measure::c2c::Method;
use numasleuth_report::measure_export::C2cReport;

use super::measure_args::{C2cArgs, MethodArg, SampleArg};
use super::measure_plan::{self, Bar};
use super::output::Aliases;

pub fn run(root: &Root, args: &C2cArgs) -> anyhow::Result<ExitCode> {
    let outputs = args.output.plan::<C2cReport>(Aliases {
        json: args.json,
        csv: args.csv,
        ..Aliases::default()
    })?;
    let machine = measure_plan::machine(root, "c2c")?;
    let stop = super::stop_signal::stop_on_signals();
    let (doc, span) = numasleuth_app::c2c::run(&machine, &request(args), &stop, &mut Bar::new())?;
    super::output::emit_run(root, &outputs, &C2cReport(&doc), Some(span))?;
    Ok(ExitCode::SUCCESS)
}

fn request(args: &C2cArgs) -> C2cRequest {
    C2cRequest {
        cpus: args.cpus.clone(),
        home_node: args.home_node,
        method: match args.method {
            MethodArg::Cas => Method::Cas,
            MethodArg::OneWay => Method::OneWay,
        },
        sample: match args.sample {
            SampleArg::Auto => CpuSample::Auto,
            SampleArg::All => CpuSample::All,
            SampleArg::Core => CpuSample::Core,
            SampleArg::Cache => CpuSample::Cache,
            SampleArg::Node => CpuSample::Node,
        },
        samples: args.samples,
        transfers: args.transfers,
        quick: args.quick,
        raw: args.raw,
    }
}
