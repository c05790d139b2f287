//! The exporter stays up under connections that hold it open, on
//! 127.0.0.1 only: 200 idle connections (reopened as soon as the server
//! closes one) and 200 slow ones sending a byte a second, while 100 normal
//! scrapes must every one be answered. Its threads and memory stay
//! bounded. The scrape latencies are printed (docs/security.md records
//! them); the test asserts availability, each scrape answered within a
//! client deadline far above what it needs, not timings.

use crate::common;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::exporter::{rss_kb, Exporter};

const IDLE: usize = 200;
const SLOW: usize = 200;
const SCRAPES: usize = 100;
/// What a scrape client waits before it gives up: generous, for a loaded
/// CI machine; the figure that matters is printed.
const CLIENT_DEADLINE: Duration = Duration::from_secs(5);

/// Keeps `count` connections open against `addr` until `stop`: each one
/// the server closes is opened again. A slow one sends one byte of a never
/// ending head each second. Returns how many connections it opened.
fn hold(addr: SocketAddr, count: usize, slow: bool, stop: &AtomicBool) -> usize {
    let open = || {
        let stream = TcpStream::connect(addr).ok()?;
        stream.set_nonblocking(true).ok()?;
        Some(stream)
    };
    let head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    let mut conns: Vec<(Option<TcpStream>, usize)> = (0..count).map(|_| (open(), 0)).collect();
    let mut opened = count;
    let mut last_byte = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let send_byte = slow && last_byte.elapsed() >= Duration::from_secs(1);
        if send_byte {
            last_byte = Instant::now();
        }
        for (stream, sent) in &mut conns {
            let mut buf = [0u8; 512];
            let closed = match stream {
                None => true,
                Some(s) => match s.read(&mut buf) {
                    Ok(_) => true,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        send_byte && s.write(&[head.get(*sent).copied().unwrap_or(b'a')]).is_err()
                    }
                    Err(_) => true,
                },
            };
            if send_byte && !closed {
                *sent += 1;
            }
            if closed {
                *stream = open();
                *sent = 0;
                opened += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    opened
}

/// One scrape: its latency, or why it failed.
fn scrape(addr: SocketAddr) -> Result<Duration, String> {
    let start = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr, CLIENT_DEADLINE).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(CLIENT_DEADLINE))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text\r\nConnection: close\r\n\r\n",
        )
        .map_err(|e| e.to_string())?;
    let mut reply = String::new();
    stream
        .take(64 << 20)
        .read_to_string(&mut reply)
        .map_err(|e| e.to_string())?;
    if !reply.starts_with("HTTP/1.1 200") || !reply.ends_with("# EOF\n") {
        return Err(format!("answer: {}", reply.lines().next().unwrap_or("(nothing)")));
    }
    Ok(start.elapsed())
}

fn threads(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:")?.trim().parse().ok())
        .unwrap()
}

#[test]
fn scrapes_are_answered_while_400_connections_hold_the_exporter() {
    let exporter = Exporter::start(&["--interval", "1s"]);
    let addr = exporter.addr;
    for _ in 0..5 {
        scrape(addr).expect("a scrape before the load");
    }
    let (rss_before_kb, threads_before) = (rss_kb(exporter.pid()), threads(exporter.pid()));
    let stop = Arc::new(AtomicBool::new(false));
    let holders: Vec<_> = [(IDLE, false), (SLOW, true)]
        .into_iter()
        .map(|(count, slow)| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || hold(addr, count, slow, &stop))
        })
        .collect();
    // Let the holders open everything and the slow ones start trickling.
    std::thread::sleep(Duration::from_secs(2));
    let mut latencies = Vec::new();
    let mut failures = Vec::new();
    for i in 0..SCRAPES {
        match scrape(addr) {
            Ok(latency) => latencies.push(latency),
            Err(why) => failures.push(format!("scrape {i}: {why}")),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (rss_during_kb, threads_during) = (rss_kb(exporter.pid()), threads(exporter.pid()));
    stop.store(true, Ordering::Relaxed);
    let opened: usize = holders.into_iter().map(|h| h.join().unwrap()).sum();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1];
    if !latencies.is_empty() {
        eprintln!(
            "{} scrapes under {IDLE} idle + {SLOW} slow connections ({opened} opened in all): \
             p50 {:?}, p99 {:?}, max {:?}; exporter RSS {rss_before_kb} -> {rss_during_kb} kB, \
             threads {threads_before} -> {threads_during}",
            latencies.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {SCRAPES} scrapes failed: {failures:#?}",
        failures.len()
    );
    assert!(opened >= IDLE + SLOW, "the holders opened only {opened}");
    assert!(
        threads_during <= threads_before,
        "threads {threads_before} -> {threads_during}"
    );
    assert!(
        rss_during_kb < rss_before_kb + 32 * 1024,
        "RSS {rss_before_kb} -> {rss_during_kb} kB under 400 connections"
    );
}

/// A connection that sends nothing is closed by the server (well within
/// the client's bound), and a head ending in a bare `\n\n` is answered,
/// not left to time out with 408.
#[test]
fn silence_is_closed_and_a_bare_newline_head_is_answered() {
    let exporter = Exporter::start(&["--interval", "1s"]);
    let mut silent = TcpStream::connect(exporter.addr).unwrap();
    silent.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reply = Vec::new();
    let read = silent.read_to_end(&mut reply);
    assert!(read.is_ok() && reply.is_empty(), "{read:?} {reply:?}");

    let mut bare = TcpStream::connect(exporter.addr).unwrap();
    bare.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    bare.write_all(b"GET /metrics HTTP/1.1\nHost: x\n\n").unwrap();
    let mut reply = String::new();
    bare.read_to_string(&mut reply).unwrap();
    assert!(
        reply.starts_with("HTTP/1.1 200"),
        "{}",
        reply.lines().next().unwrap_or("")
    );
}
