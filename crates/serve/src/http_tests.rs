//! The server on loopback with a small connection table and deadlines long
//! enough that none fires during a test: what is closed and what is
//! answered is decided by the table alone, never by a clock.

use super::*;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

/// A table this small makes a flood a handful of connections.
const TABLE: usize = 16;
/// Far beyond any test, so only eviction closes a connection here.
const NEVER: Duration = Duration::from_secs(600);
/// Generous: the test fails rather than hangs if the server stops
/// answering, and never measures how fast it answers.
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);

fn start() -> (Server, SocketAddr) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = Limits {
        max_connections: TABLE,
        first_byte: NEVER,
        request: NEVER,
        write: NEVER,
    };
    let handler: Arc<Handler> = Arc::new(|format| (format!("asked {format:?}\n"), "text/plain"));
    (Server::start_with(listener, handler, limits).unwrap(), addr)
}

/// A connection that sends a request line and then stalls, as in the flood
/// of issue 36.
fn half_request(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
    stream.set_nonblocking(true).unwrap();
    stream
}

/// Whether the server has closed `stream` (an end of file or a reset).
fn closed(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => panic!("a stalled half-request got an answer"),
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    }
}

/// The whole reply to a request completed on `stream`.
fn complete(mut stream: TcpStream, head: &[u8]) -> String {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(CLIENT_DEADLINE)).unwrap();
    // A write into a connection the server closed may fail or not; the
    // reply (or its absence) says what happened.
    let _ = stream.write_all(head);
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply).into_owned()
}

#[test]
fn a_scrape_whose_head_comes_after_its_accept_outlives_a_flood_of_stalled_half_requests() {
    let (server, addr) = start();
    let mut flood: Vec<TcpStream> = (0..TABLE).map(|_| half_request(addr)).collect();
    // The scrape connects and sends nothing yet: the server accepts it
    // before its head is there, as happens when a flood keeps it busy.
    let mut scrape = TcpStream::connect(addr).unwrap();
    scrape.set_nonblocking(true).unwrap();
    // Less than a table's worth of stalled requests after it: each one
    // accepted closes one to make room. Closing the oldest never reaches
    // the scrape; closing "sent nothing" first closed the scrape.
    flood.extend((0..TABLE - 1).map(|_| half_request(addr)));
    let must_close = flood.len() + 1 - TABLE;
    let deadline = Instant::now() + CLIENT_DEADLINE;
    let mut gone = vec![false; flood.len()];
    let mut scrape_gone = false;
    while gone.iter().filter(|g| **g).count() + usize::from(scrape_gone) < must_close {
        assert!(Instant::now() < deadline, "the server did not make room for the flood");
        for (stream, gone) in flood.iter_mut().zip(&mut gone) {
            *gone = *gone || closed(stream);
        }
        scrape_gone = scrape_gone || closed(&mut scrape);
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !scrape_gone,
        "the scrape was closed to make room for a stalled request; flood closed: {gone:?}"
    );
    // The oldest went, in the order they came.
    assert!(gone[..must_close].iter().all(|g| *g), "{gone:?}");
    let reply = complete(scrape, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply:?}");
    assert!(reply.ends_with("asked PrometheusText\n"), "{reply:?}");
    server.stop();
}

#[test]
fn the_handler_is_asked_for_the_format_the_scraper_accepts() {
    let (server, addr) = start();
    let scrape = |accept: &str| {
        let head = format!("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n");
        complete(TcpStream::connect(addr).unwrap(), head.as_bytes())
    };
    let openmetrics = scrape("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5");
    assert!(openmetrics.ends_with("asked OpenMetrics\n"), "{openmetrics:?}");
    let text = scrape("text/plain");
    assert!(text.ends_with("asked PrometheusText\n"), "{text:?}");
    server.stop();
}
