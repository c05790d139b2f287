//! The exporter's HTTP side: a small, bounded HTTP/1.1 server for GET
//! /metrics.
//!
//! Small HTTP crates (tiny_http 0.12, for one) read a request line of any
//! length, have no read deadline and start a thread per connection, so a
//! slowloris client or one endless header wedges or bloats them. Here the
//! socket handling is ours and bounded — a fixed pool of workers, a
//! bounded queue (503 beyond it), a cap on the request head and one
//! deadline for all of it — and `httparse` parses the head it collected.
//! Every response closes the connection.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Request line plus headers; Prometheus sends a few hundred bytes.
pub const HEAD_MAX_BYTES: usize = 8192;
/// Headers parsed; more is refused with 431.
const HEADERS_MAX: usize = 32;
/// The whole request head must arrive within this, however slowly the
/// bytes trickle in (slowloris).
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// Connections served at once; Prometheus scrapes one at a time.
const WORKERS: usize = 8;
/// Accepted connections waiting for a worker; beyond this, 503 at once.
const QUEUE: usize = 32;

/// What /metrics answers: the body and its content type.
pub type Handler = dyn Fn() -> (String, &'static str) + Send + Sync;

pub struct Server {
    listener: Arc<TcpListener>,
    stop: Arc<AtomicBool>,
    acceptor: JoinHandle<()>,
}

impl Server {
    /// Starts the acceptor and the workers on an already bound listener.
    pub fn start(listener: TcpListener, handler: Arc<Handler>) -> std::io::Result<Server> {
        let listener = Arc::new(listener);
        let stop = Arc::new(AtomicBool::new(false));
        let (send, receive) = sync_channel::<TcpStream>(QUEUE);
        let receive = Arc::new(Mutex::new(receive));
        for i in 0..WORKERS {
            let (receive, handler) = (Arc::clone(&receive), Arc::clone(&handler));
            std::thread::Builder::new()
                .name(format!("serve-worker-{i}"))
                .spawn(move || worker(&receive, &*handler))?;
        }
        let (l, s) = (Arc::clone(&listener), Arc::clone(&stop));
        let acceptor = std::thread::Builder::new().name("serve-accept".into()).spawn(move || {
            while !s.load(Ordering::Acquire) {
                let Ok((stream, _)) = l.accept() else {
                    // EMFILE and friends: back off instead of spinning.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                };
                if let Err(TrySendError::Full(stream)) = send.try_send(stream) {
                    respond(stream, 503, "text/plain", "busy\n", false);
                }
            }
        })?;
        Ok(Server {
            listener,
            stop,
            acceptor,
        })
    }

    /// Stops accepting; connections in flight finish within their deadline
    /// or are dropped when the process exits.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        // SAFETY: the descriptor belongs to `self.listener`, which is alive
        // here; shutdown() only wakes the blocked accept() (EINVAL on
        // Linux) and does not close the descriptor.
        unsafe {
            libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR);
        }
        let _ = self.acceptor.join();
    }
}

fn worker(receive: &Mutex<Receiver<TcpStream>>, handler: &Handler) {
    loop {
        // A poisoned lock only means another worker panicked while
        // waiting; the receiver itself is intact.
        let next = receive.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(stream) = next else { return };
        // A panic while answering one request (a bug, say, on some odd
        // kernel file) must not cost the server a worker for good.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| serve_one(stream, handler)));
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// The peer closed or reset before a full head: nothing to answer.
    Gone,
    Status(u16, &'static str),
}

/// Reads the request head, bounded in bytes and in total time.
fn read_head(stream: &mut TcpStream) -> Result<Vec<u8>, Refusal> {
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(head);
        }
        if head.len() >= HEAD_MAX_BYTES {
            return Err(Refusal::Status(431, "request head too large\n"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Refusal::Status(408, "request head not received in time\n"));
        }
        stream.set_read_timeout(Some(left)).map_err(|_| Refusal::Gone)?;
        let room = (HEAD_MAX_BYTES - head.len()).min(chunk.len());
        match stream.read(&mut chunk[..room]) {
            Ok(0) => return Err(Refusal::Gone),
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(Refusal::Status(408, "request head not received in time\n"))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(Refusal::Gone),
        }
    }
}

/// Method and path of a complete head, or the status that refuses it.
fn route(head: &[u8]) -> Result<(bool, String), Refusal> {
    let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal::Status(431, "too many headers\n")),
        _ => return Err(Refusal::Status(400, "bad request\n")),
    }
    let (Some(method), Some(path)) = (request.method, request.path) else {
        return Err(Refusal::Status(400, "bad request\n"));
    };
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Err(Refusal::Status(405, "only GET and HEAD\n")),
    };
    let path = path.split('?').next().unwrap_or("");
    Ok((head_only, path.to_string()))
}

fn serve_one(mut stream: TcpStream, handler: &Handler) {
    let _ = stream.set_write_timeout(Some(REQUEST_DEADLINE));
    let answer = read_head(&mut stream).and_then(|head| route(&head));
    match answer {
        Ok((head_only, path)) if path == "/metrics" => {
            let (body, content_type) = handler();
            respond(stream, 200, content_type, &body, head_only);
        }
        Ok((head_only, path)) if path == "/" => respond(
            stream,
            200,
            "text/html; charset=utf-8",
            "<html><body><a href=\"/metrics\">numasleuth metrics</a></body></html>\n",
            head_only,
        ),
        Ok((head_only, _)) => respond(stream, 404, "text/plain", "not found; try /metrics\n", head_only),
        Err(Refusal::Status(code, why)) => respond(stream, code, "text/plain", why, false),
        Err(Refusal::Gone) => {}
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

fn respond(mut stream: TcpStream, code: u16, content_type: &str, body: &str, head_only: bool) {
    let _ = stream.set_write_timeout(Some(REQUEST_DEADLINE));
    let head = format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reason(code),
        body.len()
    );
    // One deadline for the whole reply, as for the request: a client that
    // reads a few bytes every few seconds must not hold a worker for longer.
    let deadline = Instant::now() + REQUEST_DEADLINE;
    let body = if head_only { "" } else { body };
    // A client that went away or ran out of time is not our error.
    let _ = write_by(&mut stream, head.as_bytes(), deadline)
        .and_then(|()| write_by(&mut stream, body.as_bytes(), deadline));
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// Writes `bytes`, each write with what is left of the time, and gives up
/// when the deadline passes.
fn write_by(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => bytes = &bytes[written.min(bytes.len())..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_refusals() {
        assert_eq!(
            route(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"),
            Ok((false, "/metrics".to_string()))
        );
        assert_eq!(route(b"HEAD / HTTP/1.0\r\n\r\n"), Ok((true, "/".to_string())));
        assert!(matches!(
            route(b"POST /metrics HTTP/1.1\r\n\r\n"),
            Err(Refusal::Status(405, _))
        ));
        assert!(matches!(
            route(b"\x00\x01garbage\r\n\r\n"),
            Err(Refusal::Status(400, _))
        ));
        let many = format!("GET / HTTP/1.1\r\n{}\r\n", "A: b\r\n".repeat(HEADERS_MAX + 1));
        assert!(matches!(route(many.as_bytes()), Err(Refusal::Status(431, _))));
    }
}
