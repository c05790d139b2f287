//! `/proc/PID/task/TID/{stat,sched}`: where each thread of a process runs.
//!
//! `stat`'s `processor` field (39th) is the CPU the thread last ran on, the
//! one number that says which node a thread's memory accesses come from.
//! `comm` (2nd field) may hold spaces and parentheses, so fields are counted
//! from the last `)`. `sched` is the scheduler's debug view (`key : value`
//! lines): migrations, and AutoNUMA's preferred node where enabled. Its
//! layout is not ABI, so every field is optional and unknown lines are kept.
//! The allowed CPUs and nodes come from `status`, through
//! [`crate::procfs::status::parse_allowed`].

use std::collections::BTreeMap;

use crate::error::{quote, ParseError};

/// `PF_KTHREAD` in `stat`'s flags (include/linux/sched.h): a kernel thread.
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// The fields of `/proc/PID/task/TID/stat` that placement needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStat {
    pub tid: u32,
    pub comm: String,
    /// `R`, `S`, `D`, `Z`, …
    pub state: char,
    /// The parent process (0 for init and kthreadd); `None` when the
    /// field is missing or not a number.
    pub ppid: Option<u32>,
    /// Kernel `PF_*` flags.
    pub flags: u64,
    pub num_threads: Option<u64>,
    /// Clock ticks after boot the task started: with the PID it identifies a
    /// process even if the PID is reused.
    pub start_time_ticks: Option<u64>,
    /// The CPU the task last ran on (absent on very old kernels).
    pub processor: Option<u32>,
    /// CPU time used, user plus system (`utime` + `stime`), in clock ticks.
    pub cpu_ticks: Option<u64>,
}

impl TaskStat {
    pub fn is_kernel_thread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }
}

pub fn parse_stat(text: &str) -> Result<TaskStat, ParseError> {
    let text = text.trim_end();
    let open = text.find(" (").ok_or_else(|| ParseError::new("no `(comm)` in stat"))?;
    let close = text
        .rfind(')')
        .filter(|&c| c > open)
        .ok_or_else(|| ParseError::new("no `)` closing comm in stat"))?;
    let tid = text[..open]
        .trim()
        .parse()
        .map_err(|_| ParseError::new(format!("`{}` is not a task id", quote(&text[..open]))))?;
    let comm = text[open + 2..close].to_string();
    // Fields after comm, numbered from 3 as in proc(5).
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).copied();
    let number = |n: usize| -> Result<Option<u64>, ParseError> {
        field(n)
            .map(|v| {
                v.parse()
                    .map_err(|_| ParseError::new(format!("stat field {n} `{}` is not a number", quote(v))))
            })
            .transpose()
    };
    let state = field(3)
        .and_then(|s| s.chars().next())
        .ok_or_else(|| ParseError::new("stat ends before the state"))?;
    let flags = number(9)?.ok_or_else(|| ParseError::new("stat ends before the flags"))?;
    let processor = field(39)
        .map(|v| {
            v.parse::<i64>()
                .map_err(|_| ParseError::new(format!("processor `{}` is not a number", quote(v))))
        })
        .transpose()?
        .and_then(|cpu| u32::try_from(cpu).ok());
    Ok(TaskStat {
        tid,
        comm,
        state,
        ppid: field(4).and_then(|v| v.parse().ok()),
        flags,
        num_threads: number(20)?,
        start_time_ticks: number(22)?,
        processor,
        cpu_ticks: number(14)?
            .zip(number(15)?)
            .map(|(user, system)| user.saturating_add(system)),
    })
}

/// `/proc/PID/task/TID/sched`, the parts worth showing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sched {
    /// Times the scheduler moved this thread to another CPU.
    pub nr_migrations: Option<u64>,
    pub nr_switches: Option<u64>,
    pub nr_voluntary_switches: Option<u64>,
    pub nr_involuntary_switches: Option<u64>,
    /// AutoNUMA's preferred node; `None` for -1 (none) or when absent.
    pub numa_preferred_nid: Option<u32>,
    pub numa_pages_migrated: Option<u64>,
    /// `current_node=` on kernels with NUMA balancing statistics.
    pub current_node: Option<u32>,
    /// Every `key : value` line, as written.
    pub fields: BTreeMap<String, String>,
}

