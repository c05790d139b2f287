//! Synthetic kernel trees for CLI tests: small, explicit, and each test
//! changes only the file it is about.

#![allow(dead_code)]

pub mod exporter;

use std::fs;
use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// A two-node, four-CPU machine: node 0 has CPUs 0-1, node 1 CPUs 2-3.
pub fn two_node_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = vec![
        ("sys/devices/system/node/online", "0-1\n"),
        ("sys/devices/system/node/possible", "0-1\n"),
        ("sys/devices/system/node/has_cpu", "0-1\n"),
        ("sys/devices/system/node/has_memory", "0-1\n"),
        ("sys/devices/system/node/node0/cpulist", "0-1\n"),
        ("sys/devices/system/node/node0/distance", "10 21\n"),
        ("sys/devices/system/node/node1/cpulist", "2-3\n"),
        ("sys/devices/system/node/node1/distance", "21 10\n"),
        ("sys/devices/system/cpu/online", "0-3\n"),
        ("sys/devices/system/cpu/present", "0-3\n"),
        ("proc/meminfo", "MemTotal: 2097152 kB\nMemFree: 1048576 kB\n"),
        ("proc/self/status", "Cpus_allowed_list:\t0-3\nMems_allowed_list:\t0-1\n"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    for node in 0..2 {
        files.push((
            format!("sys/devices/system/node/node{node}/meminfo"),
            format!("Node {node} MemTotal: 1048576 kB\nNode {node} MemFree: 524288 kB\n"),
        ));
    }
    for cpu in 0..4 {
        let dir = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        files.push((format!("{dir}/physical_package_id"), format!("{}\n", cpu / 2)));
        files.push((format!("{dir}/core_id"), format!("{}\n", cpu % 2)));
    }
    files
}

/// Contents starting with `symlink:` make a symbolic link to the rest.
pub fn write_tree(dir: &Path, files: &[(String, String)]) {
    for (path, contents) in files {
        let at = dir.join(path);
        fs::create_dir_all(at.parent().unwrap()).unwrap();
        match contents.strip_prefix("symlink:") {
            Some(target) => std::os::unix::fs::symlink(target, at).unwrap(),
            None => fs::write(at, contents).unwrap(),
        }
    }
}

/// Host files `doctor` and `irq` read, all healthy: watermarks far below
/// free, NUMA knobs at their safe values, and a NIC on node 1 whose one IRQ
/// is served by node 1's CPU 2.
pub fn healthy_host_files() -> Vec<(String, String)> {
    let zone = |node: u32| {
        format!(
            "Node {node}, zone   Normal\n  pages free     200000\n        min      1000\n        low      1250\n\
             \x20       high     1500\n        spanned  262144\n        present  262144\n        managed  250000\n\
             \x20       protection: (0, 0, 0, 0)\n"
        )
    };
    let nic = "sys/devices/pci0000:10/0000:10:00.0/0000:11:01.0";
    [
        ("proc/zoneinfo", format!("{}{}", zone(0), zone(1))),
        ("proc/sys/kernel/numa_balancing", "0\n".into()),
        ("proc/sys/vm/zone_reclaim_mode", "0\n".into()),
        ("proc/sys/vm/min_free_kbytes", "8192\n".into()),
        ("proc/sys/vm/watermark_scale_factor", "10\n".into()),
        (
            "sys/kernel/mm/transparent_hugepage/enabled",
            "always [madvise] never\n".into(),
        ),
        (
            "sys/kernel/mm/transparent_hugepage/defrag",
            "always defer defer+madvise [madvise] never\n".into(),
        ),
        ("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n".into()),
        ("proc/cmdline", "console=ttyS0 quiet\n".into()),
        ("proc/vmstat", "numa_hit 10\nnuma_miss 0\nnuma_hint_faults 0\n".into()),
        (
            "proc/interrupts",
            "  CPU0 CPU1 CPU2 CPU3\n 40: 0 0 900 0 IO-APIC 10-fasteoi eth0\n".into(),
        ),
        ("proc/irq/40/smp_affinity_list", "2-3\n".into()),
        ("proc/irq/40/effective_affinity_list", "2\n".into()),
        ("proc/irq/40/node", "1\n".into()),
        (&format!("{nic}/numa_node") as &str, "1\n".into()),
        (&format!("{nic}/local_cpulist") as &str, "2-3\n".into()),
        (&format!("{nic}/class") as &str, "0x020000\n".into()),
        (&format!("{nic}/msi_irqs/40") as &str, "msix\n".into()),
        (&format!("{nic}/net/eth0/mtu") as &str, "1500\n".into()),
        (
            "sys/class/net/eth0",
            format!("symlink:../../{}/net/eth0", nic.trim_start_matches("sys/")),
        ),
        (
            "sys/bus/pci/devices/0000:11:01.0",
            format!("symlink:../../../{}", nic.trim_start_matches("sys/")),
        ),
        ("proc/1/comm", "init\n".into()),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b))
    .collect()
}

