//! A running `numasleuth serve` for tests: started on a free loopback port
//! (`--listen 127.0.0.1:0`), killed and reaped on drop so no test leaves it
//! behind, plus a minimal HTTP GET over a raw socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Exporter {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Exporter {
    /// `serve --listen 127.0.0.1:0` plus `extra`; waits for the line that
    /// names the bound address.
    pub fn start(extra: &[&str]) -> Exporter {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("numasleuth"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next().expect("serve printed nothing").unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .parse()
            .unwrap();
        // Keep draining stderr so the exporter never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Exporter { child, addr }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Status and body of `GET path`, or `None` if the exchange failed.
pub fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    get_accepting(addr, path, None).map(|(status, _, body)| (status, body))
}

/// What Prometheus 2.42 sends as its Accept header (scrape/scrape.go):
/// OpenMetrics first.
pub const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                                     version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// Status, head and body of `GET path` with `Accept: accept` (none when
/// `None`), or `None` if the exchange failed.
pub fn get_accepting(addr: SocketAddr, path: &str, accept: Option<&str>) -> Option<(u16, String, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{accept}Connection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    stream.take(64 << 20).read_to_string(&mut reply).ok()?;
    let status = reply.split_whitespace().nth(1)?.parse().ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    Some((status, head.to_string(), body.to_string()))
}

/// The value of the first sample line that starts with `series`.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Resident set of a process, in kB.
pub fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap()
}

/// Node 0's MemFree from the kernel, in bytes, to compare with what the
/// exporter reports.
pub fn node0_memfree_bytes() -> f64 {
    let text = std::fs::read_to_string("/sys/devices/system/node/node0/meminfo").unwrap();
    let kb: f64 = text
        .lines()
        .find_map(|l| {
            l.split("MemFree:")
                .nth(1)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap();
    kb * 1024.0
}
