//! Reader tests over synthetic /proc trees: vanishing threads and
//! processes, the maps/numa_maps join, kernels without numa_maps.

use super::*;

const STAT: &str =
    "4242 (victim) S 1 4242 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 2 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
const STATUS: &str = "Name:\tvictim\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t0-1\n";

fn process_files() -> Vec<(&'static str, String)> {
    vec![
        ("proc/4242/stat", STAT.to_string()),
        ("proc/4242/task/4242/stat", STAT.to_string()),
        ("proc/4242/task/4242/status", STATUS.to_string()),
        (
            "proc/4242/task/4243/stat",
            STAT.replace("4242 (victim)", "4243 (victim)")
                .replace(" 17 1 0 0", " -1 3 0 0"),
        ),
        ("proc/4242/task/4243/status", STATUS.to_string()),
    ]
}

fn with(files: &[(&'static str, String)]) -> (tempfile::TempDir, Root) {
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    crate::test_support::temp_tree(&borrowed)
}

#[test]
fn threads_with_their_cpus() {
    let (_dir, root) = with(&process_files());
    let threads = read_threads(&root, 4242).unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0].stat.processor, Some(1));
    assert_eq!(threads[1].stat.processor, Some(3));
    assert_eq!(threads[1].allowed_cpus.as_ref().unwrap().to_string(), "0-3");
    assert!(threads[0].sched.is_none());
}

#[test]
fn a_thread_that_vanished_is_skipped() {
    let mut files = process_files();
    files.retain(|(p, _)| *p != "proc/4242/task/4243/status");
    let (_dir, root) = with(&files);
    assert_eq!(read_threads(&root, 4242).unwrap().len(), 1);
    let mut files = process_files();
    files.retain(|(p, _)| *p != "proc/4242/task/4243/stat");
    let (_dir, root) = with(&files);
    assert_eq!(read_threads(&root, 4242).unwrap().len(), 1);
}

#[test]
fn a_process_that_vanished_mid_read_is_a_clear_error() {
    // The task directory lists threads whose files are gone, and the
    // process's own stat is gone too: it exited after we started.
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/4242/task/4242/comm", "victim\n")]);
    let err = read_threads(&root, 4242).unwrap_err();
    assert_eq!(err, ProcessError::Exited { pid: 4242 });
    assert_eq!(err.to_string(), "process 4242 exited while being inspected");
    let err = for_each_vma(&root, 4242, |_| {}).unwrap_err();
    assert_eq!(err, ProcessError::Exited { pid: 4242 });
}

#[test]
fn no_such_process() {
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/1/stat", STAT)]);
    let err = read_process_stat(&root, 99999).unwrap_err();
    assert!(matches!(err, ProcessError::NoSuchProcess { pid: 99999, .. }));
    assert!(err.to_string().starts_with("no such process: 99999"), "{err}");
}

#[test]
fn maps_joined_with_numa_maps_by_start() {
    let mut files = process_files();
    files.push((
        "proc/4242/maps",
        "\
555555554000-555555555000 r--p 00000000 fe:00 12 /opt/victim
555555558000-555555559000 rw-p 00003000 fe:00 12 /opt/victim
555555559000-55555557a000 rw-p 00000000 00:00 0 [heap]
7ffff7ff0000-7ffff7ff1000 rw-p 00000000 00:00 0
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]
"
        .into(),
    ));
    files.push((
        "proc/4242/numa_maps",
        "\
555555554000 default file=/opt/victim mapped=1 N0=1 kernelpagesize_kB=4
555555556000 default anon=1 N1=1 kernelpagesize_kB=4
555555558000 default file=/opt/victim anon=1 dirty=1 N1=1 kernelpagesize_kB=4
555555559000 default heap anon=3 dirty=3 N0=2 N1=1 kernelpagesize_kB=4
7ffff7ff0000 interleave:0-1 anon=2 dirty=2 N0=1 N1=1 kernelpagesize_kB=4
"
        .into(),
    ));
    let (_dir, root) = with(&files);
    let mut seen = Vec::new();
    let summary = for_each_vma(&root, 4242, |vma| seen.push(vma.clone())).unwrap();
    assert_eq!(summary.vmas, 5);
    assert!(summary.numa_maps_available);
    assert_eq!(summary.unmatched_numa_lines, 1, "the 555555556000 line has no mapping");
    assert_eq!(seen[1].numa.as_ref().unwrap().pages_by_node, vec![(1, 1)]);
    assert!(seen[2].numa.as_ref().unwrap().heap);
    assert!(seen[3]
        .numa
        .as_ref()
        .unwrap()
        .policy
        .as_ref()
        .unwrap()
        .mode
        .interleaves());
    assert!(seen[4].numa.is_none(), "vsyscall has no numa_maps line");
}

