//! `sched:sched_migrate_task` records: one thread's move between CPUs.

use serde::Serialize;

use super::{Format, FormatError};

/// Where the fields sit in the tracepoint's raw record (from its `format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigrateLayout {
    pub comm_offset: usize,
    /// Newer kernels (6.10 on) store `comm` as `__data_loc char[]`: a u32
    /// at `comm_offset` holding the string's offset (low 16 bits) and
    /// length (high 16 bits) in the record; older ones a `char[16]`.
    pub comm_data_loc: bool,
    pub pid_offset: usize,
    pub orig_cpu_offset: usize,
    pub dest_cpu_offset: usize,
}

impl MigrateLayout {
    /// Parses tracefs' `events/sched/sched_migrate_task/format`.
    pub fn parse(format: &str) -> Result<Self, FormatError> {
        let format = Format::parse(format);
        let get = |name: &str| format.require("sched_migrate_task", name);
        let comm = get("comm")?;
        Ok(MigrateLayout {
            comm_offset: comm.offset,
            comm_data_loc: comm.data_loc,
            pid_offset: get("pid")?.offset,
            orig_cpu_offset: get("orig_cpu")?.offset,
            dest_cpu_offset: get("dest_cpu")?.offset,
        })
    }

    /// The move in one raw record; `None` when the record is too short.
    pub fn decode(&self, raw: &[u8]) -> Option<Move> {
        let int = |at: usize| -> Option<i32> {
            let bytes = raw.get(at..at.checked_add(4)?)?;
            Some(i32::from_ne_bytes(bytes.try_into().ok()?))
        };
        let comm = if self.comm_data_loc {
            let loc = u32::try_from(int(self.comm_offset)?).ok()?;
            let (at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
            raw.get(at..at + len.min(64)).unwrap_or(&[])
        } else {
            raw.get(self.comm_offset..self.comm_offset.checked_add(16)?)?
        };
        let comm_end = comm.iter().position(|b| *b == 0).unwrap_or(comm.len());
        Some(Move {
            tid: u32::try_from(int(self.pid_offset)?).ok()?,
            comm: String::from_utf8_lossy(&comm[..comm_end]).into_owned(),
            from_cpu: u32::try_from(int(self.orig_cpu_offset)?).ok()?,
            to_cpu: u32::try_from(int(self.dest_cpu_offset)?).ok()?,
        })
    }
}

/// One record: the thread that moved, its name, and the CPUs it left
/// and reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    pub tid: u32,
    pub comm: String,
    pub from_cpu: u32,
    pub to_cpu: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout before 6.10 (`char comm[16]`): tracefs in the QEMU
    /// guest (Debian 6.1.0-48-amd64), captured by
    /// crates/testbed/tests/it/migrations_guest.rs on 2026-11-23.
    pub const FORMAT_6_1: &str = "name: sched_migrate_task
ID: 318
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:1;
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:int orig_cpu;\toffset:32;\tsize:4;\tsigned:1;
\tfield:int dest_cpu;\toffset:36;\tsize:4;\tsigned:1;

print fmt: \"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu
";

    /// tracefs `events/sched/sched_migrate_task/format` on this project's
    /// VM (6.18.44 kernel), captured 2026-11-23: `comm` is `__data_loc`.
    pub const FORMAT_6_18: &str = "name: sched_migrate_task
ID: 371
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:__data_loc char[] comm;\toffset:8;\tsize:4;\tsigned:0;
\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;
\tfield:int prio;\toffset:16;\tsize:4;\tsigned:1;
\tfield:int orig_cpu;\toffset:20;\tsize:4;\tsigned:1;
\tfield:int dest_cpu;\toffset:24;\tsize:4;\tsigned:1;

print fmt: \"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", __get_str(comm), REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu
";

    #[test]
    fn data_loc_comm_of_6_18() {
        let layout = MigrateLayout::parse(FORMAT_6_18).unwrap();
        assert!(layout.comm_data_loc);
        let mut raw = vec![0u8; 28];
        raw.extend_from_slice(b"hopper\0");
        let loc: u32 = 28 | (7 << 16);
        raw[8..12].copy_from_slice(&loc.to_ne_bytes());
        raw[12..16].copy_from_slice(&77i32.to_ne_bytes());
        raw[20..24].copy_from_slice(&0i32.to_ne_bytes());
        raw[24..28].copy_from_slice(&1i32.to_ne_bytes());
        let m = layout.decode(&raw).unwrap();
        assert_eq!((m.tid, m.comm.as_str(), m.from_cpu, m.to_cpu), (77, "hopper", 0, 1));
        // A location pointing past the record: no name, the move still counts.
        raw[8..12].copy_from_slice(&(1000u32 | (7 << 16)).to_ne_bytes());
        assert_eq!(layout.decode(&raw).unwrap().comm, "");
    }

    #[test]
    fn layout_from_the_6_1_format_decodes_a_record() {
        let layout = MigrateLayout::parse(FORMAT_6_1).unwrap();
        assert_eq!(
            layout,
            MigrateLayout {
                comm_offset: 8,
                comm_data_loc: false,
                pid_offset: 24,
                orig_cpu_offset: 32,
                dest_cpu_offset: 36
            }
        );
        let mut raw = vec![0u8; 40];
        raw[8..14].copy_from_slice(b"worker");
        raw[24..28].copy_from_slice(&1234i32.to_ne_bytes());
        raw[32..36].copy_from_slice(&1i32.to_ne_bytes());
        raw[36..40].copy_from_slice(&3i32.to_ne_bytes());
        assert_eq!(
            layout.decode(&raw),
            Some(Move {
                tid: 1234,
                comm: "worker".into(),
                from_cpu: 1,
                to_cpu: 3
            })
        );
        assert_eq!(layout.decode(&raw[..39]), None, "truncated record");
    }

    #[test]
    fn a_format_without_the_fields_is_an_error() {
        let err = MigrateLayout::parse("name: x\nformat:\n\tfield:int pid;\toffset:24;\tsize:4;\n").unwrap_err();
        assert_eq!(
            err,
            FormatError::MissingField {
                event: "sched_migrate_task".into(),
                field: "comm".into()
            }
        );
        assert!(MigrateLayout::parse("").is_err());
    }

    #[test]
    fn arbitrary_records_never_panic() {
        let layout = MigrateLayout::parse(FORMAT_6_1).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..200usize {
            let raw: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed as u8
                })
                .collect();
            let _ = layout.decode(&raw);
            let _ = MigrateLayout::parse(FORMAT_6_18).unwrap().decode(&raw);
        }
        let huge = MigrateLayout {
            comm_offset: usize::MAX - 3,
            comm_data_loc: true,
            pid_offset: usize::MAX,
            orig_cpu_offset: 0,
            dest_cpu_offset: 0,
        };
        assert_eq!(huge.decode(&[0; 64]), None);
    }
}
