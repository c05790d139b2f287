//! The exporter under abuse, on 127.0.0.1 only: 1000 sequential scrapes
//! plus 200 malformed requests (garbage, oversized heads, slowloris
//! partial requests that hold workers until the server's deadline). It
//! must still answer afterwards, with its RSS within 10% of where it
//! settled after warm-up.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::exporter::{get_accepting, rss_kb, Exporter, PROMETHEUS_ACCEPT};

/// The server's request deadline (numasleuth_serve::http::REQUEST_DEADLINE) plus slack
/// for a loaded CI machine; a slowloris must be cut off before this.
const CUT_OFF: Duration = Duration::from_secs(30);

/// Sends `bytes` and returns the status the server answered, if any.
fn send_raw(addr: SocketAddr, bytes: &[u8]) -> Option<u16> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(CUT_OFF)).ok()?;
    // The server may answer (and close) before taking all of an oversized
    // head; a failed write is then expected.
    let _ = stream.write_all(bytes);
    let mut reply = Vec::new();
    let _ = stream.take(1 << 20).read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply);
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Opens `count` connections that send half a request head and then go
/// quiet; each must be answered 408 (or closed) by the server's deadline.
fn slowloris(addr: SocketAddr, count: usize) -> Vec<Option<u16>> {
    let handles: Vec<_> = (0..count)
        .map(|_| {
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                stream.set_read_timeout(Some(CUT_OFF)).unwrap();
                stream
                    .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    .unwrap();
                let mut reply = Vec::new();
                match stream.read_to_end(&mut reply) {
                    Ok(_) => String::from_utf8_lossy(&reply)
                        .split_whitespace()
                        .nth(1)
                        .and_then(|s| s.parse().ok()),
                    Err(e) => panic!("slowloris connection not cut off within {CUT_OFF:?}: {e}"),
                }
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn scrape_ok(addr: SocketAddr) {
    // OpenMetrics, whose `# EOF` shows the exposition is whole.
    let (status, _, body) = get_accepting(addr, "/metrics", Some(PROMETHEUS_ACCEPT)).expect("no answer to a scrape");
    assert_eq!(status, 200);
    assert!(body.ends_with("# EOF\n"), "truncated exposition");
}

/// One round of every kind of request, several at once, so every worker
/// thread and allocator arena has been used before RSS is taken.
fn warm_up(addr: SocketAddr) {
    for _ in 0..3 {
        let handles: Vec<_> = (0..16)
            .map(|i| {
                std::thread::spawn(move || match i % 3 {
                    0 => scrape_ok(addr),
                    1 => {
                        send_raw(addr, &vec![b'A'; 20_000]);
                    }
                    _ => {
                        send_raw(addr, b"\x16\x03\x01garbage\r\n\r\n");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    for _ in 0..100 {
        scrape_ok(addr);
    }
}

#[test]
fn survives_1000_scrapes_and_200_malformed_requests_with_stable_rss() {
    let exporter = Exporter::start(&["--interval", "1s"]);
    let addr = exporter.addr;
    warm_up(addr);
    let rss_before_kb = rss_kb(exporter.pid());
    for _ in 0..1000 {
        scrape_ok(addr);
    }
    let oversized = format!("GET /metrics HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(64 << 10));
    let many_headers = format!("GET /metrics HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(100));
    let mut statuses = Vec::new();
    for i in 0..70 {
        let garbage: Vec<u8> = (0..512u32)
            .map(|j| (j.wrapping_mul(31).wrapping_add(i) % 251) as u8)
            .collect();
        statuses.push(send_raw(addr, &[garbage.as_slice(), b"\r\n\r\n"].concat()));
        statuses.push(send_raw(addr, b"BREW /pot HTTP/1.1\r\n\r\n"));
    }
    for _ in 0..10 {
        statuses.push(send_raw(addr, oversized.as_bytes()));
        statuses.push(send_raw(addr, many_headers.as_bytes()));
    }
    // 20 at once: more than the server's workers, so scrapes queue behind
    // them; twice.
    for _ in 0..2 {
        statuses.extend(slowloris(addr, 20));
    }
    assert_eq!(statuses.len(), 200);
    // Every malformed request was refused, never answered with metrics.
    assert!(statuses.iter().all(|s| *s != Some(200)), "{statuses:?}");
    assert!(statuses.contains(&Some(400)) && statuses.contains(&Some(431)) && statuses.contains(&Some(408)));
    assert!(statuses.contains(&Some(405)));
    scrape_ok(addr);
    let rss_after_kb = rss_kb(exporter.pid());
    let drift = (rss_after_kb as f64 - rss_before_kb as f64).abs() / rss_before_kb as f64;
    eprintln!("exporter RSS: {rss_before_kb} kB after warm-up, {rss_after_kb} kB after the load");
    assert!(
        drift <= 0.10,
        "RSS moved {:.1}%: {rss_before_kb} kB -> {rss_after_kb} kB",
        drift * 100.0
    );
}
