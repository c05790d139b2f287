use super::*;

fn rows(cells: &[&[&str]]) -> Vec<Vec<String>> {
    cells
        .iter()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect()
}

fn max_width(text: &str) -> usize {
    text.lines().map(display_width).max().unwrap_or(0)
}

#[test]
fn aligned_columns_when_the_table_fits() {
    let table = columns(
        &rows(&[&["a", "bbb", "c"], &["dddd", "e", "f"]]),
        &TextLayout::default(),
    );
    assert_eq!(table, "a     bbb  c\ndddd  e    f\n");
}

#[test]
fn a_path_column_gives_way_first_and_keeps_the_file_name() {
    let table_rows = rows(&[
        &["mapping", "size", "on"],
        &["/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "1.6 MiB", "node 0"],
        &["[heap]", "132 KiB", "node 1"],
    ]);
    let text = table(&table_rows, &[Col::Path], &TextLayout::new(40, false));
    assert!(max_width(&text) <= 40, "{text}");
    assert_eq!(text.lines().count(), 3, "one line per row: {text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("…/libpython3.11.so.1.0 ") && l.contains(" 1.6 MiB ")),
        "{text}"
    );
    assert!(text.contains("[heap]"), "{text}");
}

#[test]
fn shortened_paths_and_names() {
    let path = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
    assert_eq!(shorten_path(path, 100), path);
    assert_eq!(shorten_path(path, 23), "…/libpython3.11.so.1.0");
    assert_eq!(shorten_path(path, 40), "…/x86_64-linux-gnu/libpython3.11.so.1.0");
    assert_eq!(shorten_path(path, 10), "…/libpyth…");
    assert_eq!(shorten_path("no-slash-at-all", 8), "no-slas…");
    assert_eq!(shorten_end("std::vector<int>::push_back", 12), "std::vector…");
    for width in 0..50 {
        assert!(display_width(&shorten_path(path, width)) <= width, "{width}");
        assert!(display_width(&shorten_end(path, width)) <= width, "{width}");
    }
}

#[test]
fn a_number_and_its_unit_never_part() {
    let table_rows = rows(&[
        &["what", "size"],
        &[
            "writable static data of the program and its libraries",
            "1.6 MiB of 3 pages",
        ],
    ]);
    for width in [40, 45, 50, 60] {
        let text = columns(&table_rows, &TextLayout::new(width, false));
        assert!(max_width(&text) <= width, "{width}: {text}");
        assert!(text.contains("1.6 MiB"), "{width}: {text}");
        assert!(!text.lines().any(|l| l.trim_end().ends_with("1.6")), "{width}: {text}");
    }
}

#[test]
fn a_labelled_number_keeps_its_unit() {
    let table_rows = rows(&[
        &["range", "resident", "accuracy"],
        &["0x7ffc9c7d7000-0x7ffc9c7f8000", "N0=8 KiB N1=4 KiB", "per mapping"],
    ]);
    for width in [40, 45, 50, 60] {
        let text = columns(&table_rows, &TextLayout::new(width, false));
        assert!(text.contains("N1=4 KiB"), "{width}: {text}");
        assert!(!text.lines().any(|l| l.trim_end().ends_with("N1=4")), "{width}: {text}");
    }
}

#[test]
fn a_wide_matrix_is_dealt_into_blocks_that_repeat_the_row_label() {
    let mut header = vec!["CPU".to_string()];
    header.extend((0..16).map(|c| format!("cpu{c}")));
    let mut table_rows = vec![header];
    for r in 0..4 {
        let mut row = vec![format!("cpu{r}")];
        row.extend((0..16).map(|c| format!("{r}.{c:02}")));
        table_rows.push(row);
    }
    let text = columns(&table_rows, &TextLayout::new(60, false));
    assert!(max_width(&text) <= 60, "{text}");
    let blocks: Vec<&str> = text.split("\n\n").collect();
    assert!(blocks.len() >= 2, "{text}");
    for block in &blocks {
        assert!(block.starts_with("CPU"), "{block}");
    }
    // Every cell is still there.
    for c in 0..16 {
        assert!(
            text.contains(&format!("cpu{c} ")) || text.contains(&format!("cpu{c}\n")),
            "cpu{c}: {text}"
        );
    }
    assert_eq!(text.matches("3.15").count(), 1, "{text}");
}

#[test]
fn wrapping_a_cell_keeps_every_character() {
    for cell in [
        "31.1M (30.2M–32.0M)",
        "0000:00:1f.6",
        "",
        "a  b",
        &"x".repeat(30),
        "1.6 MiB",
    ] {
        for width in 1..12 {
            let lines = wrap_cell(cell, width);
            let without_spaces = |s: &str| s.chars().filter(|c| *c != ' ').collect::<String>();
            assert_eq!(
                without_spaces(&lines.concat()),
                without_spaces(cell),
                "{cell:?} at {width}"
            );
            assert!(
                lines.iter().all(|l| display_width(l) <= width.max(1)),
                "{cell:?} at {width}: {lines:?}"
            );
        }
    }
}

#[test]
fn a_ragged_table_and_an_empty_one() {
    let text = columns(&rows(&[&["a", "b", "c"], &["long cell"]]), &TextLayout::default());
    assert_eq!(text, "a          b  c\nlong cell\n");
    assert_eq!(columns(&[], &TextLayout::default()), "");
}

#[test]
fn a_long_list_breaks_after_its_commas() {
    let list = (0..40).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    let table_rows = rows(&[&["tid", "cpus"], &["4242", &list]]);
    let text = columns(&table_rows, &TextLayout::new(40, false));
    assert!(max_width(&text) <= 40, "{text}");
    let joined: String = text
        .lines()
        .skip(1)
        .map(|l| l.trim_start_matches("4242").trim())
        .collect();
    assert_eq!(joined, list);
}

/// Issue 36: the lab's false-sharing table split at 60 columns repeated
/// only `op` in its second block, so packed and padded rows, and their
/// thread counts, could not be told apart there.
#[test]
fn every_block_repeats_every_key_column() {
    let mut table_rows = rows(&[&[
        "op",
        "layout",
        "placement",
        "threads",
        "CPUs",
        "ops/s total (p10–p90)",
        "ops/s per thread",
        "ms per 10M ops/thread",
        "slowdown vs 1 thread",
        "vs padded",
        "CPU share",
    ]]);
    for layout in ["packed", "padded"] {
        for threads in ["1", "2", "4"] {
            table_rows.push(
                [
                    "add",
                    layout,
                    "compact",
                    threads,
                    "0-3",
                    "12.3M (12.1M–12.5M)",
                    "3.1M",
                    "812.4",
                    "1.00×",
                    "4.10×",
                    "98%",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            );
        }
    }
    let text = columns(&table_rows, &TextLayout::new(60, false));
    assert!(max_width(&text) <= 60, "{text}");
    let blocks: Vec<&str> = text.split("\n\n").collect();
    assert!(blocks.len() >= 2, "{text}");
    for block in &blocks {
        let lines: Vec<&str> = block.lines().collect();
        let head: Vec<&str> = lines[0].split_whitespace().take(4).collect();
        assert_eq!(head, ["op", "layout", "placement", "threads"], "{block}");
        // Every data row of every block names its layout and thread count.
        let keys: Vec<Vec<&str>> = lines[1..]
            .iter()
            .filter(|line| line.starts_with("add"))
            .map(|line| line.split_whitespace().take(4).collect())
            .collect();
        assert_eq!(keys.len(), 6, "{block}");
        assert_eq!(keys[0], ["add", "packed", "compact", "1"], "{block}");
        assert_eq!(keys[5], ["add", "padded", "compact", "4"], "{block}");
    }
}

#[test]
fn a_matrix_keeps_one_key_column() {
    let mut header = vec!["node".to_string()];
    header.extend((0..12).map(|c| format!("n{c}")));
    let mut table_rows = vec![header];
    for r in 0..3 {
        let mut row = vec![format!("{r}")];
        // Equal values in the first columns must not make them keys.
        row.extend((0..12).map(|c| {
            if c < 3 {
                "100 ns".to_string()
            } else {
                format!("{r}{c} ns")
            }
        }));
        table_rows.push(row);
    }
    let text = columns(&table_rows, &TextLayout::new(40, false));
    for block in text.split("\n\n").skip(1) {
        assert!(block.starts_with("node  n"), "{block}");
    }
}
