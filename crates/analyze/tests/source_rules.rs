//! Rules about where code lives, checked on the sources by text (issue 22):
//! each fact has one definition, and a copy anywhere else fails here with
//! its file and line.
//!
//! Test code (`*_tests*.rs`, `tests.rs`, `tests/`, and everything after a
//! file's `#[cfg(test)]`) is left out: tests may build facts by hand.

use std::path::{Path, PathBuf};

use regex::Regex;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "target" && name != "fixtures" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && !name.contains("_tests") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// `(path relative to the workspace, line number, line)` of every non-test
/// source line under `crates/<crate>/src` for each crate in `crates`
/// (every crate when empty).
fn lines(crates: &[&str]) -> Vec<(String, usize, String)> {
    let root = workspace();
    let mut files = Vec::new();
    if crates.is_empty() {
        let dirs = std::fs::read_dir(root.join("crates")).expect("crates/ is readable");
        for dir in dirs.flatten() {
            sources(&dir.path().join("src"), &mut files);
        }
    } else {
        for name in crates {
            sources(&root.join("crates").join(name).join("src"), &mut files);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file is readable");
        let relative = file.strip_prefix(&root).unwrap_or(&file).to_string_lossy().into_owned();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            out.push((relative.clone(), i + 1, line.to_string()));
        }
    }
    out
}

/// Where `pattern` matches outside the files in `home` (path suffixes).
/// The regex crate is built without Unicode classes here: patterns use
/// `[A-Za-z0-9_]` and `(?-u:\b)`.
fn copies(pattern: &str, home: &[&str]) -> Vec<String> {
    let re = Regex::new(pattern).expect("a valid pattern");
    lines(&[])
        .into_iter()
        .filter(|(path, _, line)| re.is_match(line) && !home.iter().any(|h| path.ends_with(h)))
        .map(|(path, number, line)| format!("{path}:{number}: {}", line.trim()))
        .collect()
}

fn assert_one_place(fact: &str, pattern: &str, home: &[&str]) {
    let found = copies(pattern, home);
    assert!(
        found.is_empty(),
        "{fact} is defined in {home:?}; use it there instead of these copies:\n{}",
        found.join("\n")
    );
}

/// A node's memory told from its raw fields: the kernel's flag compared,
/// or its size tested for more than zero.
const MEMORY_COPY: &str = concat!(
    r"\.has_memory[ \t]*(==|!=|\.unwrap_or|\.map|\.is_)",
    r"|memory_total_bytes[ \t]*((==|!=)[ \t]*Some\(0\)|\.unwrap_or\(0\)[ \t]*>",
    r"|\.filter\(\|[a-z_]+\|[ \t]*\*[a-z_]+[ \t]*>[ \t]*0\))",
);

#[test]
fn node_has_memory_is_defined_once() {
    // The raw field is read by the definition and by the JSON that
    // exports the kernel's own answer; everyone else asks the method.
    assert_one_place(
        "\"node has memory\" (Node::holds_memory, Node::memory_bytes, Topology::memory_nodes)",
        MEMORY_COPY,
        &["crates/model/src/facts.rs"],
    );
}

#[test]
fn the_machine_names_have_one_reader() {
    // Provenance, a snapshot's manifest and a journal's identity all name
    // the machine; they ask `procfs::host`, so they cannot disagree on
    // trimming, caps or an empty file.
    assert_one_place(
        "the hostname and kernel release (kernel::procfs::host)",
        r"proc/sys/kernel/(hostname|osrelease)",
        &["crates/kernel/src/procfs/host.rs"],
    );
}

