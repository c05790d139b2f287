//! Typed errors in every library crate; anyhow only in cli (issue 35):
//! a crate's errors are enums its callers can match, and only the
//! front-end turns them into one line of text.

use std::path::Path;

/// The one crate that may depend on anyhow.
const FRONT_END: &str = "cli";

/// The crates under `crates/` whose Cargo.toml names anyhow, in any
/// dependency table.
fn crates_naming_anyhow(crates_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates_dir).expect("crates/").flatten() {
        let Ok(manifest) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else {
            continue;
        };
        let names_anyhow = manifest.lines().any(|line| {
            let key = line.split(['=', '.']).next().unwrap_or("").trim();
            key == "anyhow"
        });
        if names_anyhow {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found.sort();
    found
}

#[test]
fn only_the_front_end_depends_on_anyhow() {
    let crates_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let found = crates_naming_anyhow(&crates_dir);
    assert!(
        found.iter().all(|name| name == FRONT_END),
        "only {FRONT_END} may depend on anyhow; these do too: {:?}",
        found.iter().filter(|name| *name != FRONT_END).collect::<Vec<_>>()
    );
}

#[test]
fn the_anyhow_rule_catches_what_it_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, manifest) in [
        ("cli", "[dependencies]\nanyhow.workspace = true\n"),
        ("app", "[dependencies]\nthiserror.workspace = true\nanyhow = \"1\"\n"),
        ("kernel", "[dependencies]\n# anyhow is not here\nanyhow-like = \"1\"\n"),
    ] {
        std::fs::create_dir(dir.path().join(name)).expect("crate dir");
        std::fs::write(dir.path().join(name).join("Cargo.toml"), manifest).expect("manifest");
    }
    assert_eq!(crates_naming_anyhow(dir.path()), ["app", "cli"]);
}
