//! `completions` and `man` generate from the clap definition: each shell's
//! script and each man page must exist, be plausible for its format, and
//! name the real subcommands, so a broken generator or a command missing
//! from the output fails here.

use crate::common;

use std::fs;

use common::{exit_2_stderr, numasleuth, output, stderr};

/// Subcommands every generated document must mention.
const SUBCOMMANDS: [&str; 8] = [
    "topo",
    "doctor",
    "inspect",
    "hotlines",
    "lab",
    "mem",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let out = output(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn bash_completion_names_the_subcommands() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(script.contains("_numasleuth()"), "a bash function");
    assert!(script.contains("complete -F _numasleuth"), "registered with complete");
    for sub in SUBCOMMANDS {
        assert!(script.contains(sub), "bash completion lacks {sub}");
    }
    // Flags of a subcommand are completed too.
    assert!(script.contains("--fail-on"), "doctor's --fail-on");
}

#[test]
fn zsh_and_fish_completions_are_their_formats() {
    let zsh = stdout_of(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef numasleuth"), "{}", &zsh[..zsh.len().min(80)]);
    let fish = stdout_of(&["completions", "fish"]);
    assert!(fish.contains("complete -c numasleuth"));
    for sub in SUBCOMMANDS {
        assert!(zsh.contains(sub), "zsh completion lacks {sub}");
        assert!(fish.contains(sub), "fish completion lacks {sub}");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let message = exit_2_stderr(&["completions", "csh"]);
    assert!(message.contains("bash, zsh, fish"), "{message}");
}

#[test]
fn the_man_page_is_roff_with_every_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(page.contains(".TH numasleuth 1"), "{}", &page[..page.len().min(200)]);
    assert!(page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"));
    for sub in SUBCOMMANDS {
        assert!(page.contains(sub), "man page lacks {sub}");
    }
}

#[test]
fn neither_reads_the_root() {
    let missing = "/nonexistent/numasleuth-root";
    let out = numasleuth()
        .args(["--root", missing, "completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = numasleuth().args(["--root", missing, "man"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn man_dir_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = numasleuth().arg("man").arg("--dir").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for name in [
        "numasleuth",
        "numasleuth-topo",
        "numasleuth-lab-locks",
        "numasleuth-pmu-diff",
    ] {
        let page = fs::read_to_string(dir.path().join(format!("{name}.1"))).unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(page.contains(&format!(".TH {name} 1")), "{name}.1 has no .TH");
        // Every page ends in its examples and exit statuses, in that order.
        let examples = page
            .find("\n.SH EXAMPLES\n")
            .unwrap_or_else(|| panic!("{name}.1 has no EXAMPLES"));
        let status = page
            .find("\n.SH \"EXIT STATUS\"\n")
            .or_else(|| page.find("\n.SH EXIT STATUS\n"));
        let status = status.unwrap_or_else(|| panic!("{name}.1 has no EXIT STATUS"));
        assert!(examples < status, "{name}.1");
        assert!(page[examples..].contains("numasleuth"), "{name}.1: no example command");
        assert!(!page.contains(".SH EXTRA"), "{name}.1 still has clap's EXTRA section");
    }
    let top = fs::read_to_string(dir.path().join("numasleuth.1")).unwrap();
    assert!(top.contains("a finding at or above"), "{top}");
    let count = fs::read_dir(dir.path()).unwrap().count();
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.contains(&format!("wrote {count} man pages")), "{said}");
    assert!(count >= 25, "{count} pages");
}

#[test]
fn man_dir_replaces_a_planted_symlink_without_following_it() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, "keep").unwrap();
    let pages = dir.path().join("pages");
    fs::create_dir(&pages).unwrap();
    std::os::unix::fs::symlink(&victim, pages.join("numasleuth-topo.1")).unwrap();
    let out = numasleuth().arg("man").arg("--dir").arg(&pages).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
    let link = fs::symlink_metadata(pages.join("numasleuth-topo.1")).unwrap();
    assert!(link.file_type().is_file(), "the page replaced the link");
}

#[test]
fn man_dir_must_exist() {
    let message = exit_2_stderr(&["man", "--dir", "/nonexistent/numasleuth-man"]);
    assert!(
        message.starts_with("numasleuth: error:") && message.contains("not a directory"),
        "{message}"
    );
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
}

/// docs/commands.md is `man --markdown` of this build: editing a `///`
/// comment or an example without regenerating the file fails here.
#[test]
fn docs_commands_md_is_what_the_binary_generates() {
    let generated = stdout_of(&["man", "--markdown"]);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/commands.md");
    let committed = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/commands.md differs from `numasleuth man --markdown`; run\n  \
         cargo run -p numasleuth -- man --markdown > docs/commands.md"
    );
    for section in [
        "## numasleuth meminfo",
        "## numasleuth mem latency",
        "Exit status:",
        "```sh",
    ] {
        assert!(generated.contains(section), "no {section}");
    }
}

/// Issue 36: the internal `damon-reaper` (started by `hotpages`) was
/// offered by every completion script and had a man page; it still runs.
#[test]
fn the_internal_reaper_is_in_no_generated_document() {
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(!script.contains("damon"), "{shell} completes damon-reaper");
    }
    assert!(!stdout_of(&["man"]).contains("damon"));
    assert!(!stdout_of(&["man", "--markdown"]).contains("damon"));
    let dir = tempfile::tempdir().unwrap();
    let out = numasleuth().arg("man").arg("--dir").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for entry in fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(!name.contains("damon"), "{name}");
    }
    // Still parsed: a missing --claims is a usage error naming it.
    let said = exit_2_stderr(&["damon-reaper"]);
    assert!(said.contains("--claims"), "{said}");
}

/// Issue 36: `mem`, `mem bandwidth` and `lab` had no option table, as
/// their options are global to their subcommands. Every command's section
/// now lists its options, points at its parent's, or says it has none.
#[test]
fn every_command_section_says_what_it_takes() {
    let page = stdout_of(&["man", "--markdown"]);
    let sections: Vec<&str> = page.split("\n## numasleuth ").skip(1).collect();
    assert!(sections.len() > 30, "{} sections", sections.len());
    for section in sections {
        let name = section.lines().next().unwrap_or("");
        assert!(
            section.contains("| option | meaning |")
                || section.contains("It also takes the options of")
                || section.contains("No options of its own"),
            "`{name}` says nothing of its options"
        );
    }
    let mem = page.split("\n## numasleuth mem\n").nth(1).unwrap();
    let mem = mem.split("\n## ").next().unwrap();
    assert!(
        mem.contains("`--size <BYTES>`") && mem.contains("`--mix <MIX>`"),
        "{mem}"
    );
    let bandwidth = page.split("\n## numasleuth mem bandwidth\n").nth(1).unwrap();
    let bandwidth = bandwidth.split("\n## ").next().unwrap();
    assert!(bandwidth.contains("](#numasleuth-mem)"), "{bandwidth}");
}
