//! Tracepoint records: a tracefs `format` text, a NUL, then one raw
//! record, decoded as `sched_migrate_task` (`migrations`) and as
//! `sys_enter_open*` (`readers`). Never a panic; a decoded move only from
//! a record long enough for every field, with a bounded name; an open's
//! name pointer only from inside the record.

use numasleuth_kernel::tracefs::migrate::MigrateLayout;
use numasleuth_kernel::tracefs::open::Layout;

pub fn run(data: &[u8]) {
    let (format, record) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    open_record(&String::from_utf8_lossy(format), record);
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

fn open_record(format: &str, record: &[u8]) {
    let Ok(layout) = Layout::parse(format) else {
        return;
    };
    if let Some((pointer, _)) = layout.decode(record) {
        let at = layout.filename_offset;
        assert!(record.len() >= at + 8, "decoded past the record: {layout:?}");
        assert_eq!(
            pointer.to_ne_bytes(),
            record[at..at + 8],
            "pointer from the wrong bytes"
        );
    }
}
