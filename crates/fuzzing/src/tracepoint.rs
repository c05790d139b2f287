//! `sched_migrate_task` records (`migrations`): a tracefs `format` text,
//! a NUL, then one raw record. Never a panic; a decoded move only from a
//! record long enough for every field, with a bounded name.

use numasleuth_probe::migrate::MigrateLayout;

pub fn run(data: &[u8]) {
    let (format, record) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(layout) = MigrateLayout::parse(&String::from_utf8_lossy(format)) else {
        return;
    };
    for offset in [
        layout.comm_offset,
        layout.pid_offset,
        layout.orig_cpu_offset,
        layout.dest_cpu_offset,
    ] {
        assert!(offset < 4096, "offset {offset} kept: {layout:?}");
    }
    if let Some(found) = layout.decode(record) {
        let end = [layout.pid_offset, layout.orig_cpu_offset, layout.dest_cpu_offset]
            .into_iter()
            .max()
            .unwrap_or(0)
            + 4;
        assert!(record.len() >= end, "decoded past the record: {layout:?} {found:?}");
        assert!(found.comm.chars().count() <= 64, "name too long: {found:?}");
    }
}
