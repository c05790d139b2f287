//! For any archive, accepted or not: nothing is written outside the
//! temporary directory, what is unpacked is only files, directories and
//! links, and nothing is left once the root is dropped.
//!
//! Archives are random mixes of plain, long (GNU `L`/`K`) and pax-named
//! entries whose paths and link targets include `..`, `.`, empty parts,
//! absolute paths and links into a sentinel directory next to the unpack
//! directory, followed by entries that try to write through those links.

use std::fs;
use std::path::Path;

use proptest::prelude::*;

use crate::scratch_tests::Scratch;
use crate::test_archive::TarBuilder;

const SENTINEL: &str = "@SENTINEL@";

#[derive(Debug, Clone)]
enum Op {
    File(String),
    Dir(String),
    Link(String, String),
    PaxFile(String),
    /// A link, then a file written at it or below it.
    Through(String, String, Option<String>),
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => prop::sample::select(vec!["sys", "proc", "a", "b", "node0"]).prop_map(String::from),
        1 => Just("..".to_string()),
        1 => Just(".".to_string()),
        1 => Just(String::new()),
        1 => Just(SENTINEL.to_string()),
        1 => Just("l".repeat(120)),
    ]
}

fn path() -> impl Strategy<Value = String> {
    (prop::bool::weighted(0.1), prop::collection::vec(component(), 1..5)).prop_map(|(absolute, parts)| {
        let joined = parts.join("/");
        if absolute {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

fn target() -> impl Strategy<Value = String> {
    prop_oneof![
        path(),
        Just(SENTINEL.to_string()),
        Just("../../sentinel".to_string()),
        Just("../../../sentinel".to_string()),
        Just("../../../../sentinel".to_string()),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => path().prop_map(Op::File),
        2 => path().prop_map(Op::Dir),
        3 => (path(), target()).prop_map(|(p, t)| Op::Link(p, t)),
        1 => path().prop_map(Op::PaxFile),
        3 => (path(), target(), prop::option::of(path())).prop_map(|(p, t, sub)| Op::Through(p, t, sub)),
    ]
}

/// Every path under `dir`, links not followed, must be a file, directory
/// or link.
fn only_plain_kinds(dir: &Path) -> Result<(), TestCaseError> {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        prop_assert!(
            kind.is_file() || kind.is_dir() || kind.is_symlink(),
            "{:?}",
            entry.path()
        );
        if kind.is_dir() {
            only_plain_kinds(&entry.path())?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn nothing_escapes_and_nothing_is_left(ops in prop::collection::vec(op(), 0..12)) {
        let s = Scratch::new();
        let sentinel = s.path("sentinel").display().to_string();
        let fill = |text: &str| text.replace(SENTINEL, &sentinel);
        let mut tar = TarBuilder::new();
        tar.machine();
        for op in &ops {
            match op {
                Op::File(p) => tar.file(&fill(p), b"x\n"),
                Op::Dir(p) => tar.dir(&fill(p)),
                Op::Link(p, t) => tar.symlink(&fill(p), &fill(t)),
                Op::PaxFile(p) => tar.pax(&[("path", fill(p).as_bytes())]).file("placeholder", b"y\n"),
                Op::Through(p, t, sub) => {
                    let at = match sub {
                        Some(sub) => format!("{}/{}", fill(p), fill(sub)),
                        None => fill(p),
                    };
                    tar.symlink(&fill(p), &fill(t)).file(&at, b"z\n")
                }
            };
        }
        match s.open(&tar.gz()) {
            Ok(root) => {
                only_plain_kinds(root.path())?;
                drop(root);
            }
            Err(err) => prop_assert!(!err.to_string().contains("numasleuth-root-"), "{err}"),
        }
        prop_assert_eq!(fs::read_dir(s.path("sentinel")).unwrap().count(), 0, "wrote outside");
        prop_assert_eq!(fs::read_dir(s.path("unpack")).unwrap().count(), 0, "left a temp dir");
        let mut names: Vec<_> = fs::read_dir(s.path("")).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        prop_assert_eq!(names, ["sentinel", "snap.tar.gz", "unpack"]);
    }
}
