//! A hostile `--root` tree: FIFOs, sockets and devices where kernel files
//! should be, files too big to be kernel files, names holding escape
//! sequences. Every case must end in a clear error, never a hang.

use super::*;
use crate::procfs::process::{LineStream, MAX_LINE_BYTES};
use crate::untrusted::mkfifo;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("sys/devices/system/node")).unwrap();
    fs::create_dir_all(dir.path().join("proc/42")).unwrap();
    dir
}

/// Runs `f` on another thread and fails the test if it has not finished in
/// ten seconds: a FIFO that is opened blocking would hang forever.
fn without_hanging<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    receiver
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("blocked on a FIFO or device")
}

#[test]
fn a_fifo_in_the_tree_is_refused_not_waited_on() {
    let dir = tree();
    mkfifo(&dir.path().join("sys/devices/system/node/online"));
    mkfifo(&dir.path().join("proc/42/maps"));
    let root = Root::directory(dir.path()).unwrap();
    let (read_root, stream_root, write_root) = (root.clone(), root.clone(), root.clone());
    let err = without_hanging(move || read_root.read("sys/devices/system/node/online").unwrap_err());
    assert_eq!(
        err.to_string(),
        "/sys/devices/system/node/online: is a FIFO, not a regular file"
    );
    let err = without_hanging(move || LineStream::open(&stream_root, "proc/42/maps").err().unwrap());
    assert_eq!(err.to_string(), "/proc/42/maps: is a FIFO, not a regular file");
    let err = without_hanging(move || write_root.write("sys/devices/system/node/online", "0").unwrap_err());
    assert_eq!(
        err.to_string(),
        "/sys/devices/system/node/online: is a FIFO, not a regular file"
    );
}

#[test]
fn a_link_to_a_fifo_is_refused_too() {
    let dir = tree();
    mkfifo(&dir.path().join("pipe"));
    std::os::unix::fs::symlink("/pipe", dir.path().join("sys/devices/system/node/online")).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let err = without_hanging(move || root.read("sys/devices/system/node/online").unwrap_err());
    assert!(err.to_string().ends_with("is a FIFO, not a regular file"), "{err}");
}

#[test]
fn a_fifo_as_the_root_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("root");
    mkfifo(&fifo);
    let err = without_hanging(move || Root::directory(&fifo).unwrap_err());
    assert!(err.to_string().ends_with(": is a FIFO, not a directory"), "{err}");
}

#[test]
fn a_socket_in_the_tree_is_refused() {
    let dir = tree();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("sys/devices/system/node/online")).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let err = root.read("sys/devices/system/node/online").unwrap_err();
    assert!(err.to_string().ends_with("is a socket, not a regular file"), "{err}");
}

#[test]
fn a_device_inside_the_root_is_never_opened() {
    // The host's own /dev is "inside" a root at /, and needs no mknod.
    let root = Root::directory(Path::new("/")).unwrap();
    for device in ["dev/zero", "dev/null"] {
        let shown = root.clone();
        let err = without_hanging(move || shown.read(device).unwrap_err());
        assert!(
            err.to_string().ends_with("is a character device, not a regular file"),
            "{err}"
        );
    }
}

/// Needs root to mknod; CI runs as root, and elsewhere this fails saying
/// so rather than passing unrun.
#[test]
fn a_character_device_in_the_tree_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tree();
    let at = dir.path().join("sys/devices/system/node/online");
    let c_path = std::ffi::CString::new(at.as_os_str().as_bytes()).unwrap();
    // /dev/zero's numbers: an endless source if it were ever read.
    // SAFETY: c_path is a valid NUL-terminated string that outlives the call.
    let rc = unsafe { libc::mknod(c_path.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 5)) };
    assert_eq!(
        rc,
        0,
        "mknod: {} (this test needs root)",
        std::io::Error::last_os_error()
    );
    let root = Root::directory(dir.path()).unwrap();
    let err = without_hanging(move || root.read("sys/devices/system/node/online").unwrap_err());
    assert!(
        err.to_string().ends_with("is a character device, not a regular file"),
        "{err}"
    );
}

#[test]
fn a_sparse_giant_costs_nothing() {
    let dir = tree();
    let file = fs::File::create(dir.path().join("sys/devices/system/node/online")).unwrap();
    file.set_len(1 << 30).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let err = root.read("sys/devices/system/node/online").unwrap_err();
    assert!(err.to_string().contains("larger than 16 MiB"), "{err}");
}

#[test]
fn just_over_the_cap_is_refused_and_just_under_is_read() {
    let dir = tree();
    let at = dir.path().join("proc/42/environ");
    fs::write(&at, vec![b'x'; MAX_KERNEL_FILE_BYTES as usize]).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    assert_eq!(
        root.read("proc/42/environ").unwrap().len(),
        MAX_KERNEL_FILE_BYTES as usize
    );
    fs::write(&at, vec![b'x'; MAX_KERNEL_FILE_BYTES as usize + 1]).unwrap();
    assert!(root
        .read("proc/42/environ")
        .unwrap_err()
        .to_string()
        .contains("larger than 16 MiB"));
}

