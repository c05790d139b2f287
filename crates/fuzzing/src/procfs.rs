//! The smaller `/proc` parsers behind one target, chosen by the first byte
//! of the input (the rest is the file), so one 20-second CI smoke covers
//! them all. numa_maps, zoneinfo, interrupts and maps have targets of their
//! own because their formats are the richest.

use numasleuth_kernel::cgroup;
use numasleuth_kernel::procfs::{cmdline, cpuinfo, meminfo, settings, statm, status, syscall, task};

use crate::{select, text, Choice};

type TextParser = fn(&str);

/// Selector byte → parser. Other bytes pick by `byte % len`.
pub const PARSERS: [Choice<TextParser>; 12] = [
    (b'c', cpuinfo),
    (b'm', meminfo),
    (b's', status),
    (b't', stat),
    (b'h', sched),
    (b'w', swaps),
    (b'e', choice),
    (b'g', mounts),
    (b'v', cgroup_path),
    (b'l', cmdline),
    (b'r', statm),
    (b'y', stack_pointer),
];

pub fn run(data: &[u8]) {
    let Some((parse, rest)) = select(data, &PARSERS) else {
        return;
    };
    parse(&text(rest));
}

fn cpuinfo(text: &str) {
    let info = cpuinfo::parse(text);
    assert!(info.processors <= text.lines().count());
}

fn meminfo(text: &str) {
    if let Ok(info) = meminfo::parse(text) {
        assert!(!info.values.is_empty());
        let _ = (info.total_bytes(), info.free_bytes(), info.hugetlb_bytes());
    }
}

fn status(text: &str) {
    let _ = status::parse_allowed(text);
}

fn stat(text: &str) {
    if let Ok(stat) = task::parse_stat(text) {
        let _ = stat.is_kernel_thread();
        assert!(
            text.contains(&format!("({})", stat.comm)),
            "comm `{}` is not in the text",
            stat.comm
        );
    }
}

fn cmdline(text: &str) {
    if let Some(line) = cmdline::parse(text) {
        assert!(
            line.chars().count() <= cmdline::MAX_CMDLINE_CHARS + 1,
            "not cut: {} chars",
            line.len()
        );
    }
}

fn statm(text: &str) {
    if let Ok(statm) = statm::parse(text) {
        assert!(text.contains(&statm.resident_pages.to_string()));
    }
}

fn sched(text: &str) {
    let _ = task::parse_sched(text);
}

fn swaps(text: &str) {
    if let Ok(areas) = settings::parse_swaps(text) {
        assert!(areas < text.lines().count().max(1));
    }
}

fn choice(text: &str) {
    if let Ok(chosen) = settings::parse_choice(text) {
        assert!(text.contains(&format!("[{chosen}]")));
    }
}

fn mounts(text: &str) {
    let mounts = cgroup::parse_mounts(text);
    assert!(mounts.len() <= text.lines().count());
}

fn cgroup_path(text: &str) {
    if let Some(path) = cgroup::parse_v2_path(text) {
        assert!(text.contains(&path));
    }
}

/// `/proc/PID/task/TID/syscall`: a stack pointer only from a line of 3 or
/// 9 fields, never from `running`.
fn stack_pointer(text: &str) {
    if let Ok(Some(_)) = syscall::parse_stack_pointer(text) {
        let fields = text.split_whitespace().count();
        assert!(fields == 3 || fields == 9, "{fields} fields gave a stack pointer");
    }
}
