use super::*;
use proptest::prelude::*;

/// The `&str` parser's answer for the same bytes, as the stream gave it
/// before: the whole line converted lossily.
fn oracle(line: &[u8]) -> Result<NumaMapsEntry, ParseError> {
    super::super::parse_line(&String::from_utf8_lossy(line))
}

fn parsed_over(line: &[u8], previous: &NumaMapsEntry) -> Result<NumaMapsEntry, ParseError> {
    let mut out = previous.clone();
    parse_bytes_into(line, &mut out).map(|()| out)
}

/// Lines of `cat /proc/PID/numa_maps` on the development VM (kernel 6.18,
/// one node; the same capture as numa_maps.rs's tests) and
/// `numactl --membind=0 cat /proc/self/numa_maps`.
const KERNEL_LINES: [&str; 6] = [
    "5562752e0000 default file=/root/.pyenv/versions/3.11.7/bin/python3.11 mapped=1 N0=1 kernelpagesize_kB=4",
    "55628edb6000 default heap anon=396 dirty=396 active=0 N0=396 kernelpagesize_kB=4",
    "7f68a4021000 default",
    "7f68b320b000 default file=/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache mapped=7 mapmax=6 N0=7 kernelpagesize_kB=4",
    "7ffc9c7d7000 default stack anon=15 dirty=15 active=1 N0=15 kernelpagesize_kB=4",
    "560bd1856000 bind:0 file=/usr/bin/cat mapped=2 N0=2 kernelpagesize_kB=4",
];

#[test]
fn the_kernels_lines_take_the_fast_path() {
    let mut entry = NumaMapsEntry::default();
    for line in KERNEL_LINES {
        assert_eq!(fast(line.as_bytes(), &mut entry), Some(()), "{line}");
        assert_eq!(entry, oracle(line.as_bytes()).unwrap(), "{line}");
    }
}

#[test]
fn the_kernels_default_policy_lines_take_the_kernel_order_path() {
    for line in KERNEL_LINES.iter().filter(|line| line.contains(" default")) {
        let mut entry = NumaMapsEntry::default();
        assert_eq!(
            super::super::kernel::parse(line.as_bytes(), &mut entry),
            Some(()),
            "{line}"
        );
        assert_eq!(entry, oracle(line.as_bytes()).unwrap(), "{line}");
    }
    // Each left to the general parsers, which agree with the oracle.
    for line in [
        &b"1000 default anon=1 "[..],
        b"1000 default  anon=1",
        b"1000 default anon=1\tN0=1",
        b"1000 default heapx",
        b"1000 default N0x=1",
        b"1000 default swapcachX=1",
        b"1000 bind:0 anon=1",
        // The `&str` parser trims a vertical tab off the end, which the
        // word split keeps inside a path (a CI run's proptest found it).
        b"1000 default file=\x0b",
        b"1000 default file=/a\x0b",
        b"1000 default file=/a\x0c",
    ] {
        assert_eq!(super::super::kernel::parse(line, &mut NumaMapsEntry::default()), None);
        assert_eq!(parsed_over(line, &NumaMapsEntry::default()), oracle(line));
    }
}

#[test]
fn unusual_spellings_go_to_the_str_parser() {
    for line in [
        &b"1000 default anon=+3 N0=3"[..],
        b"1000 default N99999999999=1",
        b"1000 default file=/caf\xc3\xa9 N0=1",
        b"1000 default anon=3\xc2\xa0",
    ] {
        assert_eq!(
            fast(line, &mut NumaMapsEntry::default()).filter(|()| line.is_ascii()),
            None
        );
        assert_eq!(parsed_over(line, &NumaMapsEntry::default()), oracle(line));
    }
}

#[test]
fn keys_that_share_a_known_keys_first_bytes_are_unknown_words() {
    let line = b"1000 default swapcachX=1 writebacK=2 swapcache=3 anonx=1 kernelpagesize_kX=4 fil=1 file N0=1 \
                 kernelpagesize_kB=4";
    let mut entry = NumaMapsEntry::default();
    assert_eq!(fast(line, &mut entry), Some(()));
    assert_eq!(entry, oracle(line).unwrap());
    assert_eq!(entry.unknown.len(), 6, "{:?}", entry.unknown);
}

