//! `numasleuth completions SHELL` and `numasleuth man [--dir DIR]
//! [--markdown]`: the arguments, and the wiring to `numasleuth_docs`, which
//! renders the completion scripts, man pages and docs/commands.md from
//! this binary's clap definition in memory.
//!
//! Neither reads /proc or /sys. `man --dir` writes one page per command and
//! subcommand (`numasleuth-lab-locks.1`); every page is rendered in memory
//! first, and each file is written beside its final name and renamed over
//! it, so a failure leaves no half-written page and a symlink planted at a
//! page's name is replaced, never followed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, CommandFactory, ValueEnum};

use crate::cli::Cli;
use crate::output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl From<Shell> for numasleuth_docs::Shell {
    fn from(shell: Shell) -> Self {
        match shell {
            Shell::Bash => Self::Bash,
            Shell::Zsh => Self::Zsh,
            Shell::Fish => Self::Fish,
        }
    }
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for: bash, zsh or fish.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write numasleuth.1 and one page per subcommand
    /// (numasleuth-topo.1, numasleuth-lab-locks.1, …) into this existing
    /// directory instead of printing numasleuth(1) to stdout.
    #[arg(long, value_name = "DIR", conflicts_with = "markdown")]
    pub dir: Option<PathBuf>,
    /// Print every command's reference as one Markdown page instead (what
    /// docs/commands.md holds).
    #[arg(long)]
    pub markdown: bool,
}

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    output::print(&numasleuth_docs::completion_script(Cli::command(), args.shell.into())?)?;
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    if args.markdown {
        output::print(&numasleuth_docs::markdown_reference(Cli::command()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(dir) = &args.dir else {
        let page = numasleuth_docs::man_page(Cli::command())?;
        output::print(&String::from_utf8_lossy(&page))?;
        return Ok(ExitCode::SUCCESS);
    };
    if !dir.is_dir() {
        bail!("{} is not a directory (create it first)", dir.display());
    }
    let pages = numasleuth_docs::man_pages(Cli::command())?;
    for page in &pages {
        write_replacing(dir, &page.file_name, &page.bytes)?;
    }
    output::print(&format!("wrote {} man pages to {}\n", pages.len(), dir.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `name` in `dir` whole or not at all.
fn write_replacing(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let target = dir.join(name);
    numasleuth_kernel::atomic_write::write_atomic(&target, bytes, 0o666)
        .with_context(|| format!("cannot write {}", target.display()))
}

/// The examples table (`crates/docs/src/examples.rs`) against this
/// binary's real parser, which the docs crate cannot name.
#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use crate::cli::Cli;

    /// Every command and subcommand has an example, and every example
    /// names a command that exists.
    #[test]
    fn every_command_has_an_example_and_every_example_a_command() {
        let problems = numasleuth_docs::check::example_problems(Cli::command());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// Every example is a command line the binary accepts.
    #[test]
    fn every_example_parses() {
        for (line, argv) in numasleuth_docs::check::example_argvs() {
            if let Err(e) = Cli::try_parse_from(argv) {
                panic!("`{line}` does not parse: {e}");
            }
        }
    }
}