/// The two-node machine with healthy host files, then `changes` applied.
pub fn host_tree_with(changes: &[(&str, Option<&str>)]) -> tempfile::TempDir {
    let mut files = two_node_files();
    files.extend(healthy_host_files());
    tree_of(files, changes)
}

/// `two_node_files` with some files replaced (or removed, for `None`).
pub fn tree_with(changes: &[(&str, Option<&str>)]) -> tempfile::TempDir {
    tree_of(two_node_files(), changes)
}

fn tree_of(mut files: Vec<(String, String)>, changes: &[(&str, Option<&str>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, contents) in changes {
        files.retain(|(p, _)| p != path);
        if let Some(contents) = contents {
            files.push((path.to_string(), contents.to_string()));
        }
    }
    write_tree(dir.path(), &files);
    dir
}

/// Tests that act as another user or write kernel files need root; CI runs
/// as root, and elsewhere such a test fails saying why rather than passing
/// without having run.
pub fn require_root(what: &str) {
    let uid = fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Uid:")
                .and_then(|ids| ids.split_whitespace().nth(1))
                .map(str::to_string)
        });
    assert_eq!(uid.as_deref(), Some("0"), "this test needs root: {what}");
}

/// `doctor --html` of a tree: the report's text, after a successful run.
pub fn doctor_html(root: &Path) -> String {
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("report.html");
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args(["doctor", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    fs::read_to_string(&page).unwrap()
}

pub fn numasleuth() -> Command {
    Command::cargo_bin("numasleuth").unwrap()
}

pub fn topo_json(root: &Path) -> Value {
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args(["topo", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs the binary with `args` on this machine (no `--root`).
pub fn output(args: &[&str]) -> Output {
    numasleuth().args(args).output().unwrap()
}

/// `args` must succeed; their stdout, parsed.
pub fn json(args: &[&str]) -> Value {
    let out = output(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `args` must be refused with exit 2; their stderr, for the caller to
/// check the message.
pub fn exit_2_stderr(args: &[&str]) -> String {
    let out = output(args);
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail with exit 2");
    stderr(&out)
}

/// Drops fields that legitimately change between two reads of one machine.
pub fn without_volatile(mut value: Value) -> Value {
    // When and from where differ by design; the machine must not.
    if let Some(object) = value.as_object_mut() {
        object.remove("provenance");
    }
    if let Some(nodes) = value["nodes"].as_array_mut() {
        for node in nodes {
            node.as_object_mut().unwrap().remove("memory_free_bytes");
        }
    }
    value
}

/// `doctor --json` on `root` with `extra` flags: its exit code and JSON.
pub fn doctor_json(root: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let (code, json, _) = doctor_json_and_stderr(root, extra);
    (code, json)
}

/// [`doctor_json`] plus what it printed on stderr (warnings).
pub fn doctor_json_and_stderr(root: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args(["doctor", "--json"])
        .args(extra)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    (output.status.code(), json, stderr(&output))
}

/// Runs numasleuth with `args` writing into a pipe of one page whose reader
/// takes one byte and closes it, and returns the exit status and stderr.
/// First runs it to count its output, and fails unless that output is more
/// than twice the pipe's capacity: otherwise every write would fit in the
/// pipe, no write could fail, and the test could not fail either.
pub fn run_into_a_closed_pipe(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let full = numasleuth().args(args).output().unwrap();
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor we own; 4096 is the smallest size.
    let capacity = unsafe {
        libc::fcntl(fds[1], libc::F_SETPIPE_SZ, 4096);
        libc::fcntl(fds[1], libc::F_GETPIPE_SZ)
    };
    assert!(capacity > 0, "F_GETPIPE_SZ failed");
    assert!(
        full.stdout.len() > 2 * capacity as usize,
        "numasleuth {args:?} writes {} bytes, not more than twice the {capacity}-byte pipe: no write would fail",
        full.stdout.len()
    );
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(args)
        .stdout(std::process::Stdio::from(write_end))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::fs::File::from(read_end);
    let mut first = [0u8; 1];
    reader.read_exact(&mut first).unwrap();
    drop(reader);
    let out = child.wait_with_output().unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Fails when a line of `text` is wider than `width` columns, unless the
/// line is one token that cannot be broken (a long path on its own line) or one
/// `code span` (a command to paste, never broken).
/// Every character counts one column: the golden outputs are ASCII, `…`,
/// `→` and `×`, each one column wide.
pub fn assert_fits(what: &str, text: &str, width: usize) {
    for line in text.lines() {
        let columns = line.chars().count();
        assert!(
            columns <= width || unbreakable(line),
            "{what} at {width} columns: a line is {columns} wide:\n{line}\n\n{text}"
        );
    }
}

/// A redaction for golden files: the provenance line, wrapped or not. It
/// holds this build's version and git state, whose length moves where the
/// line breaks, so it is checked apart (`assert_provenance`).
pub const PROVENANCE_FILTER: (&str, &str) = (
    r"(?m)^(reading snapshot [^\n]*|[^\n]*, live system, [^\n]*)(\n  [^\n]*)*",
    "[PROVENANCE]",
);

/// The provenance paragraph that starts stdout (the text after
/// `--- stdout`), joined back into one line, starts with `prefix`.
pub fn assert_provenance(what: &str, stdout: &str, prefix: &str) {
    let mut lines = stdout.lines();
    let mut joined = lines.next().unwrap_or_default().to_string();
    for line in lines.take_while(|l| l.starts_with("  ")) {
        joined.push(' ');
        joined.push_str(line.trim_start());
    }
    assert!(
        joined.starts_with(prefix),
        "{what}: provenance {joined:?} does not start with {prefix:?}"
    );
    assert!(joined.contains("; numasleuth "), "{what}: provenance {joined:?}");
}

/// A text report's provenance paragraph (its first line and the indented
/// lines it wrapped onto), joined back into one line, and the report after
/// it.
pub fn provenance_and_report(text: &str) -> (String, &str) {
    let mut rest = text;
    let mut joined = String::new();
    while let Some((line, after)) = rest.split_once('\n') {
        let continuation = line.starts_with("  ");
        if !joined.is_empty() && !continuation {
            break;
        }
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(line.trim_start());
        rest = after;
    }
    (joined, rest)
}

/// Gives `command`'s child the default SIGINT, as a terminal's foreground
/// job has it. A test run started in the background of a non-interactive
/// shell (a CI runner may start it so, as `cmd &` in a script does) inherits
/// SIGINT ignored, and numasleuth, like any program, keeps an ignored
/// signal ignored: a Ctrl-C test would then wait for a handler that never
/// comes.
pub fn default_sigint(command: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only
    // calls signal(2), which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        })
    }
}

/// One token, or one `code span` with its punctuation: what the text
/// layout never breaks.
fn unbreakable(line: &str) -> bool {
    let text = line.trim();
    let code = text
        .trim_start_matches('(')
        .trim_end_matches(|c: char| ".,;:)".contains(c));
    !text.contains(' ') || (code.starts_with('`') && code.ends_with('`') && code.matches('`').count() == 2)
}
