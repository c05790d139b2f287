//! A process's mappings and the ELF objects they place, from one read of
//! `/proc/PID/maps`: for the commands that name an address both by the
//! mapping it lies in and by the object's sections and symbols (`hotpages`,
//! `hotlines`), so the maps are read once and both answers agree.

use numasleuth_kernel::procfs::maps::{self, CapHit, Mapping, MapsCap};
use numasleuth_kernel::procfs::process::ProcessError;
use numasleuth_kernel::Root;

use crate::process::ProcessObjects;

/// What one capped read of a process's maps gave.
#[derive(Debug)]
pub struct MappedObjects {
    /// Every mapping read, in address order; none when the read failed.
    pub mappings: Vec<Mapping>,
    /// The cap that ended the read early, if one did: the mappings past
    /// it are neither kept nor placed.
    pub cap_hit: Option<CapHit>,
    /// The objects placed from the same mappings, or why the maps could
    /// not be read.
    pub objects: Result<ProcessObjects, ProcessError>,
}

impl MappedObjects {
    /// Reads `proc/PID/maps` once, keeping at most [`MapsCap::KEPT`].
    pub fn read(root: &Root, pid: u32) -> Self {
        Self::read_capped(root, pid, MapsCap::KEPT)
    }

    /// What a person should know of the read, in the caller's words: the
    /// cap hit ("{hit}: {past_cap}") and an unreadable maps ("{unread}:
    /// {error}").
    pub fn notes(&self, past_cap: &str, unread: &str) -> Vec<String> {
        let cap = self.cap_hit.map(|hit| format!("{hit}: {past_cap}"));
        let error = self.objects.as_ref().err().map(|e| format!("{unread}: {e}"));
        cap.into_iter().chain(error).collect()
    }

    fn read_capped(root: &Root, pid: u32, cap: MapsCap) -> Self {
        match maps::read(root, pid, cap) {
            Ok(read) => MappedObjects {
                objects: Ok(ProcessObjects::place(root, pid, &read.mappings)),
                mappings: read.mappings,
                cap_hit: read.cap_hit,
            },
            Err(e) => MappedObjects {
                mappings: Vec::new(),
                cap_hit: None,
                objects: Err(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree holding only `proc/7/maps`.
    fn tree(maps: &str) -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/7")).unwrap();
        std::fs::write(dir.path().join("proc/7/maps"), maps).unwrap();
        let root = Root::directory(dir.path()).unwrap();
        (dir, root)
    }

    const ANON: &str = "\
7f0000000000-7f0000002000 rw-p 00000000 00:00 0
7f0000003000-7f0000004000 rw-p 00000000 00:00 0
7f0000005000-7f0000006000 rw-p 00000000 00:00 0 [heap]
";

    #[test]
    fn the_cap_keeps_the_first_mappings_and_says_so() {
        let (_dir, root) = tree(ANON);
        let all = MappedObjects::read(&root, 7);
        assert_eq!(all.mappings.len(), 3);
        assert_eq!(all.cap_hit, None);
        assert!(all.objects.as_ref().unwrap().objects.is_empty());
        let cap = MapsCap {
            mappings: 2,
            bytes: u64::MAX,
        };
        let capped = MappedObjects::read_capped(&root, 7, cap);
        let starts: Vec<u64> = capped.mappings.iter().map(|m| m.start).collect();
        assert_eq!(starts, [0x7f00_0000_0000, 0x7f00_0000_3000]);
        assert_eq!(capped.cap_hit, Some(CapHit::Mappings { pid: 7, cap: 2 }));
        assert!(capped.objects.is_ok());
        assert_eq!(
            capped.notes("later ones are not named", "not named"),
            ["/proc/7/maps has more than 2 mappings: later ones are not named"]
        );
        assert!(all.notes("past", "unread").is_empty());
    }

    #[test]
    fn a_process_gone_leaves_no_mappings_and_says_why() {
        let (_dir, root) = tree(ANON);
        let gone = MappedObjects::read(&root, 8);
        assert!(gone.mappings.is_empty() && gone.cap_hit.is_none());
        let notes = gone.notes("past", "regions not named");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("regions not named: "), "{notes:?}");
        let err = gone.objects.unwrap_err();
        assert!(
            matches!(
                err,
                ProcessError::NoSuchProcess { pid: 8, .. } | ProcessError::Exited { pid: 8 }
            ),
            "{err}"
        );
    }

    #[test]
    fn this_process_places_its_own_program_from_the_same_mappings() {
        let mapped = MappedObjects::read(&Root::live(), std::process::id());
        let objects = mapped.objects.unwrap();
        let program = objects.main_object().expect("the test binary is placed");
        assert!(
            mapped
                .mappings
                .iter()
                .any(|m| m.start <= program.mapped.start && program.mapped.start < m.end),
            "{:?}",
            program.mapped
        );
    }
}