#[test]
fn errors_are_the_str_parsers_errors() {
    for line in [
        &b"xyz default"[..],
        b"1000 default anon=",
        b"1000 default N5000=1",
        b"1000 :0",
    ] {
        let error = parse_bytes_into(line, &mut NumaMapsEntry::default()).unwrap_err();
        assert_eq!(Err(error), oracle(line));
    }
}

#[test]
fn a_held_path_is_reused_and_a_line_without_one_drops_it() {
    let mut entry = NumaMapsEntry::default();
    parse_bytes_into(b"1000 default file=/lib/a.so N0=1", &mut entry).unwrap();
    let held = entry.file.as_ref().unwrap().as_ptr();
    parse_bytes_into(b"2000 default file=/lib/a.so anon=1 N0=1", &mut entry).unwrap();
    assert_eq!(entry.file.as_ref().unwrap().as_ptr(), held, "same path, same buffer");
    parse_bytes_into(b"3000 default anon=1", &mut entry).unwrap();
    assert_eq!(entry, oracle(b"3000 default anon=1").unwrap());
}

/// Lines near the kernel's format: policies with and without spaces, every
/// key, escaped paths, and what the fast path hands on (signs, huge node
/// ids, odd blanks, bytes past ASCII).
fn line() -> impl Strategy<Value = Vec<u8>> {
    let start = prop_oneof!["[0-9a-f]{1,16}", "[0-9a-fA-F+ ]{0,18}"];
    let policy = prop_oneof![
        Just("default".to_string()),
        "(default|local|bind|prefer|interleave|prefer \\(many\\)|weighted interleave)(=static)?(:[0-9,\\-]{1,5})?",
        "[a-z=:|\\- ]{0,10}",
    ];
    let word = prop_oneof![
        "(anon|dirty|mapped|mapmax|swapcache|active|writeback|kernelpagesize_kB)=[0-9]{1,20}",
        "N[0-9]{1,5}=[0-9]{1,4}",
        "(heap|stack|huge|file)",
        "file=[ -~&&[^ ]]{0,12}",
        "file=/a\\\\[0-7]{3}b",
        "[a-zN]{1,6}=?[0-9+]{0,3}",
    ];
    let blank = prop_oneof![Just(" ".to_string()), "[ \t\u{b}\u{c}\r]{1,2}"];
    let words = proptest::collection::vec((blank, word), 0..7);
    let tail = prop_oneof![
        Just(Vec::new()),
        "[ \t\u{b}\u{c}\r\n]{1,3}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..4),
        Just(b"\xc2\xa0".to_vec()),
    ];
    (start, policy, words, tail).prop_map(|(start, policy, words, tail)| {
        let mut line = format!("{start} {policy}").into_bytes();
        for (blank, word) in words {
            line.extend_from_slice(blank.as_bytes());
            line.extend_from_slice(word.as_bytes());
        }
        line.extend_from_slice(&tail);
        line
    })
}

/// Lines as `show_numa_map` writes them (the kernel-order path's own),
/// with counts up to 20 digits (past u64) and node ids past the cap.
fn kernel_line() -> impl Strategy<Value = Vec<u8>> {
    let word = prop_oneof![
        "(anon|dirty|mapped|mapmax|swapcache|active|writeback|kernelpagesize_kB)=[0-9]{1,20}",
        "N[0-9]{1,6}=[0-9]{1,20}",
        "(heap|stack|huge)",
        "file=[!-~]{0,12}",
    ];
    ("[0-9a-f]{1,16}", proptest::collection::vec(word, 0..8)).prop_map(|(start, words)| {
        let mut line = format!("{start} default");
        for word in words {
            line.push(' ');
            line.push_str(&word);
        }
        line.into_bytes()
    })
}

proptest! {
    #[test]
    fn kernel_lines_agree_with_the_str_parser(first in kernel_line(), second in kernel_line()) {
        let previous = parsed_over(&first, &NumaMapsEntry::default()).unwrap_or_default();
        prop_assert_eq!(parsed_over(&second, &previous), oracle(&second));
    }

    /// Whatever the line and whatever the entry held before, the answer is
    /// the `&str` parser's.
    #[test]
    fn agrees_with_the_str_parser(first in line(), second in line()) {
        let previous = parsed_over(&first, &NumaMapsEntry::default()).unwrap_or_default();
        prop_assert_eq!(parsed_over(&second, &previous), oracle(&second));
    }

    #[test]
    fn agrees_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        prop_assert_eq!(parsed_over(&bytes, &NumaMapsEntry::default()), oracle(&bytes));
    }
}
