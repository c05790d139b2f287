//! The exporter's HTTP side: a small, bounded HTTP/1.1 server for GET
//! /metrics that a port scan or a misbehaving client cannot silence.
//!
//! The first version had a pool of 8 worker threads, each holding one
//! connection until its request head arrived or 5 s passed: 40 idle
//! connections renewed every few seconds kept every worker busy, and real
//! scrapes got 503 for as long as they were held. Now one thread watches
//! every connection with readiness polling (`mio`, epoll on Linux), so an
//! idle or slow connection costs a slot in a table, never a thread:
//!
//! - at most [`MAX_CONNECTIONS`] open at once; past that the oldest that has
//!   not finished its request head is closed to make room, whether it sent
//!   part of a head or nothing, so a scrape just accepted, whose head may
//!   arrive a moment after the accept, is the last to go (closing "sent
//!   nothing" first closed exactly that scrape under a flood of stalled
//!   half-requests: issue 36);
//! - a connection that sends nothing is closed after [`FIRST_BYTE_DEADLINE`];
//!   a head must be complete within [`REQUEST_DEADLINE`] in all (slowloris
//!   gets 408) and within [`HEAD_MAX_BYTES`] (431); a head ending in a bare
//!   `\n\n` is complete as soon as it arrives;
//! - the reply must be taken within [`WRITE_DEADLINE`] in all;
//! - `/metrics` is rendered on one thread of its own, behind a queue of
//!   `RENDER_QUEUE` (503 beyond it), so a slow read of a kernel file never
//!   stalls the connections, and a panic while rendering costs that answer
//!   only; the handler is told which [`Format`] the scraper's Accept
//!   header prefers (OpenMetrics for Prometheus, the 0.0.4 text for the
//!   rest).
//!
//! Two threads in all, and memory bounded by the connection cap times the
//! head cap plus the replies being written. `httparse` parses only the
//! head our reader collected; request bodies are never read; every response
//! closes the connection. The module depends on nothing else of numasleuth,
//! so it can move to a crate of its own.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

#[path = "http_conn.rs"]
mod conn;
#[path = "http_request.rs"]
mod request;
use conn::{read_some, start_writing, write_some, Conn, Next, State};
use request::response;

/// Request line plus headers; Prometheus sends a few hundred bytes.
pub const HEAD_MAX_BYTES: usize = 8192;
/// The whole request head must arrive within this, however slowly the
/// bytes trickle in (slowloris).
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// A connection that has sent nothing by then is closed: a client that
/// means to scrape sends its request at once.
pub const FIRST_BYTE_DEADLINE: Duration = Duration::from_secs(2);
/// The whole reply must be taken within this.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(5);
/// Connections open at once. Each costs a descriptor and at most
/// [`HEAD_MAX_BYTES`] while its head arrives.
pub const MAX_CONNECTIONS: usize = 512;
/// Scrapes waiting to be rendered; Prometheus scrapes one at a time.
const RENDER_QUEUE: usize = 16;

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

pub use request::Format;

/// What /metrics answers in the format the scraper asked for: the body
/// and its content type.
pub type Handler = dyn Fn(Format) -> (String, &'static str) + Send + Sync;

/// The server's bounds. [`Limits::default`] is what `serve` runs with;
/// tests shrink the table and stretch the deadlines, so a flood is a few
/// connections and no deadline can fire mid-test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub first_byte: Duration,
    pub request: Duration,
    pub write: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: MAX_CONNECTIONS,
            first_byte: FIRST_BYTE_DEADLINE,
            request: REQUEST_DEADLINE,
            write: WRITE_DEADLINE,
        }
    }
}

/// A scrape for the render thread: who asked, whether only the head is
/// wanted, and in which format.
type RenderJob = (Token, bool, Format);

/// Replies the render thread finished, for the I/O thread to send.
type Rendered = Arc<Mutex<Vec<(Token, Vec<u8>)>>>;

pub struct Server {
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    io: JoinHandle<()>,
}

impl Server {
    /// Starts the I/O and render threads on an already bound listener.
    pub fn start(listener: std::net::TcpListener, handler: Arc<Handler>) -> io::Result<Server> {
        Server::start_with(listener, handler, Limits::default())
    }

    /// [`Server::start`] within other bounds.
    pub fn start_with(listener: std::net::TcpListener, handler: Arc<Handler>, limits: Limits) -> io::Result<Server> {
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let stop = Arc::new(AtomicBool::new(false));
        let rendered: Rendered = Arc::default();
        let (render_send, render_receive) = sync_channel::<RenderJob>(RENDER_QUEUE);
        let (done, wake) = (Arc::clone(&rendered), Arc::clone(&waker));
        std::thread::Builder::new()
            .name("serve-render".into())
            .spawn(move || render_loop(&render_receive, &*handler, &done, &wake))?;
        let mut event_loop = EventLoop {
            poll,
            listener,
            conns: HashMap::new(),
            next_token: 2,
            accepted: 0,
            limits,
            render: render_send,
            rendered,
            stop: Arc::clone(&stop),
            accept_again_at: None,
        };
        let io = std::thread::Builder::new().name("serve-io".into()).spawn(move || {
            // A bug in one step must not end the server; the table stays
            // valid across a panic, so the loop just goes on.
            while std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| event_loop.run())).is_err() {}
        })?;
        Ok(Server { stop, waker, io })
    }

    /// Stops accepting and closes every connection.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        let _ = self.io.join();
    }
}

