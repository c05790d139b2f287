//! The undo journal: what was changed, from what, on which machine and
//! boot, sealed with a SHA-256 so a truncated or edited journal is refused
//! rather than half-replayed.

use std::fs;
use std::io::Write;
use std::path::Path;

use numasleuth_kernel::Root;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::apply::ChangeError;

pub const SCHEMA: &str = "numasleuth.journal/1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Kernel file relative to the root, e.g. `proc/irq/30/smp_affinity_list`.
    pub path: String,
    pub before: String,
    pub after: String,
}

/// Pages of one process moved from one node to another: `pages`
/// consecutive base pages from `address`. The process is named by PID and
/// start time, so a reused PID is never mistaken for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageMove {
    pub pid: u32,
    /// `starttime` of /proc/PID/stat, in clock ticks after boot.
    pub pid_start_time: u64,
    pub address: u64,
    pub pages: u64,
    pub page_bytes: u64,
    pub from_node: u32,
    pub to_node: u32,
}

/// IRQ numbers and sysctl values mean nothing on another machine or after
/// a reboot, so a journal is bound to both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineIdentity {
    pub machine_id: Option<String>,
    pub hostname: Option<String>,
    pub boot_id: Option<String>,
}

impl MachineIdentity {
    pub fn read(root: &Root) -> Self {
        let read = |path: &str| {
            root.read(path)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        };
        MachineIdentity {
            machine_id: read("etc/machine-id"),
            hostname: read("proc/sys/kernel/hostname"),
            boot_id: read("proc/sys/kernel/random/boot_id"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub schema: String,
    /// What the changes are, e.g. `irq-affinity`.
    pub kind: String,
    pub machine: MachineIdentity,
    pub created_unix_s: u64,
    pub changes: Vec<FileChange>,
    /// Page moves (kind `pages`). Absent from file-change journals, so
    /// their checksums are what they were before page moves existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub page_moves: Vec<PageMove>,
    /// SHA-256 of this journal serialised with an empty checksum.
    pub checksum: String,
}

impl Journal {
    pub fn new(kind: &str, machine: MachineIdentity, created_unix_s: u64, changes: Vec<FileChange>) -> Self {
        let mut journal = Journal {
            schema: SCHEMA.into(),
            kind: kind.into(),
            machine,
            created_unix_s,
            changes,
            page_moves: Vec::new(),
            checksum: String::new(),
        };
        journal.checksum = journal.digest();
        journal
    }

    /// A journal of page moves, kind [`crate::pages::KIND`].
    pub fn pages(machine: MachineIdentity, created_unix_s: u64, page_moves: Vec<PageMove>) -> Self {
        let mut journal = Journal::new(crate::pages::KIND, machine, created_unix_s, Vec::new());
        journal.page_moves = page_moves;
        journal.checksum = journal.digest();
        journal
    }

    fn digest(&self) -> String {
        let mut unsealed = self.clone();
        unsealed.checksum.clear();
        let bytes = serde_json::to_vec(&unsealed).unwrap_or_default();
        Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Writes the journal durably; refuses to replace an existing file, which
    /// may be the only record of an earlier change.
    pub fn save(&self, path: &Path) -> Result<(), ChangeError> {
        let io = |e: std::io::Error| ChangeError::Journal {
            path: path.display().to_string(),
            why: e.to_string(),
        };
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io)?;
        let text = serde_json::to_string_pretty(self).map_err(|e| ChangeError::Journal {
            path: path.display().to_string(),
            why: e.to_string(),
        })?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)
    }

    pub fn load(path: &Path) -> Result<Self, ChangeError> {
        let bad = |why: String| ChangeError::Journal {
            path: path.display().to_string(),
            why,
        };
        let text = fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let journal: Journal =
            serde_json::from_str(&text).map_err(|e| bad(format!("corrupt journal (not valid JSON): {e}")))?;
        if journal.schema != SCHEMA {
            return Err(bad(format!(
                "unknown journal schema `{}` (expected {SCHEMA})",
                journal.schema
            )));
        }
        if journal.digest() != journal.checksum {
            return Err(bad("corrupt journal: checksum does not match its contents".into()));
        }
        Ok(journal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Journal {
        let machine = MachineIdentity {
            machine_id: Some("abc".into()),
            hostname: Some("host".into()),
            boot_id: Some("boot".into()),
        };
        let change = FileChange {
            path: "proc/irq/30/smp_affinity_list".into(),
            before: "0-3".into(),
            after: "2".into(),
        };
        Journal::new("irq-affinity", machine, 1, vec![change])
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.json");
        sample().save(&path).unwrap();
        assert_eq!(Journal::load(&path).unwrap(), sample());
        assert!(sample().save(&path).is_err(), "must not overwrite");
    }

    #[test]
    fn page_moves_are_sealed_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pages.json");
        let moves = vec![PageMove {
            pid: 42,
            pid_start_time: 777,
            address: 0x4000,
            pages: 2,
            page_bytes: 4096,
            from_node: 1,
            to_node: 0,
        }];
        let journal = Journal::pages(sample().machine, 1, moves);
        journal.save(&path).unwrap();
        assert_eq!(Journal::load(&path).unwrap(), journal);
        let edited = fs::read_to_string(&path)
            .unwrap()
            .replace("\"from_node\": 1", "\"from_node\": 2");
        fs::write(&path, edited).unwrap();
        let err = Journal::load(&path).unwrap_err().to_string();
        assert!(err.contains("checksum does not match"), "{err}");
        // A file-change journal has no `page_moves` key at all.
        let text = serde_json::to_string(&sample()).unwrap();
        assert!(!text.contains("page_moves"), "{text}");
    }

    #[test]
    fn tampering_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.json");
        sample().save(&path).unwrap();
        let edited = fs::read_to_string(&path).unwrap().replace("\"0-3\"", "\"0-1\"");
        fs::write(&path, edited).unwrap();
        let err = Journal::load(&path).unwrap_err().to_string();
        assert!(err.contains("checksum does not match"), "{err}");
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, &text[..text.len() / 2]).unwrap();
        let err = Journal::load(&path).unwrap_err().to_string();
        assert!(err.contains("not valid JSON"), "{err}");
    }
}