#[test]
fn kernel_without_numa_maps_still_lists_mappings() {
    let mut files = process_files();
    files.push((
        "proc/4242/maps",
        "555555554000-555555555000 r--p 00000000 fe:00 12 /opt/victim\n".into(),
    ));
    let (_dir, root) = with(&files);
    let mut count = 0;
    let summary = for_each_vma(&root, 4242, |vma| {
        assert!(vma.numa.is_none());
        count += 1;
    })
    .unwrap();
    assert!(!summary.numa_maps_available);
    assert_eq!(count, 1);
}

#[test]
fn malformed_maps_names_the_file() {
    let mut files = process_files();
    files.push(("proc/4242/maps", "garbage\n".into()));
    files.push(("proc/4242/numa_maps", "".into()));
    let (_dir, root) = with(&files);
    let err = for_each_vma(&root, 4242, |_| {}).unwrap_err();
    assert!(err.to_string().starts_with("/proc/4242/maps: malformed"), "{err}");
}

#[test]
fn kernel_thread_has_no_mappings() {
    let mut files = process_files();
    files.push(("proc/4242/maps", String::new()));
    files.push(("proc/4242/numa_maps", String::new()));
    let (_dir, root) = with(&files);
    let summary = for_each_vma(&root, 4242, |_| panic!("no mappings expected")).unwrap();
    assert_eq!(summary.vmas, 0);
}

#[test]
fn many_mappings_stream_through_the_reader_thread() {
    // More lines than one batch, with one mapping missing from numa_maps
    // in the middle (it changed between the reads).
    let count = 2_000u64;
    let mut maps = String::new();
    let mut numa = String::new();
    for i in 0..count {
        let start = 0x7f00_0000_0000 + i * 0x2000;
        maps.push_str(&format!("{start:x}-{:x} rw-p 00000000 00:00 0\n", start + 0x1000));
        if i != 1000 {
            numa.push_str(&format!(
                "{start:x} default anon=1 dirty=1 N{}=1 kernelpagesize_kB=4\n",
                i % 2
            ));
        }
    }
    let mut files = process_files();
    files.push(("proc/4242/maps", maps));
    files.push(("proc/4242/numa_maps", numa));
    let (_dir, root) = with(&files);
    let (mut seen, mut with_numa, mut on_node_1) = (0u64, 0u64, 0u64);
    let summary = for_each_vma(&root, 4242, |vma| {
        seen += 1;
        if let Some(numa) = &vma.numa {
            with_numa += 1;
            on_node_1 += numa.pages_by_node.iter().filter(|(n, _)| *n == 1).count() as u64;
        }
    })
    .unwrap();
    assert_eq!((summary.vmas, seen, with_numa), (count, count, count - 1));
    assert_eq!(on_node_1, count / 2);
    assert_eq!(summary.unmatched_numa_lines, 0);
}

#[test]
fn malformed_numa_maps_names_the_file_and_stops_the_reader() {
    let mut files = process_files();
    let mut maps = String::new();
    for i in 0..1500u64 {
        let start = 0x7f00_0000_0000 + i * 0x2000;
        maps.push_str(&format!("{start:x}-{:x} rw-p 00000000 00:00 0\n", start + 0x1000));
    }
    files.push(("proc/4242/maps", maps));
    files.push(("proc/4242/numa_maps", "7f0000000000 default N0=oops\n".into()));
    let (_dir, root) = with(&files);
    let err = for_each_vma(&root, 4242, |_| {}).unwrap_err();
    assert!(err.to_string().starts_with("/proc/4242/numa_maps: malformed"), "{err}");
}