#[test]
fn a_streamed_file_with_an_endless_line_is_an_error() {
    let dir = tree();
    let maps = dir.path().join("proc/42/maps");
    let mut text = b"7f00-7f01 r--p 00000000 00:00 0\n".to_vec();
    text.extend(std::iter::repeat_n(b'a', MAX_LINE_BYTES as usize + 10));
    fs::write(&maps, &text).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let mut lines = LineStream::open(&root, "proc/42/maps").unwrap();
    assert!(lines.next_line().unwrap().is_some());
    let err = lines.next_line().unwrap_err();
    assert_eq!(err.to_string(), "/proc/42/maps: has a line longer than 256 KiB");
    // A sparse file is all NUL and never has a newline.
    fs::File::create(&maps).unwrap().set_len(1 << 30).unwrap();
    let mut lines = LineStream::open(&root, "proc/42/maps").unwrap();
    assert!(lines.next_line().is_err());
}

#[test]
fn names_from_the_tree_are_escaped_in_errors() {
    let dir = tree();
    let evil = "sys/devices/system/node/\x1b]2;owned\x07";
    fs::write(dir.path().join(evil), "zz\x1b[2J").unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let err = crate::read::list(&root, evil).unwrap_err().to_string();
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("\\x1b]2;owned\\x07"), "{err}");
}

#[test]
fn directories_beyond_the_kernels_limits_are_malformed() {
    let dir = tree();
    fs::create_dir_all(dir.path().join("sys/devices/system/node/node5000")).unwrap();
    fs::create_dir_all(dir.path().join("sys/devices/system/cpu/cpu70000")).unwrap();
    let root = Root::directory(dir.path()).unwrap();
    // Out-of-range directories are noted as malformed and left out; the
    // rest of the tree is still read.
    let mut gaps = crate::unread::Gaps::default();
    let nodes = crate::sysfs::node::read(&root, &mut gaps);
    let err = gaps.first().unwrap().to_string();
    assert!(
        err.contains("node5000 is beyond the kernel's limit of 1024 nodes"),
        "{err}"
    );
    assert!(nodes.is_none_or(|n| n.nodes.iter().all(|n| n.id < 1024)));
    let mut gaps = crate::unread::Gaps::default();
    let cpus = crate::sysfs::cpu::read(&root, &mut gaps);
    let err = gaps.first().unwrap().to_string();
    assert!(
        err.contains("cpu70000 is beyond the kernel's limit of 65536 CPUs"),
        "{err}"
    );
    assert!(cpus.is_some_and(|c| c.cpus.iter().all(|c| c.id < 65536)));
    let row = vec!["10"; 1025].join(" ");
    assert!(crate::sysfs::node::parse_distance(&row).is_err());
}

#[test]
fn a_cpu_with_thousands_of_cache_indices_is_malformed() {
    let dir = tree();
    let cache = dir.path().join("sys/devices/system/cpu/cpu0/cache");
    for i in 0..40 {
        fs::create_dir_all(cache.join(format!("index{i}"))).unwrap();
    }
    let root = Root::directory(dir.path()).unwrap();
    let mut gaps = crate::unread::Gaps::default();
    let cpus = crate::sysfs::cpu::read(&root, &mut gaps).unwrap();
    assert!(cpus.cpus.iter().all(|c| c.caches.is_empty()));
    let err = gaps.first().unwrap().to_string();
    assert!(err.contains("40 cache indices"), "{err}");
}

#[test]
fn key_value_files_of_endless_keys_are_malformed() {
    let many: String = (0..5000).map(|i| format!("Key{i}: 1 kB\n")).collect();
    assert!(crate::procfs::meminfo::parse(&many).is_err());
    let many: String = (0..5000).map(|i| format!("key{i} 1\n")).collect();
    assert!(crate::sysfs::node::parse_counters(&many).is_err());
    let many: String = (0..5000).map(|i| format!("key{i} : 1\n")).collect();
    assert!(crate::procfs::task::parse_sched(&format!("x (1, #threads: 1)\n{many}")).is_err());
}

