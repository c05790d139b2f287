//! ELF placement on live processes: the victim built as a PIE and as a
//! non-PIE, its symbols found at the addresses it prints itself, a deleted
//! binary read through map_files, and stripped or non-ELF files.

#[path = "../../../tests/victim/victim_build.rs"]
mod victim_build;

use numasleuth_kernel::Root;
use numasleuth_symbols::image::ElfType;
use numasleuth_symbols::open::ObjectSource;
use numasleuth_symbols::symbols::SymbolSource;
use numasleuth_symbols::{ProcessObjects, SectionClass, SymbolError};

fn placed_like_the_victim_says(binary: &std::path::Path, expect_bias_zero: bool) {
    let victim = victim_build::start(binary, &["--workers", "1", "--seconds", "20"]);
    let objects = ProcessObjects::load(&Root::live(), victim.pid).unwrap();
    let main = objects.main_object().expect("the program is placed");
    assert_eq!(main.path, binary.to_string_lossy());
    assert_eq!(main.bias == 0, expect_bias_zero, "bias {:#x}", main.bias);
    let found = objects.find_symbol("nil_root", None).unwrap();
    assert_eq!(
        found[0].runtime.as_ref().unwrap().start,
        victim.nil_root,
        "{}",
        victim.line
    );
    assert_eq!(found[0].symbol.section.as_deref(), Some(".bss"));
    let log = objects.find_symbol("log_level", Some(&main.path)).unwrap();
    assert_eq!(log[0].runtime.as_ref().unwrap().start, victim.log_level);
    let bss = objects.section_ranges(".bss", None).unwrap();
    assert_eq!(bss[0].class, SectionClass::Bss);
    assert!(bss[0].runtime.contains(&victim.nil_root));
    // Every section span of the program lies where some mapping or the
    // .bss tail puts it, and nil_root's page is attributed to .bss.
    let spans: Vec<_> = objects
        .spans_overlapping(victim.nil_root, victim.nil_root + 8)
        .collect();
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0].section, ".bss");
    assert_eq!(
        objects.object_at(victim.nil_root, victim.nil_root + 8).unwrap().path,
        main.path
    );
    // libc is placed too, with its own bias.
    assert!(objects.objects.iter().any(|o| o.path.contains("libc.so")));
    let err = objects.find_symbol("no_such_symbol_here", None).unwrap_err();
    assert!(matches!(err, SymbolError::SymbolNotFound { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("symbol `no_such_symbol_here` not found in "),
        "{err}"
    );
}

#[test]
fn pie_victim_is_placed_with_its_load_bias() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim-pie", &["-pie", "-fPIE"]);
    let image = ObjectSource::file(&binary.to_string_lossy()).image().unwrap();
    assert_eq!(image.elf_type, ElfType::Dynamic);
    placed_like_the_victim_says(&binary, false);
}

#[test]
fn non_pie_victim_has_bias_zero() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim-nopie", &["-no-pie", "-fno-PIE"]);
    let image = ObjectSource::file(&binary.to_string_lossy()).image().unwrap();
    assert_eq!(image.elf_type, ElfType::Executable);
    placed_like_the_victim_says(&binary, true);
}

#[test]
fn a_deleted_binary_is_read_through_map_files() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim-deleted", &[]);
    let victim = victim_build::start(&binary, &["--workers", "1", "--seconds", "20"]);
    std::fs::remove_file(&binary).unwrap();
    let objects = ProcessObjects::load(&Root::live(), victim.pid).unwrap();
    let main = objects.main_object().unwrap();
    assert!(main.path.ends_with(" (deleted)"), "{}", main.path);
    match objects.find_symbol("nil_root", None) {
        Ok(found) => assert_eq!(found[0].runtime.as_ref().unwrap().start, victim.nil_root),
        // map_files needs CAP_SYS_ADMIN, which CI (root) has; without it
        // the deleted file is reported unreadable, never misread from its
        // old path, and this test fails saying so.
        Err(e) => panic!("reading a deleted binary needs map_files access (root): {e}"),
    }
}

#[test]
fn stripped_binaries_and_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let binary = victim_build::build(dir.path(), "victim-strip", &[]);
    let status = std::process::Command::new("strip")
        .arg("--strip-all")
        .arg(&binary)
        .status();
    assert!(
        status.as_ref().is_ok_and(|s| s.success()),
        "strip (binutils) must run: {status:?}"
    );
    let (image, table) = ObjectSource::file(&binary.to_string_lossy())
        .image_and_symbols()
        .unwrap();
    assert!(image.section(".bss").is_some(), "strip keeps section headers");
    assert_ne!(table.source, SymbolSource::Symtab);
    assert!(table.find("nil_root").is_empty());
    let script = dir.path().join("script.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let err = ObjectSource::file(&script.to_string_lossy()).image().unwrap_err();
    assert!(matches!(err, SymbolError::NotElf { .. }), "{err}");
    let err = ObjectSource::file("/nonexistent/numasleuth-binary")
        .image()
        .unwrap_err();
    assert_eq!(err.to_string(), "/nonexistent/numasleuth-binary: not found");
}