/// Renders /metrics for each queued scrape; ends when the I/O thread is
/// gone (the queue's sender is dropped).
fn render_loop(queue: &Receiver<RenderJob>, handler: &Handler, done: &Rendered, waker: &Waker) {
    while let Ok((token, head_only, format)) = queue.recv() {
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(format))).map_or_else(
            |_| response(500, "text/plain", "the exporter failed to render the metrics\n", false),
            |(body, content_type)| response(200, content_type, &body, head_only),
        );
        done.lock().unwrap_or_else(|e| e.into_inner()).push((token, reply));
        let _ = waker.wake();
    }
}

struct EventLoop {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<Token, Conn>,
    next_token: usize,
    /// Connections accepted so far, for [`Conn::seq`].
    accepted: u64,
    limits: Limits,
    render: SyncSender<RenderJob>,
    rendered: Rendered,
    stop: Arc<AtomicBool>,
    /// Accepting failed (out of descriptors): try again then.
    accept_again_at: Option<Instant>,
}

impl EventLoop {
    fn run(&mut self) {
        let mut events = Events::with_capacity(256);
        while !self.stop.load(Ordering::Acquire) {
            let timeout = self
                .next_deadline()
                .map(|at| at.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept_all(),
                    WAKER => self.send_rendered(),
                    token => self.step(token),
                }
            }
            if self.accept_again_at.is_some_and(|at| at <= Instant::now()) {
                self.accept_again_at = None;
                self.accept_all();
            }
            self.expire(Instant::now());
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.conns
            .values()
            .filter_map(|c| c.deadline(&self.limits))
            .chain(self.accept_again_at)
            .min()
    }

    /// Accepts every waiting connection (readiness is edge-triggered). Room
    /// is made only for a connection actually accepted: making it before
    /// the accept closed one more connection every time the backlog ran
    /// dry, the newest scrape as often as not (issue 36).
    fn accept_all(&mut self) {
        loop {
            let full = self.conns.len() >= self.limits.max_connections;
            if full && !self.conns.values().any(|c| matches!(c.state, State::Reading(_))) {
                // Every slot is answering a request: leave the rest in the
                // kernel's backlog until one frees.
                self.accept_again_at = Some(Instant::now() + Duration::from_millis(50));
                return;
            }
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if full {
                        self.evict_oldest_reading();
                    }
                    self.admit(stream);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Out of descriptors or memory: free one and retry soon,
                // rather than spin.
                Err(_) => {
                    self.evict_oldest_reading();
                    self.accept_again_at = Some(Instant::now() + Duration::from_millis(50));
                    return;
                }
            }
        }
    }

    /// Puts an accepted connection in the table and reads what it sent.
    fn admit(&mut self, mut stream: TcpStream) {
        let token = Token(self.next_token);
        self.next_token = self.next_token.checked_add(1).unwrap_or(2);
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self.poll.registry().register(&mut stream, token, interest).is_ok() {
            self.accepted += 1;
            let conn = Conn {
                stream,
                opened: Instant::now(),
                seq: self.accepted,
                state: State::Reading(Vec::new()),
            };
            self.conns.insert(token, conn);
            // A scrape often has its head there already: read it now.
            self.step(token);
        }
    }

    /// Closes the oldest connection still sending its head, whatever it
    /// sent so far: the newest is a scrape just accepted as often as not.
    /// False if every connection is being answered.
    fn evict_oldest_reading(&mut self) -> bool {
        let oldest = self
            .conns
            .iter()
            .filter(|(_, c)| matches!(c.state, State::Reading(_)))
            .min_by_key(|(_, c)| (c.opened, c.seq))
            .map(|(t, _)| *t);
        oldest.is_some_and(|token| self.conns.remove(&token).is_some())
    }

    fn step(&mut self, token: Token) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let next = match conn.state {
            State::Reading(_) => read_some(conn, token, &self.render, self.limits.write),
            State::Rendering => Next::Keep,
            State::Writing { .. } => write_some(conn),
        };
        if let Next::Close = next {
            self.conns.remove(&token);
        }
    }

    fn send_rendered(&mut self) {
        let done = std::mem::take(&mut *self.rendered.lock().unwrap_or_else(|e| e.into_inner()));
        for (token, reply) in done {
            if let Some(conn) = self.conns.get_mut(&token) {
                start_writing(conn, reply, self.limits.write);
                if let Next::Close = write_some(conn) {
                    self.conns.remove(&token);
                }
            }
        }
    }

    /// Closes what sent nothing in time, answers 408 to a head that did
    /// not arrive in time, and drops a reply not taken in time.
    fn expire(&mut self, now: Instant) {
        let late: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, c)| c.deadline(&self.limits).is_some_and(|at| at <= now))
            .map(|(t, _)| *t)
            .collect();
        for token in late {
            let Some(conn) = self.conns.get_mut(&token) else {
                continue;
            };
            let next = match &conn.state {
                State::Reading(head) if !head.is_empty() => {
                    start_writing(
                        conn,
                        response(408, "text/plain", "request head not received in time\n", false),
                        self.limits.write,
                    );
                    write_some(conn)
                }
                _ => Next::Close,
            };
            if let Next::Close = next {
                self.conns.remove(&token);
            }
        }
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
