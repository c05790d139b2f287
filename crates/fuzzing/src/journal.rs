//! Undo journals as `undo` reads them: a file that may be truncated,
//! edited, forged, or not JSON at all.
//!
//! The input goes through [`Journal::from_json`] (structure and the closed
//! set of targets) and, written to a private temporary file, through
//! [`Journal::load`] (file checks, structure, seal). Whatever passes the
//! structural checks must seal, save and load back unchanged, and must not
//! verify under another key.

use std::fs;

use numasleuth_change::{Journal, JournalKey};

pub fn run(data: &[u8]) {
    let key = JournalKey::from_bytes([7; 32]);
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("journal.json");
    fs::write(&path, data).expect("write the journal");
    // Forged input almost never carries a valid seal; it must be refused
    // without panicking, whatever it holds.
    let _ = Journal::load(&path, &key);

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut journal) = Journal::from_json(text) else {
        return;
    };
    journal
        .validate()
        .expect("from_json returned a journal validate refuses");
    let copy = dir.path().join("sealed.json");
    journal
        .save(&copy, &key)
        .expect("a valid journal saves under a valid key");
    assert_eq!(Journal::load(&copy, &key).expect("load a sealed journal"), journal);
    assert!(
        Journal::load(&copy, &JournalKey::from_bytes([8; 32])).is_err(),
        "a journal verified under another key"
    );
}
