//! The per-page answers a snapshot keeps for a captured process: their
//! format is `numasleuth_parse::pages_capture`; keeping them in a
//! recording and taking them back from a snapshot are here.

pub use numasleuth_parse::pages_capture::*;

use crate::error::ReadError;
use crate::pages::Residency;
use crate::root::Root;

/// Keeps the answers when `root` records a snapshot.
pub fn record(root: &Root, pid: u32, start: u64, states: &[Residency]) {
    if root.is_recording() {
        root.record_made(&path(pid, start), format(states).into_bytes());
    }
}

/// The answers a snapshot kept for this range; `Ok(None)` when it kept
/// none (taken without `-p`, or by an older numasleuth).
pub fn replay(root: &Root, pid: u32, start: u64, pages: usize) -> Result<Option<Vec<Residency>>, ReadError> {
    let relative = path(pid, start);
    let Some(text) = root.read_optional(&relative)? else {
        return Ok(None);
    };
    parse(&text, pages)
        .map(Some)
        .map_err(|why| ReadError::malformed(&relative, why.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_recording_root_keeps_answers_and_a_replay_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let plain = Root::directory(dir.path()).unwrap();
        record(&plain, 7, 0x1000, &[Residency::Node(1)]);
        assert_eq!(replay(&plain, 7, 0x1000, 1).unwrap(), None);
        let (recording_root, recording) = Root::directory(dir.path()).unwrap().recording();
        record(&recording_root, 7, 0x1000, &[Residency::Node(1)]);
        let kept = recording.lock().unwrap().files[&path(7, 0x1000)].clone();
        std::fs::create_dir_all(dir.path().join("numasleuth/pages/7")).unwrap();
        std::fs::write(dir.path().join(path(7, 0x1000)), kept).unwrap();
        let replayed = Root::directory(dir.path()).unwrap();
        assert_eq!(replay(&replayed, 7, 0x1000, 1).unwrap(), Some(vec![Residency::Node(1)]));
        assert!(replay(&replayed, 7, 0x1000, 2).is_err());
    }
}
