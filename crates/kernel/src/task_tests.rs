//! The task reader over synthetic trees (threads that exit mid-read, a
//! process that is gone, hostile names and files) and over this process.

use super::*;

const STAT: &str =
    "4242 (victim) S 1 4242 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 2 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0";

/// `String` pairs, so `.into()` in the tests has one type to become.
fn tree(files: &[(String, String)]) -> (tempfile::TempDir, Root) {
    crate::test_support::temp_tree(files)
}
fn stat_of(tid: u32, state: &str) -> String {
    STAT.replacen("4242 (victim) S", &format!("{tid} (victim) {state}"), 1)
}

fn process(tids: &[u32]) -> Vec<(String, String)> {
    let mut files = vec![("proc/4242/stat".to_string(), stat_of(4242, "S"))];
    for tid in tids {
        files.push((format!("proc/4242/task/{tid}/stat"), stat_of(*tid, "S")));
    }
    files
}

#[test]
fn threads_are_listed_by_number_with_their_stat() {
    let (_dir, root) = tree(&process(&[4242, 10000, 9999]));
    assert_eq!(thread_ids(&root, 4242).unwrap(), Some(vec![4242, 9999, 10000]));
    let read = threads(&root, 4242, MAX_THREADS).unwrap().unwrap();
    let tids: Vec<u32> = read.threads.iter().map(|t| t.tid).collect();
    assert_eq!(tids, [4242, 9999, 10000]);
    assert_eq!(read.threads[1].stat.tid, 9999);
    assert_eq!((read.listed, read.reads, read.unread), (3, 3, 0));
    assert!(is_thread_of(&root, 4242, 9999));
    assert!(!is_thread_of(&root, 4242, 9998));
}

#[test]
fn a_cap_reads_the_lowest_ids_only() {
    let (_dir, root) = tree(&process(&[5, 6, 7, 8]));
    let read = threads(&root, 4242, 2).unwrap().unwrap();
    assert_eq!((read.listed, read.reads, read.threads.len()), (4, 2, 2));
    assert_eq!(read.threads[1].tid, 6);
}

#[test]
fn a_thread_that_exits_mid_read_is_left_out() {
    // Listed in task/, but its stat is gone: it exited after the listing.
    let mut files = process(&[4242]);
    files.push(("proc/4242/task/4243/comm".into(), "victim\n".into()));
    let (_dir, root) = tree(&files);
    let read = threads(&root, 4242, MAX_THREADS).unwrap().unwrap();
    assert_eq!((read.listed, read.threads.len(), read.unread), (2, 1, 0));
    assert_eq!(thread_stat(&root, 4242, 4243).unwrap(), None);
}

#[test]
fn a_process_that_is_gone_is_none() {
    let (_dir, root) = tree(&process(&[4242]));
    assert_eq!(thread_ids(&root, 7).unwrap(), None);
    assert_eq!(threads(&root, 7, MAX_THREADS).unwrap(), None);
    assert_eq!(process_stat(&root, 7).unwrap(), None);
    assert!(!process_exists(&root, 7));
    assert!(process_exists(&root, 4242));
}

#[test]
fn a_malformed_stat_is_kept_as_an_error_not_a_panic() {
    let mut files = process(&[4242]);
    files.push(("proc/4242/task/4243/stat".into(), "4243 victim S".into()));
    files.push(("proc/4242/task/notanumber/stat".into(), stat_of(1, "S")));
    let (_dir, root) = tree(&files);
    let read = threads(&root, 4242, MAX_THREADS).unwrap().unwrap();
    assert_eq!((read.listed, read.threads.len(), read.unread), (2, 1, 1));
    let error = read.first_error.unwrap().to_string();
    assert!(error.starts_with("/proc/4242/task/4243/stat: malformed"), "{error}");
}

#[test]
fn ended_means_gone_zombie_dead_or_unreadable() {
    for (state, ended) in [("S", false), ("R", false), ("Z", true), ("X", true)] {
        let (_dir, root) = tree(&[("proc/4242/stat".into(), stat_of(4242, state))]);
        assert_eq!(has_ended(&root, 4242), ended, "state {state}");
    }
    let (_dir, root) = tree(&[("proc/4242/stat".into(), "garbage".into())]);
    assert!(has_ended(&root, 4242));
    assert!(has_ended(&root, 4243));
}

#[test]
fn this_process_lists_a_thread_it_started() {
    let root = Root::live();
    let me = std::process::id();
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        // SAFETY: gettid has no arguments and cannot fail.
        tx.send(unsafe { libc::gettid() } as u32).unwrap();
        done_rx.recv().ok();
    });
    let tid = rx.recv().unwrap();
    let read = threads(&root, me, MAX_THREADS).unwrap().unwrap();
    assert!(read.threads.iter().any(|t| t.tid == tid && t.stat.tid == tid));
    assert!(read.threads.iter().any(|t| t.tid == me));
    assert!(!has_ended(&root, me));
    done_tx.send(()).unwrap();
    worker.join().unwrap();
}
