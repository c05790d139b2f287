//! numasleuth: find, prove and explain NUMA and cache-coherence problems.
//!
//! This binary is deliberately thin: clap validates what the user typed,
//! each command wires readers, model, analysis and a reporter, and `main`
//! turns failures into `numasleuth: error: …` with exit code 2.

// First, so `say!` is in scope in every module below.
#[macro_use]
mod output;
mod cli;
mod cmd;
mod usage_error;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Exit codes, as documented in the README.
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == cli::DamonReaperCli::NAME)
    {
        return damon_reaper();
    }
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if usage_error::is_answer(error.kind()) => {
            // Help and version go to stdout; a closed pipe is not an error.
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            output::say_line(usage_error::render(&error).trim_end());
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let result = match &cli.command {
        // Generated from the clap definition alone: no root is opened.
        Command::Completions(args) => cmd::docs_gen::completions(args),
        Command::Man(args) => cmd::docs_gen::man(args),
        _ => run(&mut cli),
    };
    match result {
        Ok(code) => code,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            say!("numasleuth: error: {error:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The internal `damon-reaper`, started by `hotpages` on the live system.
fn damon_reaper() -> ExitCode {
    let parsed = cli::DamonReaperCli::try_parse_from(std::env::args_os().skip(1));
    let result = match parsed {
        Ok(parsed) => cmd::hotpages::reaper(&numasleuth_kernel::Root::live(), &parsed.args),
        Err(error) => {
            output::say_line(usage_error::render(&error).trim_end());
            return ExitCode::from(EXIT_ERROR);
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            say!("numasleuth: error: {error:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(cli: &mut Cli) -> anyhow::Result<ExitCode> {
    let root = cmd::open_root(cli.root.as_deref())?;
    // A process named by name becomes its PID here, in the root it runs
    // in (live or snapshot), before any command looks at it.
    cmd::pid_arg::resolve_all(&root, cli.command.processes_mut())?;
    match &cli.command {
        Command::Topo(args) => cmd::topo::run(&root, args),
        Command::Snapshot(args) => cmd::snapshot::run(&root, args),
        Command::Doctor(args) => cmd::doctor::run(&root, args),
        Command::Irq(args) => cmd::irq::run(&root, args),
        Command::Undo(args) => cmd::undo::run(&root, args),
        Command::Memwatch(args) => cmd::memwatch::run(&root, args),
        Command::Meminfo(args) => cmd::meminfo::run(&root, args),
        Command::Mem(args) => cmd::mem::run(&root, args),
        Command::C2c(args) => cmd::c2c::run(&root, args),
        Command::Lab(args) => cmd::lab::run(&root, args),
        Command::Inspect(args) => cmd::inspect::run(&root, args),
        Command::Lines(args) => cmd::lines::run(&root, args),
        Command::Watch(args) => cmd::watch::run(&root, args),
        Command::Move(args) => cmd::moves::run(&root, args),
        Command::Pmu(args) => cmd::pmu::run(&root, args),
        Command::Runs(args) => cmd::runs::run(&root, args),
        Command::Bisect(args) => cmd::bisect::run(&root, args),
        Command::Serve(args) => cmd::serve::run(&root, args),
        Command::ProbeLatency(args) => cmd::probe_latency::run(&root, args),
        Command::Top(args) => cmd::top::run(&root, args),
        Command::Migrations(args) => cmd::migrations::run(&root, args),
        Command::Hotlines(args) => cmd::hotlines::run(&root, args),
        Command::Readers(args) => cmd::readers::run(&root, args),
        Command::Hotpages(args) => cmd::hotpages::run(&root, args),
        Command::Completions(args) => cmd::docs_gen::completions(args),
        Command::Man(args) => cmd::docs_gen::man(args),
    }
}
