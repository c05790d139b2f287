//! `serve --textfile` read by the programs that read it: Debian's
//! `prometheus-node-exporter` (1.5) with only its textfile collector, on
//! 127.0.0.1, and `promtool check metrics` (both installed by
//! scripts/test-all). node_exporter parses the Prometheus text format
//! 0.0.4 only; an OpenMetrics file made it report
//! `node_textfile_scrape_error 1` and drop every series (issue 36). Fails
//! (never skips) when either program is missing.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::exporter::sample;
use common::numasleuth;

/// node_exporter, killed and reaped on drop whatever the test did.
struct NodeExporter {
    child: Child,
    addr: SocketAddr,
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_node_exporter(textfile_dir: &Path) -> NodeExporter {
    // node_exporter cannot be told to pick a port and report it.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let child = Command::new("prometheus-node-exporter")
        .arg(format!("--web.listen-address={addr}"))
        .arg("--collector.textfile.directory")
        .arg(textfile_dir)
        .args(["--collector.disable-defaults", "--collector.textfile"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `prometheus-node-exporter` ({e}): install Debian's prometheus-node-exporter package \
                 (scripts/test-all does)"
            )
        });
    NodeExporter { child, addr }
}

/// node_exporter's /metrics, once it answers (it may still be starting).
fn scrape(node_exporter: &mut NodeExporter) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(body) = get_metrics(node_exporter.addr) {
            return body;
        }
        if let Some(status) = node_exporter.child.try_wait().unwrap() {
            panic!("node_exporter exited with {status} before answering");
        }
        assert!(Instant::now() < deadline, "node_exporter did not answer within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn get_metrics(addr: SocketAddr) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.take(64 << 20).read_to_string(&mut reply).ok()?;
    // Go answers an HTTP/1.0 request as HTTP/1.0.
    let ok = reply.split_whitespace().nth(1) == Some("200");
    ok.then(|| reply.split_once("\r\n\r\n").map(|(_, body)| body.to_string()))?
}

#[test]
fn node_exporter_and_promtool_accept_the_textfile() {
    let dir = tempfile::tempdir().unwrap();
    let output = numasleuth()
        .args(["serve", "--once", "--textfile"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let file = dir.path().join("numasleuth.prom");
    let mut node_exporter = start_node_exporter(dir.path());
    let text = scrape(&mut node_exporter);
    assert_eq!(
        sample(&text, "node_textfile_scrape_error"),
        Some(0.0),
        "node_exporter could not read the file:\n{text}"
    );
    for series in [
        "numasleuth_node_memory_free_bytes{node=\"0\"}",
        "numasleuth_node_numa_hit_total{node=\"0\"}",
        "numasleuth_scrape_duration_seconds",
    ] {
        assert!(sample(&text, series).is_some(), "no {series} in\n{text}");
    }
    let build = text.lines().find(|l| l.starts_with("numasleuth_build_info{"));
    assert!(build.is_some_and(|l| l.ends_with(" 1")), "no build info in\n{text}");
    drop(node_exporter);
    let checked = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap_or_else(|e| panic!("cannot run promtool ({e}): install Debian's prometheus package"));
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}
