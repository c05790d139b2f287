//! `numasleuth completions SHELL` and `numasleuth man [--dir DIR]`: shell
//! completion scripts and roff man pages generated from the same clap
//! definition that parses the command line, so they cannot drift from it.
//!
//! Every page ends in EXAMPLES and EXIT STATUS from `docs_examples`, and
//! `man --markdown` prints the same reference as Markdown
//! (docs/commands.md, which a test holds to it).
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

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> anyhow::Result<String> {
    // Each subcommand's arguments are deferred until it runs; completions
    // need them all.
    let mut command = Cli::command();
    command.build();
    let mut bytes = Vec::new();
    let target = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(target, &mut command, "numasleuth", &mut bytes);
    String::from_utf8(bytes).context("the completion script is not UTF-8")
}

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    output::print(&completion_script(args.shell)?)?;
    Ok(ExitCode::SUCCESS)
}

/// The page of the command at `path` (`mem latency`; `` for the top):
/// clap_mangen's sections, then EXAMPLES and EXIT STATUS in place of its
/// EXTRA section (the top command's one-line exit status), before VERSION.
fn render(command: clap::Command, path: &str) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .context("cannot render the man page")?;
    let page = String::from_utf8(page).context("the man page is not UTF-8")?;
    let mut kept = String::with_capacity(page.len() + 2048);
    let mut skipping = false;
    for line in page.split_inclusive('\n') {
        if line.starts_with(".SH ") {
            skipping = line.trim_end() == ".SH EXTRA";
            if line.trim_end() == ".SH VERSION" {
                kept.push_str(&extra_sections(path));
            }
        }
        if !skipping {
            kept.push_str(line);
        }
    }
    if !page.contains("\n.SH VERSION") {
        kept.push_str(&extra_sections(path));
    }
    Ok(kept.into_bytes())
}

/// EXAMPLES and EXIT STATUS as roff.
fn extra_sections(path: &str) -> String {
    use roff::{bold, roman, Roff};
    let mut roff = Roff::new();
    roff.control("SH", ["EXAMPLES"]);
    for (line, what) in super::docs_examples::examples(path) {
        roff.control("TP", []).text([bold(*line)]).text([roman(*what)]);
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (status, meaning) in super::docs_examples::exit_statuses(path) {
        roff.control("TP", []).text([bold(status)]).text([roman(meaning)]);
    }
    roff.to_roff()
}

/// `(file name, roff)` for the command and, depth first, every subcommand,
/// each named after its path (`numasleuth-mem-latency`).
pub fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut root = Cli::command();
    root.build();
    let mut out = Vec::new();
    collect(root, "numasleuth".to_string(), "", &mut out)?;
    Ok(out)
}

fn collect(command: clap::Command, name: String, path: &str, out: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
    let subcommands: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .cloned()
        .collect();
    let page = render(command.name(name.clone()), path)?;
    out.push((format!("{name}.1"), page));
    for sub in subcommands {
        let sub_name = format!("{name}-{}", sub.get_name());
        let sub_path = if path.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{path} {}", sub.get_name())
        };
        collect(sub, sub_name, &sub_path, out)?;
    }
    Ok(())
}

pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    if args.markdown {
        output::print(&super::docs_markdown::reference())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(dir) = &args.dir else {
        let mut command = Cli::command();
        command.build();
        let page = render(command, "")?;
        output::print(&String::from_utf8_lossy(&page))?;
        return Ok(ExitCode::SUCCESS);
    };
    if !dir.is_dir() {
        bail!("{} is not a directory (create it first)", dir.display());
    }
    let pages = pages()?;
    for (name, page) in &pages {
        write_replacing(dir, name, page)?;
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