pub fn parse_sched(text: &str) -> Result<Sched, ParseError> {
    let mut sched = Sched::default();
    let mut lines = text.lines();
    if !lines.next().is_some_and(|header| header.contains('(')) {
        return Err(ParseError::new("sched does not start with `comm (tid, #threads: n)`"));
    }
    for line in lines {
        if let Some((key, value)) = line.split_once(" : ").or_else(|| line.split_once(':')) {
            let key = key.trim();
            if !key.is_empty() && !key.contains(' ') {
                sched.fields.insert(key.to_string(), value.trim().to_string());
                if sched.fields.len() > crate::read::MAX_KEYS {
                    return Err(crate::read::too_many_keys());
                }
            }
            continue;
        }
        // `current_node=0, numa_group_id=0`
        for pair in line.split(',') {
            if let Some(("current_node", node)) = pair.trim().split_once('=') {
                sched.current_node = node.trim().parse().ok();
            }
        }
    }
    let int = |key: &str| -> Option<i64> {
        let value = sched.fields.get(key)?;
        value
            .parse::<i64>()
            .ok()
            .or_else(|| value.parse::<f64>().ok().map(|v| v as i64))
    };
    let count = |key: &str| int(key).and_then(|v| u64::try_from(v).ok());
    sched.nr_migrations = count("se.nr_migrations");
    sched.nr_switches = count("nr_switches");
    sched.nr_voluntary_switches = count("nr_voluntary_switches");
    sched.nr_involuntary_switches = count("nr_involuntary_switches");
    sched.numa_pages_migrated = count("numa_pages_migrated");
    sched.numa_preferred_nid = int("numa_preferred_nid").and_then(|v| u32::try_from(v).ok());
    Ok(sched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `/proc/28018/task/28060/stat`: a sleeping python3 worker thread on the
    /// development VM. exit_signal (38) is -1 for threads; processor is 0.
    const THREAD: &str = "28060 (python3) S 28015 28015 20322 0 -1 4194368 3 6495 0 0 0 0 4 2 20 0 3 0 158613 168198144 3353 18446744073709551615 93881361108992 93881361109333 140722934082960 0 0 0 0 16781318 0 1 0 0 -1 0 0 0 0 0 0 93881361120688 93881361121304 93881791897600 140722934085878 140722934085931 140722934085931 140722934087631 0\n";

    /// `/proc/2/stat` (kthreadd) on the development VM.
    const KTHREADD: &str = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 30 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0";

    /// `/proc/28018/task/28060/sched` on the development VM (kernel 6.18).
    const SCHED: &str = "\
python3 (28060, #threads: 3)
-------------------------------------------------------------------
se.exec_start                                :       1584103.829435
se.sum_exec_runtime                          :             0.212875
se.nr_migrations                             :                    0
nr_switches                                  :                    1
nr_voluntary_switches                        :                    1
nr_involuntary_switches                      :                    0
policy                                       :                    0
mm->numa_scan_seq                            :                    0
numa_pages_migrated                          :                    0
numa_preferred_nid                           :                   -1
total_numa_faults                            :                    0
current_node=0, numa_group_id=0
numa_faults node=0 task_private=0 task_shared=0 group_private=0 group_shared=0
";

    #[test]
    fn real_thread_stat() {
        let stat = parse_stat(THREAD).unwrap();
        assert_eq!((stat.tid, stat.comm.as_str(), stat.state), (28060, "python3", 'S'));
        assert_eq!(stat.processor, Some(0));
        assert_eq!(stat.num_threads, Some(3));
        assert_eq!(stat.start_time_ticks, Some(158613));
        assert_eq!(stat.ppid, Some(28015));
        assert_eq!(parse_stat(KTHREADD).unwrap().ppid, Some(0));
        // utime and stime (fields 14, 15) are 0 here; cutime 4 and cstime
        // 2 (the children's) are not counted.
        assert_eq!(stat.cpu_ticks, Some(0));
        let busy = THREAD.replace(" 0 0 0 0 4 2 ", " 0 0 7 5 4 2 ");
        assert_eq!(parse_stat(&busy).unwrap().cpu_ticks, Some(12));
        assert!(!stat.is_kernel_thread());
        assert!(parse_stat(KTHREADD).unwrap().is_kernel_thread());
    }

    #[test]
    fn comm_with_spaces_and_parens() {
        let text = THREAD.replace("(python3)", "(a) b (c))");
        let stat = parse_stat(&text).unwrap();
        assert_eq!(stat.comm, "a) b (c)");
        assert_eq!(stat.processor, Some(0));
    }

    #[test]
    fn old_kernel_without_processor() {
        let short: Vec<&str> = THREAD.split_whitespace().take(30).collect();
        let stat = parse_stat(&short.join(" ")).unwrap();
        assert_eq!(stat.processor, None);
    }

    #[test]
    fn malformed_stat() {
        for text in [
            "",
            "28060 python3 S",
            "x (a) S 1 1 1 1 1 1",
            "1 (a)",
            "1 (a) S 1 1 1 1 1 notanumber",
        ] {
            assert!(parse_stat(text).is_err(), "accepted `{text}`");
        }
    }

    #[test]
    fn real_sched() {
        let sched = parse_sched(SCHED).unwrap();
        assert_eq!(sched.nr_migrations, Some(0));
        assert_eq!(sched.nr_switches, Some(1));
        assert_eq!(sched.numa_preferred_nid, None);
        assert_eq!(sched.current_node, Some(0));
        assert_eq!(sched.fields["se.exec_start"], "1584103.829435");
        assert_eq!(sched.fields["mm->numa_scan_seq"], "0");
        let preferred = SCHED.replace("                   -1", "1");
        assert_eq!(parse_sched(&preferred).unwrap().numa_preferred_nid, Some(1));
    }

    #[test]
    fn sched_without_numa_fields_or_header() {
        let plain = SCHED.lines().take(6).collect::<Vec<_>>().join("\n");
        let sched = parse_sched(&plain).unwrap();
        assert_eq!((sched.current_node, sched.numa_pages_migrated), (None, None));
        assert!(parse_sched("").is_err());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = parse_stat(&text);
            let _ = parse_sched(&text);
        }

        #[test]
        fn any_comm(comm in "[ -~]{0,16}") {
            let text = THREAD.replace("(python3)", &format!("({comm})"));
            let stat = parse_stat(&text).unwrap();
            prop_assert_eq!(stat.comm, comm);
            prop_assert_eq!(stat.processor, Some(0));
        }
    }
}
