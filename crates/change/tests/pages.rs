//! Page-move journals against this very test process: apply writes the
//! journal first and verifies with a query, undo moves back, and a move
//! that cannot happen leaves no journal. On a one-node machine the pages
//! "move" to the node they are on, which still runs every step for real.

use numasleuth_change::{apply_pages, undo_any, ChangeError, Journal, JournalKey, MachineIdentity, PageMove, Undone};
use numasleuth_kernel::pages::{self, PageStatus};
use numasleuth_kernel::procfs::process::read_process_stat;
use numasleuth_kernel::Root;

/// A touched page of our own, its node, our PID and start time.
fn own_page() -> (Vec<u8>, u64, u32, u32, u64) {
    let size = pages::page_size_bytes() as usize;
    let mut buffer = vec![1u8; size * 2];
    buffer[size] = 2;
    let address = (buffer.as_ptr() as u64 + size as u64 - 1) & !(size as u64 - 1);
    let node = match pages::query(0, &[address]).unwrap()[0] {
        PageStatus::Node(n) => n,
        other => panic!("{other:?}"),
    };
    let pid = std::process::id();
    let start = read_process_stat(&Root::live(), pid).unwrap().start_time_ticks.unwrap();
    (buffer, address, node, pid, start)
}

fn key() -> JournalKey {
    JournalKey::from_bytes([5; 32])
}

fn journal(pid: u32, start: u64, address: u64, from: u32, to: u32) -> Journal {
    let moves = vec![PageMove {
        pid,
        pid_start_time: start,
        address,
        pages: 1,
        page_bytes: pages::page_size_bytes(),
        from_node: from,
        to_node: to,
    }];
    Journal::pages(MachineIdentity::read(&Root::live()), 0, moves)
}

#[test]
fn apply_then_undo_verified() {
    let (_buffer, address, node, pid, start) = own_page();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pages.json");
    let outcome = apply_pages(
        &Root::live(),
        &mut journal(pid, start, address, node, node),
        &path,
        &key(),
    )
    .unwrap();
    assert_eq!((outcome.pages, outcome.attempted, outcome.verified), (1, 1, 1));
    assert!(path.exists(), "the journal is kept for undo");
    match undo_any(&Root::live(), &path, &key()).unwrap() {
        Undone::Pages(_, outcome) => {
            assert_eq!((outcome.attempted, outcome.verified), (1, 1));
            assert!(outcome.left_alone.is_empty());
        }
        Undone::Files(..) => panic!("a page journal undone as files"),
    }
}

#[test]
fn a_move_that_cannot_happen_leaves_no_journal() {
    let (_buffer, address, node, pid, start) = own_page();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad-node.json");
    let err = apply_pages(
        &Root::live(),
        &mut journal(pid, start, address, node, 1000),
        &path,
        &key(),
    )
    .unwrap_err();
    assert!(matches!(err, ChangeError::Pages(_)), "{err}");
    assert!(!path.exists());
    let path = dir.path().join("reused.json");
    let err = apply_pages(
        &Root::live(),
        &mut journal(pid, start + 1, address, node, node),
        &path,
        &key(),
    )
    .unwrap_err();
    assert!(matches!(err, ChangeError::PidReused { .. }), "{err}");
    assert!(!path.exists());
    // A page that was never touched cannot move: nothing moved, no journal.
    let fresh = vec![0u8; 1 << 22];
    let untouched = (fresh.as_ptr() as u64 + (1 << 21)) & !0xfff;
    let path = dir.path().join("untouched.json");
    match apply_pages(
        &Root::live(),
        &mut journal(pid, start, untouched, node, node),
        &path,
        &key(),
    ) {
        Err(ChangeError::NothingMoved { why }) => assert!(why.contains("1 not yet touched"), "{why}"),
        // calloc'd memory may come back touched; then it simply moved.
        Ok(outcome) => assert_eq!(outcome.verified, 1),
        Err(e) => panic!("{e}"),
    }
    drop(fresh);
}

/// A move killed before it reached a page leaves it on the node it came
/// from: undo leaves it there and says so, rather than calling it moved
/// since by something else. The journal alone is written here, as the
/// killed move would have left it (on one node, "the other node" is one
/// that does not exist, which undo never has to move to).
#[test]
fn undo_tells_a_page_the_killed_move_never_reached() {
    let (_buffer, address, node, pid, start) = own_page();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed-move.json");
    journal(pid, start, address, node, node + 1)
        .save(&path, &key())
        .unwrap();
    match undo_any(&Root::live(), &path, &key()).unwrap() {
        Undone::Pages(_, outcome) => {
            assert_eq!((outcome.attempted, outcome.already_home_pages), (0, 1), "{outcome:?}");
            assert_eq!(outcome.left_alone_pages, 0, "{outcome:?}");
        }
        Undone::Files(..) => panic!("a page journal undone as files"),
    }
}
