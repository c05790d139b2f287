//! `numasleuth serve` on this machine: pinned metric names, the cached
//! `--pid` figures, clean SIGTERM, refusals of a busy port and a bad
//! address, and `--textfile`.

use crate::common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::exporter::{get, get_accepting, node0_memfree_bytes, sample, Exporter, PROMETHEUS_ACCEPT};
use common::numasleuth;

#[test]
fn metrics_have_the_pinned_names_and_real_values() {
    let me = std::process::id().to_string();
    let exporter = Exporter::start(&["--pid", &me, "--interval", "1s"]);
    let before = node0_memfree_bytes();
    let (status, text) = get(exporter.addr, "/metrics").expect("no answer");
    let after = node0_memfree_bytes();
    assert_eq!(status, 200);
    for series in [
        "numasleuth_node_memory_total_bytes{node=\"0\"}",
        "numasleuth_node_numa_hit_total{node=\"0\"}",
        "numasleuth_node_numa_miss_total{node=\"0\"}",
        "numasleuth_node_numa_foreign_total{node=\"0\"}",
        "numasleuth_reclaim_scan_total{kind=\"kswapd\"}",
        "numasleuth_reclaim_scan_total{kind=\"direct\"}",
        "numasleuth_scrape_duration_seconds",
    ] {
        assert!(sample(&text, series).is_some(), "no {series} in\n{text}");
    }
    assert!(text.contains("numasleuth_node_watermark_bytes{node=\"0\",zone=\"Normal\",level=\"low\"}"));
    let free = sample(&text, "numasleuth_node_memory_free_bytes{node=\"0\"}").unwrap();
    // Free memory moves while other work runs: within 10% of MemFree as
    // read just before or just after the scrape.
    assert!(
        free >= before.min(after) * 0.9 && free <= before.max(after) * 1.1,
        "exported {free}, node0 MemFree {before} before and {after} after"
    );
    // The test process itself, from the cached --pid refresh.
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
    let ratio = format!(
        "numasleuth_process_remote_ratio{{pid=\"{me}\",comm=\"{}\"}}",
        comm.trim()
    );
    let value = sample(&text, &ratio).unwrap_or_else(|| panic!("no {ratio} in\n{text}"));
    // One node here: nothing can be remote.
    assert_eq!(value, 0.0);
    assert!(text.contains(&format!("numasleuth_process_memory_bytes{{pid=\"{me}\"")));
    assert_eq!(get(exporter.addr, "/nope").map(|r| r.0), Some(404));
}

