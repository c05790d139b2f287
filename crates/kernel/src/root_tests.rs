use super::*;
use std::os::unix::fs::symlink;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::create_dir_all(p.join("sys/devices/pci0000:00/0000:00:03.0/net/eth0")).unwrap();
    fs::write(p.join("sys/devices/pci0000:00/0000:00:03.0/numa_node"), "1\n").unwrap();
    symlink(
        "../../../0000:00:03.0",
        p.join("sys/devices/pci0000:00/0000:00:03.0/net/eth0/device"),
    )
    .unwrap();
    fs::create_dir_all(p.join("sys/class/net")).unwrap();
    symlink(
        "../../devices/pci0000:00/0000:00:03.0/net/eth0",
        p.join("sys/class/net/eth0"),
    )
    .unwrap();
    symlink("/etc/passwd", p.join("sys/escape")).unwrap();
    symlink("loop", p.join("sys/loop")).unwrap();
    dir
}

#[test]
fn follows_relative_links_inside_the_root() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    assert_eq!(root.read("sys/class/net/eth0/device/numa_node").unwrap(), "1\n");
    assert_eq!(
        root.resolve("sys/class/net/eth0/device").unwrap(),
        "sys/devices/pci0000:00/0000:00:03.0"
    );
}

#[test]
fn absolute_links_stay_inside_the_root() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    assert!(root.read("sys/escape").unwrap_err().is_not_found());
}

#[test]
fn link_loops_are_an_error_not_a_hang() {
    let dir = tree();
    let root = Root::directory(dir.path()).unwrap();
    let err = root.read("sys/loop").unwrap_err();
    assert!(err.to_string().contains("too many levels"), "{err}");
}

#[test]
fn recording_keeps_links_and_files() {
    let dir = tree();
    let (root, recording) = Root::directory(dir.path()).unwrap().recording();
    root.read("sys/class/net/eth0/device/numa_node").unwrap();
    let recording = recording.lock().unwrap();
    assert_eq!(recording.symlinks.len(), 2);
    assert!(recording
        .files
        .contains_key("sys/devices/pci0000:00/0000:00:03.0/numa_node"));
}

#[test]
fn a_streamed_file_is_recorded_and_the_stream_reads_the_recorded_bytes() {
    use std::io::Read;
    let dir = tree();
    fs::write(dir.path().join("sys/online"), "0-3\n").unwrap();
    let (root, recording) = Root::directory(dir.path()).unwrap().recording();
    let mut file = root.open("sys/online").unwrap();
    // Changed after the open: the stream still reads what was recorded.
    fs::write(dir.path().join("sys/online"), "0-7\n").unwrap();
    let mut text = String::new();
    file.read_to_string(&mut text).unwrap();
    assert_eq!(text, "0-3\n");
    assert_eq!(recording.lock().unwrap().files["sys/online"], b"0-3\n");
    // A made file joins the recording; without a recording nothing is kept.
    root.record_made("numasleuth/made", b"x".to_vec());
    assert!(recording.lock().unwrap().files.contains_key("numasleuth/made"));
    assert!(root.is_recording() && !Root::directory(dir.path()).unwrap().is_recording());
}

#[test]
fn trailing_nul_padding_is_not_data() {
    // node/online on some kernels (seen in hwloc's 8em64t-2s2ca2c capture).
    let dir = tree();
    fs::write(dir.path().join("sys/online"), "0-1\n\0").unwrap();
    let root = Root::directory(dir.path()).unwrap();
    assert_eq!(root.read("sys/online").unwrap(), "0-1\n");
}

#[test]
fn missing_root_is_a_clear_error() {
    let err = Root::directory(Path::new("/nonexistent/numasleuth-root")).unwrap_err();
    assert_eq!(err.to_string(), "/nonexistent/numasleuth-root: not found");
}

#[test]
fn the_live_root_reads_through_links_as_the_hand_walk_does() {
    // sys/class/net/lo is a link into /sys/devices/virtual/net/lo; the live
    // root lets the kernel follow it, a recording root walks it by hand.
    let fast = Root::live();
    let (walked, recording) = Root::live().recording();
    assert_eq!(
        fast.read("sys/class/net/lo/mtu").unwrap(),
        walked.read("sys/class/net/lo/mtu").unwrap()
    );
    assert!(recording.lock().unwrap().symlinks.contains_key("sys/class/net/lo"));
    assert_eq!(
        fast.list("sys/class/net/lo/queues").unwrap(),
        walked.list("sys/class/net/lo/queues").unwrap()
    );
    assert!(fast.exists("sys/class/net/lo/mtu") && !fast.exists("sys/class/net/lo/no-such-file"));
    assert_eq!(fast.list("sys/class/net/no-such-device").unwrap(), None);
    let missing = fast.read("sys/class/net/no-such-device/mtu").unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
}

#[test]
fn the_live_root_still_refuses_what_is_not_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let relative = fifo.to_str().unwrap().trim_start_matches('/');
    let err = Root::live().read(relative).unwrap_err();
    assert!(
        err.to_string().contains("FIFO") || err.to_string().contains("fifo"),
        "{err}"
    );
    let link = dir.path().join("link");
    symlink(&fifo, &link).unwrap();
    assert!(Root::live()
        .read(link.to_str().unwrap().trim_start_matches('/'))
        .is_err());
}
