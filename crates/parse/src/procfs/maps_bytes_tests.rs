use super::*;
use proptest::prelude::*;

/// The `&str` parser's answer for the same bytes, as the stream gave it
/// before: the whole line converted lossily.
fn oracle(line: &[u8]) -> Result<Mapping, ParseError> {
    parse_line(&String::from_utf8_lossy(line))
}

fn parsed_over(line: &[u8], previous: &Mapping) -> Result<Mapping, ParseError> {
    let mut out = previous.clone();
    parse_line_into(line, &mut out).map(|()| out)
}

#[test]
fn the_kernels_lines_take_the_fast_path() {
    let line = b"7f0c1e2d3000-7f0c1e2d5000 rw-p 0001f000 fd:01 1835 /usr/lib/x86_64-linux-gnu/libc.so.6";
    let mut out = Mapping::default();
    assert_eq!(fast(line, &mut out), Some(()));
    assert_eq!(out, oracle(line).unwrap());
    for line in [
        &b"55d1c0a00000-55d1c0a21000 rw-p 00000000 00:00 0                          [heap]"[..],
        b"7ffd5e3b4000-7ffd5e3d5000 rw-p 00000000 00:00 0",
        b"7f0c1e000000-7f0c1e021000 rw-s 00000000 00:05 4 /memfd:x (deleted)",
    ] {
        let mut out = Mapping::default();
        assert_eq!(fast(line, &mut out), Some(()), "{}", String::from_utf8_lossy(line));
        assert_eq!(out, oracle(line).unwrap());
    }
}

#[test]
fn unusual_spellings_go_to_the_str_parser() {
    // `+` is taken by from_str_radix; nine-digit devices by leading zeros.
    for line in [&b"+1000-2000 r--p 0 0:0 0"[..], b"1000-2000 r--p 0 000000001:0 +7 /x"] {
        let mut out = Mapping::default();
        assert_eq!(fast(line, &mut out), None);
        assert_eq!(parsed_over(line, &Mapping::default()), oracle(line));
    }
    // Only the path is converted, lossily, as its whole line was.
    let mut out = Mapping::default();
    parse_line_into(b"1000-2000 r--p 0 0:0 0 /bad\xffname", &mut out).unwrap();
    assert_eq!(out.backing.path(), Some("/bad\u{fffd}name"));
}

#[test]
fn errors_are_the_str_parsers_errors() {
    for line in [
        &b"1000-2000 r--p 0 fd:01"[..],
        b"2000-1000 r--p 0 0:0 0",
        b"zz-1 r--p 0 0:0 0",
        b"",
    ] {
        let error = parse_line_into(line, &mut Mapping::default()).unwrap_err();
        assert_eq!(Err(error), oracle(line));
    }
}

#[test]
fn a_held_path_is_reused_and_a_new_one_replaces_it() {
    let mut out = Mapping::default();
    parse_line_into(b"1000-2000 r--p 0 fd:01 7 /lib/a.so", &mut out).unwrap();
    let held = out.backing.path().unwrap().as_ptr();
    parse_line_into(b"2000-3000 rw-p 1000 fd:01 7 /lib/a.so (deleted)", &mut out).unwrap();
    assert_eq!(out.backing.path().unwrap().as_ptr(), held, "same path, same buffer");
    assert_eq!(out, oracle(b"2000-3000 rw-p 1000 fd:01 7 /lib/a.so (deleted)").unwrap());
    parse_line_into(b"3000-4000 rw-p 0 0:0 0", &mut out).unwrap();
    assert_eq!(out.backing, Backing::Anonymous);
}

/// Lines near the kernel's format: each field drawn from valid spellings and
/// the ones the fast path hands on (signs, long numbers, tabs, odd bytes).
fn line() -> impl Strategy<Value = Vec<u8>> {
    let number = prop_oneof!["[0-9a-f]{1,16}", "[0-9a-fA-F+]{0,18}", Just("0".to_string())];
    let perms = prop_oneof!["[r-][w-][x-][ps]", "[rwxps\\- ]{0,5}"];
    let dev = prop_oneof!["[0-9a-f]{1,3}:[0-9a-f]{1,3}", "[0-9a-f:+]{0,11}"];
    let inode = prop_oneof!["[0-9]{1,20}", Just("0".to_string()), "[0-9+]{0,4}"];
    let path = prop_oneof![
        Just(Vec::new()),
        "\\[[a-z:]{0,8}\\]".prop_map(String::into_bytes),
        "/[ -~]{0,20}( \\(deleted\\))?".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..12),
    ];
    let gap = prop_oneof![Just(" ".to_string()), " {0,3}", "[ \t]{0,2}"];
    (
        number.clone(),
        number.clone(),
        perms,
        number,
        dev,
        inode,
        path,
        gap,
        "\n{0,2}",
    )
        .prop_map(|(start, end, perms, offset, dev, inode, path, gap, newlines)| {
            let mut line = format!("{start}-{end}{gap}{perms} {offset} {dev} {inode}{gap}").into_bytes();
            line.extend_from_slice(&path);
            line.extend_from_slice(newlines.as_bytes());
            line
        })
}

proptest! {
    /// Whatever the line and whatever the slot held before, the answer is
    /// the `&str` parser's.
    #[test]
    fn agrees_with_the_str_parser(first in line(), second in line()) {
        let previous = parsed_over(&first, &Mapping::default()).unwrap_or_default();
        prop_assert_eq!(parsed_over(&second, &previous), oracle(&second));
    }

    #[test]
    fn agrees_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        prop_assert_eq!(parsed_over(&bytes, &Mapping::default()), oracle(&bytes));
    }
}