/// Each list is capped alone; thousands of CPUs sharing one full-width
/// list through links must not multiply it past the budget for all.
#[test]
fn many_cpus_sharing_a_full_width_list_stay_within_the_budget() {
    let dir = tree();
    let base = dir.path().join("sys/devices/system/cpu");
    let shared = base.join("shared-cache");
    fs::create_dir_all(&shared).unwrap();
    fs::write(shared.join("level"), "3\n").unwrap();
    // None of the CPUs below is in the list, so each reads it (a CPU in an
    // earlier CPU's list would skip the cache as already read).
    fs::write(shared.join("shared_cpu_list"), "700-65535\n").unwrap();
    for cpu in 0..700 {
        let cache = base.join(format!("cpu{cpu}/cache"));
        fs::create_dir_all(&cache).unwrap();
        fs::write(base.join(format!("cpu{cpu}/online")), "1\n").unwrap();
        std::os::unix::fs::symlink("../../shared-cache", cache.join("index0")).unwrap();
    }
    let root = Root::directory(dir.path()).unwrap();
    let mut gaps = crate::unread::Gaps::default();
    let cpus = crate::sysfs::cpu::read(&root, &mut gaps).unwrap();
    let ids: usize = cpus
        .cpus
        .iter()
        .flat_map(|c| c.caches.iter().filter_map(|k| k.shared_cpus.as_ref()))
        .map(|l| l.len())
        .sum();
    assert!(ids <= crate::sysfs::cpu::MAX_LIST_IDS_IN_ALL, "{ids} ids kept");
    assert!(ids > 0, "lists within the budget are still read");
    let err = gaps.first().unwrap().to_string();
    assert!(err.contains("more than 33554432 CPU ids in all"), "{err}");
}

#[test]
fn a_cache_an_earlier_cpu_shares_is_not_read_again() {
    // CPU 1's copy of index0 is unreadable garbage: read, it would be
    // noted as malformed. It is read only when CPU 0's list leaves CPU 1 out.
    for (list, read_again) in [("0-1", false), ("0", true)] {
        let dir = tree();
        let base = dir.path().join("sys/devices/system/cpu");
        for cpu in 0..2 {
            let index = base.join(format!("cpu{cpu}/cache/index0"));
            fs::create_dir_all(&index).unwrap();
            fs::write(base.join(format!("cpu{cpu}/online")), "1\n").unwrap();
            let level = if cpu == 0 { "3\n" } else { "three\n" };
            fs::write(index.join("level"), level).unwrap();
            fs::write(index.join("shared_cpu_list"), format!("{list}\n")).unwrap();
        }
        let root = Root::directory(dir.path()).unwrap();
        let mut gaps = crate::unread::Gaps::default();
        let cpus = crate::sysfs::cpu::read(&root, &mut gaps).unwrap();
        assert_eq!(cpus.cpus[0].caches.len(), 1);
        assert_eq!(cpus.cpus[1].caches.len(), 0, "list {list}");
        assert_eq!(!gaps.is_empty(), read_again, "list {list}: {:?}", gaps.first());
    }
}

#[test]
fn a_thread_sibling_takes_the_lowest_cpus_list() {
    // CPU 1's own list is garbage: read, it would be noted as malformed.
    // CPU 0's list names CPU 1, so CPU 1 takes that list without reading
    // its own; when CPU 0 leaves it out, CPU 1's file is read (and noted).
    for (list, read_again) in [("0-1", false), ("0", true)] {
        let dir = tree();
        let base = dir.path().join("sys/devices/system/cpu");
        for (cpu, siblings) in [(0, list), (1, "one")] {
            let topology = base.join(format!("cpu{cpu}/topology"));
            fs::create_dir_all(&topology).unwrap();
            fs::write(topology.join("core_id"), format!("{cpu}\n")).unwrap();
            fs::write(topology.join("thread_siblings_list"), format!("{siblings}\n")).unwrap();
        }
        let root = Root::directory(dir.path()).unwrap();
        let mut gaps = crate::unread::Gaps::default();
        let cpus = crate::sysfs::cpu::read(&root, &mut gaps).unwrap();
        let siblings = |at: usize| cpus.cpus[at].thread_siblings.as_ref().map(|l| l.to_string());
        assert_eq!(siblings(0).as_deref(), Some(list));
        assert_eq!(siblings(1).as_deref(), (!read_again).then_some(list), "list {list}");
        // The ids are still each CPU's own.
        assert_eq!((cpus.cpus[0].core, cpus.cpus[1].core), (Some(0), Some(1)));
        assert_eq!(!gaps.is_empty(), read_again, "list {list}: {:?}", gaps.first());
    }
}

#[test]
fn names_a_cpu_directory_lacks_are_unknown() {
    // CPU 1 is offline with no `topology` or `cache`; CPU 0 has no `online`.
    let dir = tree();
    let base = dir.path().join("sys/devices/system/cpu");
    fs::create_dir_all(base.join("cpu0/topology")).unwrap();
    fs::write(base.join("cpu0/topology/core_id"), "7\n").unwrap();
    fs::create_dir_all(base.join("cpu1")).unwrap();
    fs::write(base.join("cpu1/online"), "0\n").unwrap();
    let root = Root::directory(dir.path()).unwrap();
    let mut gaps = crate::unread::Gaps::default();
    let cpus = crate::sysfs::cpu::read(&root, &mut gaps).unwrap();
    assert_eq!((cpus.cpus[0].online, cpus.cpus[0].core), (None, Some(7)));
    assert_eq!((cpus.cpus[1].online, cpus.cpus[1].core), (Some(false), None));
    assert!(cpus.cpus[1].caches.is_empty() && cpus.cpus[1].thread_siblings.is_none());
    assert!(gaps.is_empty(), "{:?}", gaps.first());
}
