//! Golden tests of the process commands, `inspect -p` (concise, `-v` and `--json`)
//! and `lines -p`, at 60, 80 and 120 columns (each checked to fit), on a captured process built here
//! under `--root`: a two-node machine, three threads on node 0, and a
//! program whose `.data` page sits on node 1.
//!
//! The program is tests/data/golden-app.elf, committed so no compiler's
//! choices reach the golden files: fuzz/seeds/elf_symbols/globals.o linked
//! with `ld -e bump -z noseparate-code -z max-page-size=4096` (GNU ld 2.40),
//! a non-PIE executable with `.text` at 0x400000 and `.data`/`.bss` (four
//! data symbols) at 0x401000. `INSTA_UPDATE=always cargo test -p numasleuth
//! --test it golden_process_cli::` rewrites the golden files after a deliberate
//! change.

use crate::common;
use crate::debug_output;

use std::path::{Path, PathBuf};

use common::{assert_fits, assert_provenance, numasleuth, two_node_files, write_tree, PROVENANCE_FILTER};

const TERMINAL_WIDTHS: &[u16] = &[60, 80, 120];
/// The capture's folder name, which the provenance line prints.
const CAPTURE: &str = "captured-app";

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-app.elf")
}

/// Mappings as the program's two load segments, a heap, a large anonymous
/// region bound to node 1 yet mostly on node 0, and a stack.
const MAPS: &str = "\
00400000-00401000 r-xp 00000000 fe:00 77 /opt/app
00401000-00402000 rw-p 00001000 fe:00 77 /opt/app
0055c000-0057d000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0040000000 rw-p 00000000 00:00 0
7ffc9c7d7000-7ffc9c7f8000 rw-p 00000000 00:00 0 [stack]
";

const NUMA_MAPS: &str = "\
00400000 default file=/opt/app mapped=1 N0=1 kernelpagesize_kB=4
00401000 default file=/opt/app anon=1 dirty=1 N1=1 kernelpagesize_kB=4
0055c000 default heap anon=30 dirty=30 N0=10 N1=20 kernelpagesize_kB=4
7f0000000000 bind:1 anon=200000 dirty=200000 N0=150000 N1=50000 kernelpagesize_kB=4
7ffc9c7d7000 default stack anon=3 dirty=3 N0=2 N1=1 kernelpagesize_kB=4
";

/// The capture, in `<tempdir>/captured-app`.
fn capture() -> tempfile::TempDir {
    let stat = |tid: u32, cpu: u32| {
        format!("{tid} (app) S 1 4242 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 3 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 {cpu} 0 0\n")
    };
    let status = "Name:\tapp\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0-1\n".to_string();
    let mut files = two_node_files();
    files.push(("proc/sys/kernel/hostname".into(), "db1\n".into()));
    files.push(("proc/sys/kernel/osrelease".into(), "6.1.0-26-amd64\n".into()));
    for (tid, cpu) in [(4242, 0), (4243, 1), (4244, 0)] {
        files.push((format!("proc/4242/task/{tid}/stat"), stat(tid, cpu)));
        files.push((format!("proc/4242/task/{tid}/status"), status.clone()));
    }
    files.push(("proc/4242/stat".into(), stat(4242, 0)));
    files.push(("proc/4242/status".into(), status));
    files.push(("proc/4242/maps".into(), MAPS.into()));
    files.push(("proc/4242/numa_maps".into(), NUMA_MAPS.into()));
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join(CAPTURE);
    write_tree(&root, &files);
    std::fs::create_dir_all(root.join("opt")).expect("opt");
    std::fs::copy(program(), root.join("opt/app")).expect("copy the program");
    dir
}

/// Runs from the capture's parent with a relative `--root`, so the path in
/// the provenance line is the same on every machine.
fn run(dir: &Path, args: &[&str], columns: u16) -> String {
    let output = numasleuth()
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", columns.to_string())
        .args(["--root", CAPTURE])
        .args(args)
        .output()
        .expect("run numasleuth");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = output.status.code().map_or("signal".to_string(), |c| c.to_string());
    format!("exit {status}\n--- stdout\n{stdout}--- stderr\n{stderr}")
}

fn golden(name: &str, args: &[&str]) {
    let dir = capture();
    for &columns in TERMINAL_WIDTHS {
        let output = run(dir.path(), args, columns);
        assert!(output.starts_with("exit 0\n"), "{name} at {columns} columns: {output}");
        assert_fits(name, &output, usize::from(columns));
        let stdout = output.split_once("--- stdout\n").map_or("", |(_, rest)| rest);
        assert_provenance(name, stdout, &format!("reading snapshot {CAPTURE} of "));
        if let Some(found) = debug_output::find(&output) {
            panic!("{name} at {columns} columns: Rust debug output reaches the user: {found}");
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_suffix(columns.to_string());
        settings.set_prepend_module_to_snapshot(false);
        settings.set_snapshot_path("../snapshots");
        settings.set_omit_expression(true);
        // This numasleuth and this run's time; the rest is the capture's.
        settings.add_filter(PROVENANCE_FILTER.0, PROVENANCE_FILTER.1);
        settings.add_filter(
            r"numasleuth \d+\.\d+\.\d+( \(git [0-9a-f]+(-dirty)?\))?, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
            "numasleuth [VERSION], [NOW]",
        );
        settings.bind(|| insta::assert_snapshot!(name, output));
    }
}

#[test]
fn inspect_concise() {
    golden("process_inspect", &["inspect", "-p", "4242"]);
}

#[test]
fn inspect_every_section() {
    golden("process_inspect_v", &["inspect", "-p", "4242", "-v"]);
}

#[test]
fn lines_of_the_process() {
    golden("process_lines", &["lines", "-p", "4242"]);
}

#[test]
fn lines_around_one_symbol() {
    golden("process_lines_symbol", &["lines", "-p", "4242", "--symbol", "counter"]);
}

/// `inspect -p --json` on the capture: every mapping, with hex addresses,
/// as the document writes it (the provenance's version and time masked).
#[test]
fn inspect_json() {
    let dir = capture();
    let output = run(dir.path(), &["inspect", "-p", "4242", "--json"], 80);
    assert!(output.starts_with("exit 0\n"), "inspect --json: {output}");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_suffix("json");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("../snapshots");
    settings.set_omit_expression(true);
    settings.add_filter(r#"("numasleuth_version": )"[^"]*""#, r#"${1}"[VERSION]""#);
    settings.add_filter(r#"("generated_unix_s": )\d+"#, r#"${1}"[NOW]""#);
    settings.add_filter(r#"("generated_utc": )"[^"]*""#, r#"${1}"[NOW]""#);
    settings.bind(|| insta::assert_snapshot!("process_inspect", output));
}
