//! Roff man pages: clap_mangen's sections, with the EXAMPLES and EXIT
//! STATUS of [`crate::examples`] in place of its EXTRA section. Every page
//! is rendered in memory; the front-end decides where the bytes go.

use clap::Command;

use crate::examples::{examples, exit_statuses};
use crate::{DocsError, BIN};

/// One page of [`man_pages`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManPage {
    /// Named after the command's path: `numasleuth-mem-latency.1`.
    pub file_name: String,
    /// The page, roff.
    pub bytes: Vec<u8>,
}

/// numasleuth(1), the page of the top command alone.
pub fn man_page(mut command: Command) -> Result<Vec<u8>, DocsError> {
    command.build();
    render(command, "")
}

/// The page of the command and, depth first, of every subcommand, each
/// named after its path (`numasleuth-mem-latency.1`).
pub fn man_pages(mut command: Command) -> Result<Vec<ManPage>, DocsError> {
    command.build();
    let mut out = Vec::new();
    collect(command, BIN.to_string(), "", &mut out)?;
    Ok(out)
}

fn collect(command: Command, name: String, path: &str, out: &mut Vec<ManPage>) -> Result<(), DocsError> {
    let subcommands: Vec<Command> = command
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .cloned()
        .collect();
    let bytes = render(command.name(name.clone()), path)?;
    out.push(ManPage {
        file_name: format!("{name}.1"),
        bytes,
    });
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

/// The page of the command at `path` (`mem latency`; `` for the top):
/// clap_mangen's sections, then EXAMPLES and EXIT STATUS in place of its
/// EXTRA section (the top command's one-line exit status), before VERSION.
fn render(command: Command, path: &str) -> Result<Vec<u8>, DocsError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command)
        .render(&mut page)
        .map_err(DocsError::ManRender)?;
    let page = String::from_utf8(page).map_err(DocsError::ManNotUtf8)?;
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
    for (line, what) in examples(path) {
        roff.control("TP", []).text([bold(*line)]).text([roman(*what)]);
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (status, meaning) in exit_statuses(path) {
        roff.control("TP", []).text([bold(status)]).text([roman(meaning)]);
    }
    roff.to_roff()
}
