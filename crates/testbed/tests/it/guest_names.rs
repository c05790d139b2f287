//! Every test in this binary but this one needs QEMU and the static build,
//! and `cargo test -- --skip qemu_` must leave them all out visibly: so each
//! is named `qemu_…`. Checked here over the sources, so a new guest test
//! with another name fails at once instead of breaking a `--skip`.

use std::path::Path;

#[test]
fn every_guest_test_is_named_qemu() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut misnamed = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        if !file.ends_with(".rs") || file == "main.rs" || file == "guest_names.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "#[test]" {
                continue;
            }
            // The next line that declares a function (attributes may come between).
            let Some(name) = lines.by_ref().find_map(|l| {
                l.trim()
                    .strip_prefix("fn ")
                    .and_then(|rest| rest.split('(').next())
                    .map(str::to_owned)
            }) else {
                continue;
            };
            seen += 1;
            if !name.starts_with("qemu_") {
                misnamed.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(seen >= 10, "found only {seen} guest tests under {}", dir.display());
    assert!(misnamed.is_empty(), "guest tests not named qemu_…: {misnamed:?}");
}
