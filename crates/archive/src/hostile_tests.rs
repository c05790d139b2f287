//! Hostile archives and roots, one class per test: bombs, huge extension
//! headers, deep and escaping paths, special files, trees that are not
//! (the gzip layer's own cases are in `hostile_gzip_tests`). Each must be
//! refused with a clear message, quickly, leaving nothing behind. (What
//! kernel adds, the path in front and the tree being a machine's, is
//! tested in kernel's `snapshot::hostile_tests`.)

use std::fs;

use crate::limits::{self, Caps, MAX_ENTRIES};
use crate::scratch_tests::Scratch;
use crate::test_archive::{gzip, TarBuilder};

#[test]
fn huge_extension_headers_are_refused_before_they_are_read() {
    let s = Scratch::new();
    // Only the header is there: refusing must not need the payload.
    for (kind, says) in [
        (b'L', "long name"),
        (b'K', "long link name"),
        (b'x', "pax header"),
        (b'g', "global pax"),
    ] {
        let gz = TarBuilder::new()
            .machine()
            .header(b"././@LongLink", kind, 1 << 30, b"")
            .gz();
        let err = s.refused(&gz);
        assert!(err.contains(says) && err.contains("1073741824 bytes"), "{err}");
    }
    let mut chain = TarBuilder::new();
    for _ in 0..=limits::MAX_EXTENSION_HEADERS {
        chain.pax(&[("comment", b"x")]);
    }
    let err = s.refused(&chain.file("sys/a", b"").gz());
    assert!(err.contains("extension headers in a row"), "{err}");
}

#[test]
fn huge_entries_and_bombs_are_refused() {
    let s = Scratch::new();
    let err = s.refused(&TarBuilder::new().machine().header(b"sys/big", b'0', 1 << 60, b"").gz());
    assert!(err.contains("more than any kernel file (16 MiB)"), "{err}");
    let err = s.refused(
        &TarBuilder::new()
            .pax(&[("size", b"99999999999")])
            .file("sys/a", b"")
            .gz(),
    );
    assert!(err.contains("more than any kernel file"), "{err}");
    let small = Caps {
        stream_bytes: 1 << 20,
        unpacked_bytes: 64 << 10,
        entries: 10,
    };
    let mut many = TarBuilder::new();
    for i in 0..3 {
        many.file(&format!("sys/{i}"), &[0; 30 << 10]);
    }
    let err = s.open_with(&many.gz(), small).err().unwrap().to_string();
    assert!(err.contains("unpacks to more than 64 KiB"), "{err}");
    // Zeros after the end blocks: the stream cap, not the entries, stops it.
    let bomb = gzip(&[TarBuilder::new().machine().tar(), vec![0; 2 << 20]].concat());
    let err = s.open_with(&bomb, small).err().unwrap().to_string();
    assert!(err.contains("decompresses to more than 1 MiB"), "{err}");
    let mut crowd = TarBuilder::new();
    for i in 0..11 {
        crowd.dir(&format!("d{i}"));
    }
    let err = s.open_with(&crowd.gz(), small).err().unwrap().to_string();
    assert!(err.contains("more than 10 entries"), "{err}");
    s.assert_clean();
}

#[test]
fn many_small_files_are_counted_by_the_disk_they_take() {
    // 20 files of 100 bytes are 2,000 bytes of content but 80 KiB of disk
    // (a 4 KiB block each): over a 64 KiB cap, as the disk would feel it.
    let caps = Caps {
        stream_bytes: 1 << 20,
        unpacked_bytes: 64 << 10,
        entries: 1000,
    };
    let mut small = TarBuilder::new();
    small.machine();
    for i in 0..20 {
        small.file(&format!("sys/f{i}"), &[b'x'; 100]);
    }
    let s = Scratch::new();
    let err = s.open_with(&small.gz(), caps).err().unwrap().to_string();
    assert!(err.contains("unpacks to more than 64 KiB"), "{err}");
    s.assert_clean();
    // Directories take a block each too; 10 files of 100 bytes still fit.
    let mut fits = TarBuilder::new();
    fits.machine();
    for i in 0..10 {
        fits.file(&format!("sys/f{i}"), &[b'x'; 100]);
    }
    assert!(s.open_with(&fits.gz(), caps).is_ok());
}

#[test]
fn the_real_entry_cap_is_quick_to_hit() {
    let mut crowd = TarBuilder::new();
    crowd.dir("sys");
    for i in 0..MAX_ENTRIES {
        crowd.header(format!("sys/{i}").as_bytes(), b'0', 0, b"");
    }
    let s = Scratch::new();
    let started = std::time::Instant::now();
    let err = s.refused(&crowd.gz());
    assert!(err.contains("more than 100000 entries"), "{err}");
    // Not a timing test: a generous bound that quadratic work would miss.
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
}

