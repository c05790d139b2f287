//! Choosing CPUs, nodes and threads the same way in every measuring
//! command: `-C, --cpus LIST` and `-N, --nodes LIST` in numactl syntax or
//! the strided `0-30:2` numasleuth prints, and `--threads N` a count.
//! Real runs with tiny sizes; structure only, never timings.

use crate::common;

use serde_json::Value;

const TINY_MEM: [&str; 6] = ["--size", "1M", "--samples", "2", "--sample-ms", "1ms"];
const TINY_LAB: [&str; 4] = ["--samples", "1", "--sample-ms", "2ms"];

fn json(args: &[&str], tiny: &[&str]) -> Value {
    let all: Vec<&str> = args.iter().chain(tiny).copied().chain(["--json"]).collect();
    common::json(&all)
}

/// A one-line usage error (exit 2) that names what was wrong.
fn refused(args: &[&str]) -> String {
    let stderr = common::exit_2_stderr(args);
    assert!(stderr.starts_with("numasleuth: error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        stderr
            .lines()
            .skip(1)
            .all(|l| l.is_empty() || l.starts_with("Usage") || l.starts_with("For more")),
        "{stderr}"
    );
    first.to_string()
}

/// The CPUs this test may use, as the tool sees them.
fn allowed() -> Vec<u32> {
    let doc = json(&["lab", "locks", "--locks", "atomic", "--threads", "1"], &TINY_LAB);
    let cpus = doc["run"]["allowed_cpus"].as_array().unwrap();
    cpus.iter().map(|c| c.as_u64().unwrap() as u32).collect()
}

fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn mem_chases_from_the_listed_cpu() {
    for cpu in allowed() {
        let text = cpu.to_string();
        let doc = json(&["mem", "latency", "-C", &text], &TINY_MEM);
        assert_eq!(ids(&doc["latency_ns"]["cpus"]), vec![cpu], "{}", doc["latency_ns"]);
        // The old name still works.
        let doc = json(&["mem", "latency", "--sizes", "64K", "--cpu", &text], &TINY_MEM);
        assert_eq!(doc["latency_sweep"]["cpu"], cpu);
    }
}

#[test]
fn a_sweep_says_which_listed_cpu_chases() {
    let cpus = allowed();
    let all = format!("{}-{}", cpus[0], cpus.last().unwrap());
    let doc = json(&["mem", "latency", "--sizes", "64K", "-C", &all], &TINY_MEM);
    assert_eq!(doc["latency_sweep"]["cpu"], cpus[0]);
    let warned = doc["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .starts_with("the sweep chases from one CPU, the first of -C")
    });
    // One allowed CPU is a list of one, and nothing to warn about.
    assert_eq!(warned, cpus.len() > 1, "{}", doc["warnings"]);
}

#[test]
fn mem_bandwidth_streams_from_the_listed_cpus_only() {
    let cpus = allowed();
    let last = cpus.last().unwrap().to_string();
    let doc = json(&["mem", "bandwidth", "--cpus", &last], &TINY_MEM);
    assert_eq!(
        doc["bandwidth_bytes_per_sec"]["cpus"],
        serde_json::json!([[cpus.last().unwrap()]])
    );
    // A strided list names every allowed CPU here (0-1:1 style lists too).
    let all = format!("{}-{}:1", cpus[0], cpus.last().unwrap());
    let doc = json(&["mem", "bandwidth", "-C", &all], &TINY_MEM);
    let streamed: Vec<u32> = doc["bandwidth_bytes_per_sec"]["cpus"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as u32)
        .collect();
    assert_eq!(streamed, cpus);
}

#[test]
fn lab_runs_on_the_listed_cpus() {
    let cpu = *allowed().last().unwrap();
    let text = cpu.to_string();
    let doc = json(&["lab", "locks", "--locks", "atomic", "-C", &text], &TINY_LAB);
    assert_eq!(ids(&doc["run"]["allowed_cpus"]), vec![cpu]);
    for row in doc["results"].as_array().unwrap() {
        assert!(ids(&row["cpus"]).iter().all(|&c| c == cpu), "{row}");
    }
    // The default sweep ends at the number of listed CPUs: one here.
    let threads: Vec<u64> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert!(threads.iter().all(|&t| t == 1), "{threads:?}");
    let doc = json(&["lab", "false-sharing", "--cpus", &text, "--threads", "1"], &TINY_LAB);
    for row in doc["results"].as_array().unwrap() {
        assert_eq!(ids(&row["cpus"]), vec![cpu], "{row}");
    }
}

#[test]
fn threads_is_one_count_everywhere() {
    let doc = json(&["lab", "locks", "--locks", "atomic", "--threads", "1"], &TINY_LAB);
    let results = doc["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["threads"] == 1), "{results:?}");
    let doc = json(&["mem", "bandwidth", "--threads", "1"], &TINY_MEM);
    assert!(doc["bandwidth_bytes_per_sec"]["cpus"][0].as_array().unwrap().len() == 1);
    // A list is a sweep, and says so.
    let line = refused(&["lab", "locks", "--threads", "1,2"]);
    assert!(line.contains("--thread-sweep 1,2"), "{line}");
    let line = refused(&["mem", "--threads", "1,2"]);
    assert!(line.contains("is not a thread count"), "{line}");
    let line = refused(&["lab", "locks", "--threads", "1", "--thread-sweep", "1"]);
    assert!(line.contains("cannot be used with"), "{line}");
}

#[test]
fn strided_lists_are_accepted_and_bad_lists_refused() {
    // `0-0:2` is the strided form of CPU 0 alone, which every test machine
    // need not allow; the parse is what counts here, so a CPU outside the
    // mask must fail on the mask, not on the syntax.
    let line = refused(&["mem", "latency", "-C", "4000-4094:2"]);
    assert!(line.contains("CPUs 4000-4094:2 are outside the CPUs"), "{line}");
    let line = refused(&["c2c", "-C", "4000-4094:2"]);
    assert!(line.contains("outside"), "{line}");
    let line = refused(&["mem", "-N", "1000-1022:2", "latency"]);
    assert!(line.contains("does not exist"), "{line}");
    for bad in ["0-3:0", "3-1", "x", "", "1,,2", "0-65536", "5:2", "0-3:2:2"] {
        for command in [
            &["mem", "latency", "-C"][..],
            &["lab", "locks", "-C"],
            &["c2c", "-C"],
            &["mem", "-N"],
        ] {
            let args: Vec<&str> = command.iter().copied().chain([bad]).collect();
            let line = refused(&args);
            assert!(line.contains("invalid value"), "{args:?}: {line}");
        }
    }
    let long = vec!["1"; 20_000].join(",");
    let line = refused(&["mem", "latency", "-C", &long]);
    assert!(line.contains("at most 32768"), "{}", &line[..line.len().min(300)]);
}
