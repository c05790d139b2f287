//! What a front-end's tests check of the examples table against its real
//! clap definition: this crate cannot name the binary's parser, so the
//! binary's tests hand it in (`Cli::command()`, `Cli::try_parse_from`).

use clap::Command;

use crate::examples::{examples, EXAMPLES};

/// The paths of the commands that have a page and so need an example:
/// `` for the top, `mem`, `mem latency`. Hidden commands (the hotpages
/// reaper) have no page and no example.
pub fn command_paths(mut root: Command) -> Vec<String> {
    root.build();
    let mut paths = vec![String::new()];
    for sub in root
        .get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
    {
        paths.push(sub.get_name().to_string());
        for subsub in sub.get_subcommands().filter(|s| s.get_name() != "help") {
            paths.push(format!("{} {}", sub.get_name(), subsub.get_name()));
        }
    }
    paths
}

/// One line for each command of `root` without an example, each example
/// of a command `root` does not have, and each example that does not
/// start with `numasleuth`; empty when the table and `root` agree.
pub fn example_problems(root: Command) -> Vec<String> {
    let paths = command_paths(root);
    let mut problems: Vec<String> = paths
        .iter()
        .filter(|path| examples(path).is_empty())
        .map(|path| format!("`{path}` has no example"))
        .collect();
    for (path, list) in EXAMPLES {
        if !paths.iter().any(|p| p == path) {
            problems.push(format!("examples for `{path}`, which is no command"));
        }
        for (line, _) in *list {
            if !line.starts_with(crate::BIN) {
                problems.push(format!("`{line}` does not start with {}", crate::BIN));
            }
        }
    }
    problems
}

/// Every example as the words a shell would pass (`argv`, the program
/// name first), with the line it came from.
pub fn example_argvs() -> impl Iterator<Item = (&'static str, Vec<String>)> {
    EXAMPLES
        .iter()
        .flat_map(|(_, list)| list.iter())
        .map(|(line, _)| (*line, words(line)))
}

/// The words of an example up to a shell pipe or redirection, with
/// single quotes grouping.
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            '|' | '>' if !quoted => break,
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}
