//! Undo journals as `undo` reads them: a file that may be truncated,
//! edited, or not JSON at all.
//!
//! The input is written to a temporary file and loaded with
//! [`Journal::load`] (schema and checksum checks included). A journal that
//! loads must be what plain JSON decoding gives, and must survive a save
//! and a load unchanged.

use std::fs;

use numasleuth_change::Journal;

pub fn run(data: &[u8]) {
    let decoded = serde_json::from_slice::<Journal>(data).ok();
    if let Some(journal) = &decoded {
        let text = serde_json::to_string(journal).expect("a decoded journal encodes");
        let again: Journal = serde_json::from_str(&text).expect("an encoded journal decodes");
        assert_eq!(&again, journal, "JSON round trip changed the journal");
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("journal.json");
    fs::write(&path, data).expect("write the journal");
    let Ok(loaded) = Journal::load(&path) else {
        return;
    };
    let fresh = Journal::new(&loaded.kind, loaded.machine.clone(), 0, Vec::new());
    assert_eq!(loaded.schema, fresh.schema, "load accepted another schema");
    assert_eq!(
        decoded.as_ref(),
        Some(&loaded),
        "load accepted what JSON decoding did not give"
    );
    let copy = dir.path().join("saved.json");
    loaded.save(&copy).expect("save a loaded journal");
    assert_eq!(Journal::load(&copy).expect("load a saved journal"), loaded);
}
