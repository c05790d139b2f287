//! The renderers on a small command of their own: each document's format,
//! its names and its examples. The real definition's documents are
//! checked byte for byte by cli's tests (docs/commands.md) and its
//! examples against the real parser.

use clap::{Arg, ArgAction, Command};

use crate::check::{command_paths, example_problems, words};
use crate::examples::exit_statuses;
use crate::{completion_script, man_page, man_pages, markdown_reference, Shell};

/// A few of numasleuth's real commands, with an inherited option, a
/// default, possible values and an EXTRA section (`after_help`).
fn command() -> Command {
    let fail_on = Arg::new("fail_on")
        .long("fail-on")
        .value_name("SEVERITY")
        .value_parser(["warning", "critical"])
        .default_value("critical")
        .help("Exit 1 at or above this | severity.");
    let cpus = Arg::new("cpus")
        .long("cpus")
        .short('C')
        .global(true)
        .value_name("CPUS")
        .help("The CPUs to measure on.");
    let sizes = Arg::new("sizes")
        .long("sizes")
        .value_name("RANGE")
        .help("Buffer sizes.");
    Command::new("numasleuth")
        .about("Find NUMA problems.")
        .after_help("Exit status: 0 fine.")
        .arg(
            Arg::new("root")
                .long("root")
                .global(true)
                .value_name("DIR")
                .help("A snapshot."),
        )
        .subcommand(Command::new("doctor").about("Every check.").arg(fail_on))
        .subcommand(
            Command::new("mem")
                .about("Memory matrices.")
                .arg(cpus)
                .subcommand(Command::new("latency").about("Latency by size.").arg(sizes)),
        )
        .subcommand(
            Command::new("man")
                .about("Man pages.")
                .arg(Arg::new("markdown").long("markdown").action(ArgAction::SetTrue)),
        )
        .subcommand(Command::new("damon-reaper").hide(true))
}

#[test]
fn words_are_split_as_a_shell_would_up_to_a_pipe() {
    assert_eq!(
        words("numasleuth bisect --metric-cmd 'curl -s x' --apply | less"),
        ["numasleuth", "bisect", "--metric-cmd", "curl -s x", "--apply"]
    );
    assert_eq!(
        words("numasleuth man --markdown > docs/commands.md"),
        ["numasleuth", "man", "--markdown"]
    );
}

#[test]
fn command_paths_leave_out_hidden_commands_and_help() {
    assert_eq!(command_paths(command()), ["", "doctor", "mem", "mem latency", "man"]);
}

#[test]
fn example_problems_name_missing_examples_and_unknown_commands() {
    let with_new = command().subcommand(Command::new("frobnicate").about("New."));
    let problems = example_problems(with_new);
    assert!(
        problems.contains(&"`frobnicate` has no example".to_string()),
        "{problems:?}"
    );
    // The table has examples for commands this small one lacks.
    assert!(
        problems.contains(&"examples for `topo`, which is no command".to_string()),
        "{problems:?}"
    );
    assert!(!problems.iter().any(|p| p.contains("`doctor` has no")), "{problems:?}");
}

#[test]
fn exit_statuses_follow_the_command() {
    let statuses = |path| exit_statuses(path).into_iter().map(|(s, _)| s).collect::<Vec<_>>();
    assert_eq!(statuses("topo"), ["0", "2"]);
    assert_eq!(statuses("doctor"), ["0", "1", "2"]);
    assert_eq!(statuses("mem latency"), ["0", "2", "130"]);
    assert_eq!(statuses("pmu"), ["0", "2", "1-255", "130"]);
    assert_eq!(statuses(""), ["0", "1", "2", "1-255", "130"]);
}

#[test]
fn completion_scripts_are_their_shells_formats() {
    let bash = completion_script(command(), Shell::Bash).unwrap();
    assert!(bash.contains("_numasleuth()") && bash.contains("--fail-on"), "{bash}");
    let zsh = completion_script(command(), Shell::Zsh).unwrap();
    assert!(zsh.starts_with("#compdef numasleuth"), "{zsh}");
    let fish = completion_script(command(), Shell::Fish).unwrap();
    assert!(
        fish.contains("complete -c numasleuth") && fish.contains("latency"),
        "{fish}"
    );
}

#[test]
fn man_pages_are_named_by_path_depth_first_and_end_in_examples() {
    let pages = man_pages(command()).unwrap();
    let names: Vec<&str> = pages.iter().map(|p| p.file_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "numasleuth.1",
            "numasleuth-doctor.1",
            "numasleuth-mem.1",
            "numasleuth-mem-latency.1",
            "numasleuth-man.1",
            "numasleuth-damon-reaper.1",
        ]
    );
    for page in &pages {
        let text = String::from_utf8(page.bytes.clone()).unwrap();
        let stem = page.file_name.trim_end_matches(".1");
        assert!(text.contains(&format!(".TH {stem} 1")), "{text}");
        let examples = text.find("\n.SH EXAMPLES\n").expect("EXAMPLES");
        let status = text.find("\n.SH \"EXIT STATUS\"\n").expect("EXIT STATUS");
        assert!(examples < status, "{text}");
        assert!(!text.contains(".SH EXTRA"), "{text}");
    }
    let latency = String::from_utf8(pages[3].bytes.clone()).unwrap();
    assert!(
        latency.contains("numasleuth mem latency \\-\\-sizes 16K..64M"),
        "{latency}"
    );
    // The top page alone is the first of the set.
    assert_eq!(man_page(command()).unwrap(), pages[0].bytes);
}

#[test]
fn the_markdown_reference_lists_each_command_its_options_and_examples() {
    let page = markdown_reference(command());
    assert!(page.starts_with("# Command reference\n"), "{page}");
    assert!(
        page.contains("| [`mem latency`](#numasleuth-mem-latency) | Latency by size. |"),
        "{page}"
    );
    assert!(!page.contains("damon-reaper"), "a hidden command has no section");
    assert!(page.contains("\n## numasleuth doctor\n"), "{page}");
    assert!(
        page.contains(
            "| `--fail-on <SEVERITY>` | Exit 1 at or above this \\| severity. [default: critical] \
             [possible values: warning, critical] |"
        ),
        "{page}"
    );
    assert!(
        page.contains("It also takes the options of [`numasleuth mem`](#numasleuth-mem)."),
        "{page}"
    );
    assert!(
        page.contains("numasleuth doctor --fail-on warning    # Exit 1"),
        "{page}"
    );
    assert!(page.contains("- `130`: A second Ctrl-C"), "{page}");
}
