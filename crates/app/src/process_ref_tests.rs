//! The one resolver, on snapshot-like trees: a name becomes its one living
//! process; none, several, a zombie or a missing PID are refused with
//! the lines the commands print.

use numasleuth_kernel::test_support::temp_tree;

use super::*;

fn stat(pid: u32, comm: &str, state: char) -> String {
    format!("{pid} ({comm}) {state} 1 {pid} 1 0 -1 4194304 0 0 0 0 100 50 0 0 20 0 1 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0")
}

/// A tree of processes, each `(pid, comm, state)`.
fn tree(processes: &[(u32, &str, char)]) -> (tempfile::TempDir, Root) {
    let files: Vec<(String, String)> = processes
        .iter()
        .flat_map(|&(pid, comm, state)| {
            [
                (format!("proc/{pid}/stat"), stat(pid, comm, state)),
                (format!("proc/{pid}/comm"), format!("{comm}\n")),
                (format!("proc/{pid}/cmdline"), format!("{comm}\0--flag\0")),
            ]
        })
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    temp_tree(&files)
}

fn resolved(root: &Root, name: &str) -> Result<u32, ResolveError> {
    let mut process = ProcessRef::Name(name.to_string());
    resolve(root, &mut process)?;
    Ok(process.pid())
}

#[test]
fn a_name_becomes_its_one_living_process() {
    let (_dir, root) = tree(&[(10, "postgres", 'S'), (11, "postgres", 'Z'), (12, "nginx", 'R')]);
    assert_eq!(resolved(&root, "postgres").unwrap(), 10, "the zombie is no match");
    assert_eq!(resolved(&root, "nginx").unwrap(), 12);
}

#[test]
fn a_long_name_matches_the_comm_the_kernel_cut() {
    let (_dir, root) = tree(&[(20, "my-long-program", 'S')]);
    assert_eq!(resolved(&root, "my-long-program-name").unwrap(), 20);
    assert_eq!(
        comm_of("abcdefghijklmné"),
        "abcdefghijklmn",
        "cut before a split character"
    );
}

#[test]
fn several_matches_are_listed_and_refused() {
    let (_dir, root) = tree(&[(30, "worker", 'S'), (31, "worker", 'R')]);
    let e = resolved(&root, "worker").unwrap_err();
    assert_eq!(
        e.to_string(),
        "`worker` names 2 processes: 30 (worker --flag), 31 (worker --flag); give one with -p PID"
    );
}

#[test]
fn a_name_a_snapshot_lacks_says_what_it_holds() {
    let (_dir, root) = tree(&[(40, "redis", 'S')]);
    let e = resolved(&root, "postgres").unwrap_err();
    assert_eq!(
        e.to_string(),
        "`postgres` is not in this snapshot; it holds: 40 (redis --flag)"
    );
}

#[test]
fn snapshot_pids_are_resolved_checked_and_kept_once() {
    let (_dir, root) = tree(&[(50, "redis", 'S'), (51, "nginx", 'S')]);
    let given = [
        ProcessRef::Pid(51),
        ProcessRef::Name("redis".into()),
        ProcessRef::Pid(50),
    ];
    assert_eq!(existing_pids(&root, &given).unwrap(), vec![51, 50]);
    let e = existing_pids(&root, &[ProcessRef::Pid(52)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "process 52 is not in this snapshot: the snapshot holds processes 50-51; take one with \
         `numasleuth snapshot -p 52 -o FILE` on the machine it runs on"
    );
}

#[test]
fn too_many_names_are_refused_before_any_lookup() {
    let (_dir, root) = tree(&[]);
    let mut many: Vec<ProcessRef> = (0..=MAX_PROCESSES_NAMED)
        .map(|_| ProcessRef::Name("x".into()))
        .collect();
    let e = resolve_all(&root, many.iter_mut().collect()).unwrap_err();
    assert_eq!(e.to_string(), "65 --pid given; at most 64");
}

#[test]
fn digits_are_pids_and_the_rest_names() {
    let process = |text: &str| text.parse::<ProcessRef>();
    assert_eq!(process("42"), Ok(ProcessRef::Pid(42)));
    assert!(matches!(process("0"), Err(ProcessTextError::Pid(_))));
    assert!(process("99999999999").is_err());
    assert_eq!(process("postgres"), Ok(ProcessRef::Name("postgres".into())));
    assert_eq!(process("kworker-1x"), Ok(ProcessRef::Name("kworker-1x".into())));
    for bad in ["", "a/b", "tab\there", "-1", &"x".repeat(300)] {
        assert!(process(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        process("a/b").unwrap_err().to_string(),
        "`a/b` is not a process id (1 to 4194304) or name (names start with no `-` and hold no `/` or control \
         characters)"
    );
}
