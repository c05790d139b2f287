use super::*;

fn fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            display_width(line) <= width || !line.trim().contains(' '),
            "wider than {width}: {line:?}\n{text}"
        );
    }
}

fn words_of(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

#[test]
fn a_remedy_wraps_under_its_label_and_keeps_every_word() {
    let line = "    remedy:   bind the process to node 1 with numactl --cpunodebind=1 --membind=1 and rerun it, \
                then compare its 1.6 MiB of remote memory";
    let wrapped = TextLayout::new(60, false).wrap(line);
    fits(&wrapped, 60);
    assert_eq!(words_of(&wrapped), words_of(line));
    for continuation in wrapped.lines().skip(1) {
        assert!(continuation.starts_with(&" ".repeat(14)), "{wrapped}");
        assert!(!continuation.starts_with(&" ".repeat(15)), "{wrapped}");
    }
    // The number and its unit stay on one line.
    assert!(wrapped.lines().any(|l| l.contains("1.6 MiB")), "{wrapped}");
}

#[test]
fn a_finding_title_wraps_under_the_title_even_coloured() {
    let line = format!(
        "\x1b[33mWARNING \x1b[0m  {}  [remote-global]",
        "a global written from two nodes lives on the node that wrote it first"
    );
    let wrapped = TextLayout::new(60, true).wrap(&line);
    fits(&wrapped, 60);
    let second = wrapped.lines().nth(1).expect("wrapped");
    assert_eq!(second.len() - second.trim_start().len(), 10, "{wrapped}");
}

#[test]
fn a_plain_sentence_hangs_two_columns_in_and_a_short_line_is_untouched() {
    let layout = TextLayout::new(40, false);
    assert_eq!(layout.wrap("short\n\nlines\n"), "short\n\nlines\n");
    let wrapped = layout.wrap("Timer overhead 21 ns per read subtracted from every sample of the run.");
    assert_eq!(
        wrapped,
        "Timer overhead 21 ns per read subtracted\n  from every sample of the run."
    );
}

#[test]
fn a_token_wider_than_the_line_stands_alone() {
    let path = format!("/{}", "very-long-directory/".repeat(5));
    let wrapped = TextLayout::new(40, false).wrap(&format!("could not read {path} here"));
    fits(&wrapped, 40);
    assert!(wrapped.lines().any(|l| l.trim() == path), "{wrapped}");
}

#[test]
fn widths_below_the_floor_are_raised_and_indents_never_go_negative() {
    assert_eq!(TextLayout::new(3, false).width, MIN_WIDTH);
    assert_eq!(TextLayout::new(40, false).indented(100).width, MIN_WIDTH / 2);
    assert_eq!(display_width("a\x1b[1;31mb\x1b[0m漢"), 4);
}

#[test]
fn wrapping_never_loses_a_character() {
    let samples = [
        "numasleuth: warning: bandwidth node 0 → node 1 is noisy: p10–p90 spread 53% of the median",
        "   a  b   c    d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 0",
        "x",
        "",
        "漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字 漢字",
    ];
    for sample in samples {
        for width in [40, 41, 60, 80] {
            let wrapped = TextLayout::new(width, false).wrap(sample);
            fits(&wrapped, width);
            assert_eq!(words_of(&wrapped), words_of(sample), "{sample:?} at {width}");
        }
    }
}

#[test]
fn a_short_parenthesis_stays_on_one_line() {
    let line = "vm (Linux 6.18.44-fc-v595), live system, 2026-11-26 14:10:38 UTC; numasleuth 0.1.0 (git e834076d5119)";
    let wrapped = TextLayout::new(90, false).wrap(line);
    assert!(wrapped.lines().any(|l| l.contains("(git e834076d5119)")), "{wrapped}");
    // A long one still breaks.
    let long = format!("a ({}) b", "word ".repeat(20).trim_end());
    let wrapped = TextLayout::new(40, false).wrap(&long);
    fits(&wrapped, 40);
}

/// Issue 36: at 60 columns a remedy's command was broken inside its
/// backticks, so it could not be pasted.
#[test]
fn a_code_span_is_never_broken() {
    let line = "    remedy:   run `numactl --cpunodebind=1 --membind=1 ./server --port 8080` and compare";
    let wrapped = TextLayout::new(60, false).wrap(line);
    assert_eq!(words_of(&wrapped), words_of(line));
    let code = "`numactl --cpunodebind=1 --membind=1 ./server --port 8080`";
    assert!(wrapped.lines().any(|l| l.trim() == code), "{wrapped}");
    // A short span moves to the next line whole; the rest still wraps.
    let wrapped = TextLayout::new(40, false).wrap("then compare the two runs with `numasleuth runs -n 8` again");
    assert!(
        wrapped.lines().any(|l| l.contains("`numasleuth runs -n 8`")),
        "{wrapped}"
    );
    fits(&wrapped, 40);
}

/// `wrap_line` skips measuring a line no longer in bytes than the width:
/// sound only while no character is shown wider than its UTF-8 length.
#[test]
fn no_character_is_wider_than_its_bytes() {
    for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
        assert!(c.width().unwrap_or(0) <= c.len_utf8(), "{c:?}");
    }
    let wide = "表示幅表示幅表示幅";
    assert_eq!((display_width(wide), wide.len()), (18, 27));
}