#[test]
fn deep_long_and_escaping_paths_are_refused() {
    let s = Scratch::new();
    let sentinel = s.path("sentinel").display().to_string();
    let deep = "a/".repeat(3000);
    let mut nested = TarBuilder::new();
    for depth in 1..=100 {
        nested.dir(&"d/".repeat(depth));
    }
    let cases = [
        (
            TarBuilder::new().machine().file("../escape", b"x").gz(),
            "climbs out with `..`",
        ),
        (
            TarBuilder::new().machine().file("sys/../../escape", b"x").gz(),
            "climbs out",
        ),
        (
            TarBuilder::new().machine().file(&format!("{sentinel}/x"), b"x").gz(),
            "absolute path",
        ),
        (
            TarBuilder::new()
                .machine()
                .pax(&[("path", deep.as_bytes())])
                .file("x", b"")
                .gz(),
            "(the limit is 4096)",
        ),
        (nested.gz(), "more than 64 directories deep"),
        (
            TarBuilder::new()
                .machine()
                .symlink("sys/up", &sentinel)
                .file("sys/up/x", b"x")
                .gz(),
            "goes through a symbolic link",
        ),
        (
            TarBuilder::new()
                .machine()
                .symlink("sys/f", &format!("{sentinel}/f"))
                .file("sys/f", b"x")
                .gz(),
            "would write through a symbolic link",
        ),
    ];
    for (gz, says) in cases {
        let err = s.refused(&gz);
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn special_files_in_an_archive_are_refused() {
    let s = Scratch::new();
    for (kind, says) in [
        (b'1', "a hard link"),
        (b'3', "a character device"),
        (b'4', "a block device"),
        (b'6', "a FIFO"),
        (b'S', "a sparse file"),
        (b'Z', "unknown type `Z`"),
    ] {
        let err = s.refused(
            &TarBuilder::new()
                .machine()
                .header(b"sys/odd", kind, 0, b"sys/online")
                .gz(),
        );
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn hostile_names_are_escaped_in_errors() {
    let s = Scratch::new();
    let err = s.refused(&TarBuilder::new().file("../\x1b[2J\x1b]0;owned\x07", b"").gz());
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("\\x1b[2J"), "{err}");
}

#[test]
fn modes_in_the_archive_do_not_block_removal() {
    let s = Scratch::new();
    let mut tar = TarBuilder::new();
    tar.machine().dir("sys/locked").file("sys/locked/f", b"1\n");
    // Make the directory's header say 0555 (read-only) with a right sum.
    let mut bytes = tar.tar();
    let header = bytes.chunks(512).position(|b| b.starts_with(b"sys/locked\0")).unwrap() * 512;
    bytes[header + 100..header + 107].copy_from_slice(b"0000555");
    bytes[header + 148..header + 156].fill(b' ');
    let sum: u64 = bytes[header..header + 512].iter().map(|b| u64::from(*b)).sum();
    bytes[header + 148..header + 155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    let root = s.open(&gzip(&bytes)).unwrap();
    let mode = fs::metadata(root.path().join("sys/locked")).unwrap().permissions();
    assert_ne!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o200, 0);
    drop(root);
    s.assert_clean();
}

#[test]
fn deep_branches_in_turn_unpack_correctly() {
    // Entries alternate between two branches 60 deep, so the kept chain of
    // open directories is cut back to the top for every entry.
    let (a, b) = ("sys/a/".repeat(30), "sys/b/".repeat(30));
    let mut tar = TarBuilder::new();
    tar.machine();
    for i in 0..200 {
        tar.file(&format!("{a}{i}"), b"a").file(&format!("{b}{i}"), b"b");
    }
    let s = Scratch::new();
    let root = s.open(&tar.gz()).unwrap();
    for i in [0, 99, 199] {
        assert_eq!(fs::read(root.path().join(format!("{a}{i}"))).unwrap(), b"a");
        assert_eq!(fs::read(root.path().join(format!("{b}{i}"))).unwrap(), b"b");
    }
    drop(root);
    s.assert_clean();
}

#[test]
fn links_are_kept_as_written() {
    // Absolute and climbing targets are kept: kernel's Root resolves them
    // inside the root (its `snapshot::hostile_tests` reads through them).
    let s = Scratch::new();
    let gz = TarBuilder::new()
        .machine()
        .symlink("sys/abs", "/sys/online")
        .symlink("sys/up", "../../../../../../etc/passwd")
        .gz();
    let root = s.open(&gz).unwrap();
    let link = |name: &str| fs::read_link(root.path().join(name)).unwrap();
    assert_eq!(link("sys/abs"), std::path::Path::new("/sys/online"));
    assert_eq!(link("sys/up"), std::path::Path::new("../../../../../../etc/passwd"));
    drop(root);
    s.assert_clean();
}
