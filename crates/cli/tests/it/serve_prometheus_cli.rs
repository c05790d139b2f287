//! The exporter scraped by a real Prometheus (Debian's `prometheus`
//! package, installed by scripts/test-all): both on 127.0.0.1, Prometheus
//! with a temporary storage directory and a 1 s scrape interval, killed on
//! drop. Fails (never skips) when the `prometheus` binary is missing.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::exporter::{node0_memfree_bytes, Exporter};
use serde_json::Value;

struct Prometheus {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port free right now on 127.0.0.1 (Prometheus cannot be told to pick
/// one and report it).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start_prometheus(target: SocketAddr) -> Prometheus {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  \
             - job_name: numasleuth\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
        .arg(format!("--web.listen-address={addr}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run `prometheus` ({e}): install Debian's prometheus package (scripts/test-all does)")
        });
    Prometheus { child, addr, _dir: dir }
}

/// `GET /api/v1/query?query=...` with the query already URL-encoded.
fn query(prometheus: SocketAddr, encoded: &str) -> Option<Value> {
    let mut stream = TcpStream::connect_timeout(&prometheus, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        stream,
        "GET /api/v1/query?query={encoded} HTTP/1.0\r\nHost: {prometheus}\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    stream.take(16 << 20).read_to_string(&mut reply).ok()?;
    serde_json::from_str(reply.split_once("\r\n\r\n")?.1).ok()
}

fn first_value(answer: &Value) -> Option<f64> {
    answer["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

#[test]
fn a_real_prometheus_scrapes_the_exporter() {
    let exporter = Exporter::start(&["--interval", "1s"]);
    let prometheus = start_prometheus(exporter.addr);
    // Two scrapes: two samples of the scrape-duration gauge in the window.
    let scrapes = "count_over_time(numasleuth_scrape_duration_seconds%5B1m%5D)";
    let deadline = Instant::now() + Duration::from_secs(60);
    // Free memory moves while other work runs; the exported sample was
    // taken somewhere inside this window, so it is compared with the
    // lowest and highest MemFree seen across it.
    let mut kernel = (f64::MAX, 0.0f64);
    let mut note = |v: f64| kernel = (kernel.0.min(v), kernel.1.max(v));
    loop {
        note(node0_memfree_bytes());
        let seen = query(prometheus.addr, scrapes).as_ref().and_then(first_value);
        if seen.is_some_and(|n| n >= 2.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus did not scrape twice within 60 s (last: {seen:?})"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let free = "numasleuth_node_memory_free_bytes%7Bnode%3D%220%22%7D";
    let answer = query(prometheus.addr, free).expect("no answer from the query API");
    assert_eq!(answer["status"], "success", "{answer}");
    assert_eq!(answer["data"]["result"][0]["metric"]["job"], "numasleuth", "{answer}");
    let exported = first_value(&answer).unwrap_or_else(|| panic!("no node 0 free memory in {answer}"));
    note(node0_memfree_bytes());
    assert!(
        exported >= kernel.0 * 0.9 && exported <= kernel.1 * 1.1,
        "Prometheus has {exported}, node0 MemFree was {} to {} meanwhile",
        kernel.0,
        kernel.1
    );
    // The target is healthy in Prometheus's own eyes.
    let up = query(prometheus.addr, "up%7Bjob%3D%22numasleuth%22%7D").and_then(|a| first_value(&a));
    assert_eq!(up, Some(1.0));
}