#[test]
fn openmetrics_goes_to_a_scraper_that_asks_for_it_and_the_004_text_to_the_rest() {
    let exporter = Exporter::start(&[]);
    let content_type = |head: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix("Content-Type: "))
            .map(str::to_string)
    };
    let (status, head, text) = get_accepting(exporter.addr, "/metrics", Some(PROMETHEUS_ACCEPT)).expect("no answer");
    assert_eq!(status, 200);
    assert_eq!(
        content_type(&head).as_deref(),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(
        text.contains("# TYPE numasleuth_build info\n") && text.ends_with("# EOF\n"),
        "{text}"
    );
    // curl sends `*/*`; no Accept at all is the same.
    for accept in [Some("*/*"), None] {
        let (status, head, text) = get_accepting(exporter.addr, "/metrics", accept).expect("no answer");
        assert_eq!(status, 200);
        assert_eq!(
            content_type(&head).as_deref(),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        assert!(text.contains("# TYPE numasleuth_build_info gauge\n"), "{text}");
        assert!(!text.contains("# EOF"), "{text}");
        assert!(
            sample(&text, "numasleuth_node_memory_free_bytes{node=\"0\"}").is_some(),
            "{text}"
        );
    }
}

#[test]
fn sigterm_stops_it_cleanly_with_exit_0() {
    let mut exporter = Exporter::start(&[]);
    assert_eq!(get(exporter.addr, "/metrics").map(|r| r.0), Some(200));
    // SAFETY: kill() on the child we started and have not reaped.
    assert_eq!(unsafe { libc::kill(exporter.pid() as i32, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = exporter.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    assert!(
        get(exporter.addr, "/metrics").is_none(),
        "still answering after SIGTERM"
    );
}

#[test]
fn a_busy_port_or_a_bad_address_is_one_line_and_exit_2() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let cases = [
        format!("127.0.0.1:{port}"),
        "localhost:9464".to_string(),
        "127.0.0.1".to_string(),
        "300.1.1.1:80".to_string(),
        // A valid address this machine does not have.
        "192.0.2.1:9464".to_string(),
    ];
    for listen in &cases {
        let output = numasleuth()
            .args(["serve", "--listen", listen])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{listen}: {stderr}");
        assert!(stderr.starts_with("numasleuth: error:"), "{listen}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{listen}: {stderr}");
    }
}

#[test]
fn textfile_is_written_atomically_and_bad_dirs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = numasleuth()
        .args(["serve", "--once", "--textfile"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["numasleuth.prom"], "no temporary file left behind");
    let text = std::fs::read_to_string(dir.path().join("numasleuth.prom")).unwrap();
    assert!(sample(&text, "numasleuth_node_memory_free_bytes{node=\"0\"}").is_some());
    // The Prometheus text 0.0.4, which node_exporter reads
    // (serve_textfile_cli.rs has node_exporter read it).
    assert!(!text.contains("# EOF"), "{text}");
    let file = dir.path().join("numasleuth.prom");
    let missing = dir.path().join("missing");
    // /proc is not writable even for root.
    for bad in [missing.as_path(), file.as_path(), std::path::Path::new("/proc")] {
        let output = numasleuth()
            .args(["serve", "--once", "--textfile"])
            .arg(bad)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(
            stderr.starts_with("numasleuth: error:") && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
}

/// A directory every user can write is refused (sticky or not); one its
/// group can write is written, with a warning.
#[test]
fn textfile_in_a_directory_others_can_write_is_refused_or_warned() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let run = |mode: u32| {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        numasleuth()
            .args(["serve", "--once", "--textfile"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    for mode in [0o777, 0o1777, 0o757] {
        let output = run(mode);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{mode:o}: {stderr}");
        assert!(stderr.contains("can be written by every user"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!dir.path().join("numasleuth.prom").exists());
    }
    let output = run(0o775);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: --textfile") && stderr.contains("by its group"),
        "{stderr}"
    );
    assert!(dir.path().join("numasleuth.prom").exists());
}

#[test]
fn textfile_every_interval_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("numasleuth"))
        .args(["serve", "--interval", "100ms", "--textfile"])
        .arg(dir.path())
        .spawn()
        .unwrap();
    let file = dir.path().join("numasleuth.prom");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !file.exists() {
        assert!(Instant::now() < deadline, "never wrote {file:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill() on the child we started and have not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

fn textfile_of(root: &std::path::Path) -> String {
    let out = tempfile::tempdir().unwrap();
    let output = numasleuth()
        .arg("--root")
        .arg(root)
        .args(["serve", "--once", "--textfile"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::read_to_string(out.path().join("numasleuth.prom")).unwrap()
}

#[test]
fn a_kernel_without_numa_is_node_0_and_broken_files_are_collect_errors() {
    let dir = tempfile::tempdir().unwrap();
    let zone = "Node 0, zone   Normal\n  pages free     200000\n        min      1000\n        low      1250\n\
                \x20       high     1500\n        spanned  262144\n        present  262144\n        managed  250000\n";
    common::write_tree(
        dir.path(),
        &[
            ("proc/zoneinfo".to_string(), zone.to_string()),
            (
                "proc/meminfo".to_string(),
                "MemTotal: 2097152 kB\nMemFree: 1048576 kB\n".to_string(),
            ),
            (
                "proc/vmstat".to_string(),
                "pgscan_kswapd 7\npgscan_direct 0\n".to_string(),
            ),
        ],
    );
    // Without a recorded page size, watermarks (in pages) get no bytes.
    let text = textfile_of(dir.path());
    assert!(!text.contains("numasleuth_node_watermark_bytes"), "{text}");
    std::fs::write(
        dir.path().join("numasleuth-snapshot.json"),
        r#"{"base_page_bytes": 4096}"#,
    )
    .unwrap();
    let text = textfile_of(dir.path());
    assert_eq!(
        sample(&text, "numasleuth_node_memory_free_bytes{node=\"0\"}"),
        Some(1073741824.0)
    );
    assert_eq!(
        sample(&text, "numasleuth_reclaim_scan_total{kind=\"kswapd\"}"),
        Some(7.0)
    );
    assert!(text.contains("numasleuth_node_watermark_bytes{node=\"0\",zone=\"Normal\",level=\"low\"} 5120000"));
    // Truncated zoneinfo and garbage vmstat: the exporter keeps going and
    // says what it could not read.
    std::fs::write(dir.path().join("proc/zoneinfo"), "Node 0, zone").unwrap();
    std::fs::write(dir.path().join("proc/vmstat"), "pgscan_kswapd x\n").unwrap();
    let text = textfile_of(dir.path());
    assert_eq!(sample(&text, "numasleuth_collect_errors{source=\"vmstat\"}"), Some(1.0));
    assert!(!text.contains("numasleuth_reclaim_scan_total{"));
}