#[test]
fn resident_bytes_sum_each_node_at_its_page_size() {
    let numa_maps = "7f00 default anon=3 N0=2 N1=1 kernelpagesize_kB=4\n\
                     7f10 default huge N1=1 kernelpagesize_kB=2048\n\
                     not a numa_maps line at all\n\
                     7f20 default anon=1 N0=1 kernelpagesize_kB=4\n";
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/4242/numa_maps", numa_maps)]);
    let by_node = resident_bytes_by_node(&root, 4242, 100).unwrap();
    assert_eq!(by_node, [(0, 3 * 4096), (1, 4096 + (2 << 20))].into_iter().collect());
    // The line cap: only the first mapping.
    let first = resident_bytes_by_node(&root, 4242, 1).unwrap();
    assert_eq!(first, [(0, 2 * 4096), (1, 4096)].into_iter().collect());
    assert_eq!(resident_bytes_by_node(&root, 4243, 100), None);
}

#[test]
fn the_mapping_at_an_address_or_none() {
    let maps = "00400000-00401000 r-xp 00000000 08:01 12 /bin/app\n\
                7f0000000000-7f0000002000 rw-p 00000000 00:00 0\n";
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/9/maps", maps)]);
    let found = mapping_at(&root, 9, 0x7f0000001fff).unwrap().unwrap();
    assert_eq!((found.start, found.end), (0x7f0000000000, 0x7f0000002000));
    assert_eq!(mapping_at(&root, 9, 0x400000).unwrap().unwrap().start, 0x400000);
    // The end is one past the last byte; below and between are unmapped.
    assert_eq!(mapping_at(&root, 9, 0x401000).unwrap(), None);
    assert_eq!(mapping_at(&root, 9, 0x1).unwrap(), None);
    assert_eq!(
        mapping_at(&root, 10, 0x1).unwrap_err(),
        ProcessError::Exited { pid: 10 }
    );
}

#[test]
fn a_bad_line_before_the_address_is_an_error_not_a_gap() {
    let maps = "00400000-00401000 r-xp 00000000 08:01 12 /bin/app\n\
                garbage line\n\
                7f0000000000-7f0000002000 rw-p 00000000 00:00 0\n";
    let (_dir, root) = crate::test_support::temp_tree(&[("proc/9/maps", maps)]);
    assert_eq!(mapping_at(&root, 9, 0x400000).unwrap().unwrap().start, 0x400000);
    let err = mapping_at(&root, 9, 0x7f0000000000).unwrap_err();
    assert!(err.to_string().starts_with("/proc/9/maps: malformed"), "{err}");
}

/// Lines handed out from the reader's buffer and lines gathered across its
/// end must read the same: every buffer size from 1 byte (every line
/// gathered) to larger than the text (every line in place).
#[test]
fn lines_read_the_same_in_place_and_gathered() {
    let text: &[u8] = b"7f00-7f01 rw-p 0 00:00 0\n\n   \n\0\nsecond line\xff here\nthird\r\nlast without newline";
    let expected = [
        "7f00-7f01 rw-p 0 00:00 0",
        "second line\u{fffd} here",
        "third\r",
        "last without newline",
    ];
    for capacity in [1, 2, 3, 7, 16, 25, 26, 64, 4096] {
        let reader = BufReader::with_capacity(capacity, text);
        let mut lines = LineStream::new(reader, "proc/1/maps");
        let mut got = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            got.push(line.to_string());
        }
        assert_eq!(got, expected, "buffer of {capacity} bytes");
    }
}

#[test]
fn the_first_newline_is_found_at_every_offset() {
    for length in 0..40 {
        for at in 0..length {
            let mut bytes = vec![b'x'; length];
            bytes[at] = b'\n';
            if at + 3 < length {
                bytes[at + 3] = b'\n';
            }
            // Bytes that differ from a newline only by their high bit or a
            // borrow must not be taken for one.
            if at > 0 {
                bytes[at - 1] = 0x8a;
            }
            assert_eq!(newline_at(&bytes), Some(at), "length {length}, newline at {at}");
        }
        assert_eq!(newline_at(&vec![0x0b; length]), None);
        assert_eq!(newline_at(&vec![0x8a; length]), None);
    }
}