#[test]
fn a_check_id_appears_once() {
    // Every doctor check id is written in `CheckId::as_str`; everyone
    // else names the variant, so no check can be run, skipped or
    // gated under a misspelt id.
    const HOME: &str = "crates/analyze/src/doctor/check_id.rs";
    let text = std::fs::read_to_string(workspace().join(HOME)).unwrap();
    let arm = Regex::new(r#"CheckId::[A-Za-z]+ => "([a-z-]+)","#).unwrap();
    let ids: Vec<String> = arm.captures_iter(&text).map(|c| c[1].to_string()).collect();
    assert!(ids.len() >= 13, "{ids:?}");
    // The guest script's command of the same name prints the knob itself.
    let elsewhere = [("crates/testbed/src/guests.rs", "\"numa-balancing\".to_string()")];
    let mut found = Vec::new();
    for (path, number, line) in lines(&[]) {
        let quoted = |id: &String| line.contains(&format!("\"{id}\""));
        let allowed = path.ends_with(HOME) || elsewhere.iter().any(|(f, t)| path.ends_with(f) && line.contains(t));
        if ids.iter().any(quoted) && !allowed {
            found.push(format!("{path}:{number}: {}", line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "a check id written outside CheckId::as_str; name the CheckId variant:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_kind_of_a_mapping_is_defined_once() {
    assert_one_place(
        "the kind of a mapping (model::mapping_kind::MappingKind)",
        r#"== "\[(heap|stack)\]"|starts_with\("\[anon"#,
        &["crates/model/src/mapping_kind.rs"],
    );
}

#[test]
fn the_memory_rule_catches_what_it_names() {
    let re = Regex::new(MEMORY_COPY).unwrap();
    assert!(re.is_match("n.memory_total_bytes.unwrap_or(0) > 0"));
    assert!(re.is_match("n.memory_total_bytes.filter(|t| *t > 0)?"));
    assert!(!re.is_match("topo.memory_total_bytes.filter(|t| bytes as u64 > *t)"));
}

#[test]
fn the_node_of_a_cpu_is_defined_once() {
    assert_one_place(
        "\"the node of a CPU\" (Topology::node_of_cpu, Topology::cpu_nodes)",
        r"\.id == [A-Za-z0-9_]+\)(\?|\.and_then\(\|[A-Za-z0-9_]+\| [A-Za-z0-9_]+)\.node(?-u:\b)|cpus\.iter\(\)\.map\(move \|[A-Za-z0-9_]+\| \(|fn node_of(_cpu)?(?-u:\b)",
        &["crates/model/src/facts.rs"],
    );
}

#[test]
fn remote_bytes_is_defined_once() {
    assert_one_place(
        "remote bytes (model::process::remote_bytes)",
        r"fn remote_bytes(?-u:\b)",
        &["crates/model/src/process.rs"],
    );
}

#[test]
fn the_access_kind_is_one_enum() {
    // model::perf::watch::Access is what a watchpoint fires on (writes, or
    // reads and writes), not what an instruction did.
    assert_one_place(
        "the access kind (model::perf::decoded::AccessKind)",
        r"enum (Access|AccessKind)(?-u:\b)",
        &["crates/model/src/perf/decoded.rs", "crates/model/src/perf/watch.rs"],
    );
    let watch = std::fs::read_to_string(workspace().join("crates/model/src/perf/watch.rs")).unwrap();
    assert!(
        !watch.contains("ReadModifyWrite"),
        "watch::Access grew an instruction access kind"
    );
}

#[test]
fn hotlines_reads_the_maps_once() {
    let in_hotlines: Vec<_> = lines(&["app", "cli"])
        .into_iter()
        .filter(|(path, _, _)| path.contains("/cmd/hotlines") || path.contains("app/src/hotlines"))
        .collect();
    assert!(!in_hotlines.is_empty(), "the hotlines sources moved: update this test");
    let maps = |needle: &str| in_hotlines.iter().filter(|(_, _, l)| l.contains(needle)).count();
    // The path itself is built in the kernel's one maps reader only
    // (crates/kernel/src/task_paths_tests.rs); hotlines takes the mappings
    // and the objects they place from one read, symbols::MappedObjects.
    assert_eq!(
        maps("MappedObjects::read("),
        1,
        "hotlines reads /proc/PID/maps in one place"
    );
    assert_eq!(maps("maps::read("), 0, "hotlines reads /proc/PID/maps by hand");
    assert_eq!(
        maps("ProcessObjects::load("),
        0,
        "ProcessObjects::load reads the maps a second time"
    );
}

/// Comparisons of a field with a string literal that must stay, each with
/// why: `(file suffix, text on the line, reason)`. Everything else in
/// analyze and report compares types.
const STRING_COMPARES_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/analyze/src/pmu/precise.rs",
        "name == \"",
        "PMU and event names are the kernel's sysfs directory names, an open set no enum can list",
    ),
    (
        "crates/report/src/pmu_diff_text.rs",
        "\"second\" =>",
        "`per` is `second`, `op` or any event name the user gives `pmu --per`, an open set",
    ),
    (
        "crates/report/src/pmu_diff_text.rs",
        "\"op\" =>",
        "`per` is `second`, `op` or any event name the user gives `pmu --per`, an open set",
    ),
    (
        "crates/analyze/src/process.rs",
        "section == \".bss\"",
        "ELF section names are the linker's open set of strings",
    ),
];

/// A field (`x.name`, `x.kind.as_str()`) compared with `==`/`!=` to a
/// string literal, either way round, or `Some("…") = x.field`.
const FIELD_VS_LITERAL: &str = concat!(
    r#"\.[a-z_][A-Za-z0-9_]*(\.as_str\(\)|\.as_deref\(\))?[ ]*(==|!=)[ ]*(Some\()?""#,
    r#"|"[^"]*"\)?[ ]*(==|!=)[ ]*[A-Za-z0-9_]+\.[a-z_]"#,
    r#"|Some\("[^"]*"\)[ ]*=[ ]*[A-Za-z0-9_]+\."#,
);

#[test]
fn analyze_and_report_compare_types_not_strings() {
    let compared = Regex::new(FIELD_VS_LITERAL).unwrap();
    let scrutinee = Regex::new(r"match (.*) \{$").unwrap();
    // A field access, not a local's method: `d.per.as_str()`, `doc.method`.
    let field = Regex::new(r"[A-Za-z0-9_)]\.[a-z_][A-Za-z0-9_]*(\.as_str\(\)|\.as_deref\(\))?$").unwrap();
    let string_arm = Regex::new(r#"^[ ]*(Some\()?"[^"]*"\)?[ ]*(\||=>|if )"#).unwrap();
    let mut found = Vec::new();
    let mut matched_on = String::new();
    for (path, number, line) in lines(&["analyze", "report"]) {
        let code = line.split("//").next().unwrap_or("");
        if let Some(m) = scrutinee.captures(code.trim_end()) {
            matched_on = m[1].to_string();
        }
        // A match on a field whose arms are string literals.
        let arm_on_field = string_arm.is_match(code) && field.is_match(&matched_on);
        if !(compared.is_match(code) || arm_on_field) {
            continue;
        }
        let allowed = STRING_COMPARES_ALLOWED
            .iter()
            .any(|(file, text, _)| path.ends_with(file) && code.contains(text));
        if !allowed {
            found.push(format!("{path}:{number}: {}", line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "a field compared with a string literal: give it a type (an enum), or allow it with a reason in \
         STRING_COMPARES_ALLOWED:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_string_compare_rule_catches_what_it_names() {
    let compared = Regex::new(FIELD_VS_LITERAL).unwrap();
    for bad in [
        r#"zone.name != "DMA""#,
        r#".filter(|c| c.kind != "Instruction")"#,
        r#"if "never" == settings.thp"#,
        r#"doc.verdict.as_deref() == Some("page")"#,
        r#"if let Some("page") = doc.verdict"#,
    ] {
        assert!(compared.is_match(bad), "{bad}");
    }
    for good in [r#"let s = "a.b";"#, r#"x == y"#, r#"format!("{} == {}", a.b, c)"#] {
        assert!(!compared.is_match(good), "{good}");
    }
}
