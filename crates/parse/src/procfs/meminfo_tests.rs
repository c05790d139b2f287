use super::*;
use proptest::prelude::*;

// From this project's development VM (Linux 6.18, 1 node, 24 GiB).
const NODE: &str = "Node 0 MemTotal:       24630920 kB\nNode 0 MemFree:        23641048 kB\n\
Node 0 HugePages_Total:     0\nNode 0 HugePages_Free:      0\n";

#[test]
fn node_meminfo_in_bytes() {
    let info = parse(NODE).unwrap();
    assert_eq!(info.total_bytes(), Some(24630920 * 1024));
    assert_eq!(info.free_bytes(), Some(23641048 * 1024));
    assert_eq!(info.get("HugePages_Total"), Some(0));
}

#[test]
fn proc_meminfo_without_prefix() {
    let info = parse("MemTotal:       24630920 kB\nHugepagesize:       2048 kB\nHugePages_Total: 4\n").unwrap();
    assert_eq!(info.hugetlb_bytes(), Some(4 * 2048 * 1024));
}

#[test]
fn truncated_line_is_an_error() {
    assert!(parse("Node 0 MemTotal:").is_err());
    assert!(parse("").is_err());
    assert!(parse("MemTotal 12 kB").is_err());
}

/// The parser as it was before the byte path: every line through `lines`
/// and the general reader (`entry`, the old per-line code, unchanged), into
/// the one map `collect` makes. The new one must give the same answer,
/// error text included, on every input.
fn oracle(text: &str) -> Result<Meminfo, ParseError> {
    collect(text.lines().enumerate().map(|(index, line)| entry(index, line)))
}

#[test]
fn the_kernels_lines_take_the_plain_path() {
    for line in [
        "Node 0 MemTotal:       24630920 kB",
        "Node 12 HugePages_Total:     0",
        "Active(file):    1203948 kB",
        "  DirectMap1G:           0 kB  ",
    ] {
        assert!(matches!(plain_entry(line), Plain::Entry(..)), "{line}");
    }
    for line in [
        "MemTotal: +5 kB",
        "MemTotal: 5 MB",
        "MemTotal:",
        "MemTotal 5",
        "Mem\u{a0}Total: 5",
    ] {
        assert!(matches!(plain_entry(line), Plain::Unsure), "{line}");
    }
}

#[test]
fn same_answers_as_before_on_edge_lines() {
    for text in [
        "MemTotal: 18446744073709551615\n",
        "MemTotal: 18446744073709551616\n",
        "MemTotal: 18446744073709551615 kB\n",
        "MemTotal: +12 kB\n",
        "MemTotal: 12kB\n",
        "MemTotal: 12 kB trailing words\n",
        "MemTotal:\x0b12\x0ckB\r\n",
        "Node  MemTotal: 1\n",
        "Node x MemTotal: 1\n",
        "Node 0\u{a0}MemTotal: 1\n",
        "Node 0\x0bMemTotal:\u{2003}7 kB\n",
        "Node 0\n",
        "Node 0 \n",
        "a:1\n\n\r\nb:2\rc:3\n",
        ": 4\n",
        "K\u{e9}y: 4 kB\n",
        "x: 1 kB\nx: 2\n",
        "\r",
        "\x0bMemTotal: 5\n",
        "MemTotal\x0b: 5\x0b\n",
        "Node 0\x0bMemTotal: 5 kB\n",
    ] {
        assert_eq!(parse(text), oracle(text), "{text:?}");
    }
}

#[test]
fn the_key_cap_holds() {
    let lines = |n: usize| (0..n).map(|i| format!("Key{i}: {i} kB\n")).collect::<String>();
    assert_eq!(
        parse(&lines(crate::read::MAX_KEYS)).unwrap().values.len(),
        crate::read::MAX_KEYS
    );
    let over = lines(crate::read::MAX_KEYS + 1);
    assert_eq!(parse(&over), Err(crate::read::too_many_keys()));
    assert_eq!(parse(&over), oracle(&over));
    // Past the cap, a malformed line later on is not the error.
    let then_bad = format!("{over}no colon here\n");
    assert_eq!(parse(&then_bad), Err(crate::read::too_many_keys()));
    // Repeats of a few keys are folded, whatever their number, and the
    // last value of each is kept.
    let repeats: String = (0..3 * crate::read::MAX_KEYS)
        .map(|i| format!("K{}: {i}\n", i % 7))
        .collect();
    assert_eq!(parse(&repeats), oracle(&repeats));
    let last_k0 = (0..3 * crate::read::MAX_KEYS as u64).rev().find(|i| i % 7 == 0);
    assert_eq!(parse(&repeats).unwrap().get("K0"), last_k0);
    let late = format!("{}{}", lines(crate::read::MAX_KEYS - 1), repeats);
    assert_eq!(parse(&late), oracle(&late));
}

/// Lines near the kernel's: a prefix or not, spaces of every kind, signs,
/// numbers at the edge of u64, units and words after them.
fn near_kernel_line() -> impl Strategy<Value = String> {
    let space = prop_oneof![
        Just(" "),
        Just("  "),
        Just("\t"),
        Just("\x0b"),
        Just("\x0c"),
        Just("\r"),
        Just("\u{a0}"),
        Just("\u{2003}"),
        Just(""),
    ];
    let prefix = prop_oneof![
        Just(""),
        Just("Node 0 "),
        Just("Node 17  "),
        Just("Node "),
        Just("Node x "),
        Just("Node 1\u{a0}")
    ];
    let key = "[A-Za-z_()]{0,12}|Mem\u{e9}|";
    // Mostly well-formed, so a text's one odd line decides its answer
    // instead of an error in another line hiding it.
    let number = prop_oneof![
        12 => "[0-9]{1,12}",
        1 => Just("18446744073709551615".to_string()),
        1 => Just("18446744073709551616".to_string()),
        1 => Just("18014398509481984".to_string()),
        1 => "[+-][0-9]{1,3}",
        1 => Just(String::new()),
        1 => "[0-9]{1,3}[a-z]",
    ];
    let unit = prop_oneof![
        4 => Just(""),
        4 => Just("kB"),
        1 => Just("MB"),
        1 => Just("kB x"),
        1 => Just("kb"),
        1 => Just("kB\u{a0}"),
    ];
    (
        space.clone(),
        prefix,
        key,
        prop::bool::weighted(0.9),
        space.clone(),
        number,
        space.clone(),
        unit,
        space,
    )
        .prop_map(|(lead, prefix, key, colon, before, number, between, unit, end)| {
            let colon = if colon { ":" } else { "" };
            format!("{lead}{prefix}{key}{colon}{before}{number}{between}{unit}{end}")
        })
}

proptest! {
    #[test]
    fn never_panics(text in "(Node [0-9] )?[A-Za-z_]{0,8}:? {0,3}[0-9]{0,25} ?(kB|MB)?\n?") {
        let _ = parse(&text);
    }

    #[test]
    fn same_as_before_on_any_text(text in "(?s).{0,80}|\\PC{0,80}|[ -~\t\n\r\x0b\x0c]{0,80}") {
        prop_assert_eq!(parse(&text), oracle(&text));
    }

    #[test]
    fn same_as_before_on_near_kernel_text(lines in prop::collection::vec(near_kernel_line(), 0..8), crlf in prop::bool::ANY) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        prop_assert_eq!(parse(&text), oracle(&text));
        let ended = format!("{text}\n");
        prop_assert_eq!(parse(&ended), oracle(&ended));
    }
}
