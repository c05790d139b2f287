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
//!   not finished its request head is closed to make room, so a scrape,
//!   which sends its head at once, always gets in;
//! - a connection that sends nothing is closed after [`FIRST_BYTE_DEADLINE`];
//!   a head must be complete within [`REQUEST_DEADLINE`] in all (slowloris
//!   gets 408) and within [`HEAD_MAX_BYTES`] (431); a head ending in a bare
//!   `\n\n` is complete as soon as it arrives;
//! - the reply must be taken within [`WRITE_DEADLINE`] in all;
//! - `/metrics` is rendered on one thread of its own, behind a queue of
//!   `RENDER_QUEUE` (503 beyond it), so a slow read of a kernel file never
//!   stalls the connections, and a panic while rendering costs that answer
//!   only.
//!
//! Two threads in all, and memory bounded by the connection cap times the
//! head cap plus the replies being written. `httparse` parses only the
//! head our reader collected; request bodies are never read; every response
//! closes the connection. The module depends on nothing else of numasleuth,
//! so it can move to a crate of its own.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

#[path = "http_request.rs"]
mod request;
use request::{head_end, response, route};

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

/// What /metrics answers: the body and its content type.
pub type Handler = dyn Fn() -> (String, &'static str) + Send + Sync;

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
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let stop = Arc::new(AtomicBool::new(false));
        let rendered: Rendered = Arc::default();
        let (render_send, render_receive) = sync_channel::<(Token, bool)>(RENDER_QUEUE);
        let (done, wake) = (Arc::clone(&rendered), Arc::clone(&waker));
        std::thread::Builder::new()
            .name("serve-render".into())
            .spawn(move || render_loop(&render_receive, &*handler, &done, &wake))?;
        let mut event_loop = EventLoop {
            poll,
            listener,
            conns: HashMap::new(),
            next_token: 2,
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
fn render_loop(queue: &Receiver<(Token, bool)>, handler: &Handler, done: &Rendered, waker: &Waker) {
    while let Ok((token, head_only)) = queue.recv() {
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(handler)).map_or_else(
            |_| response(500, "text/plain", "the exporter failed to render the metrics\n", false),
            |(body, content_type)| response(200, content_type, &body, head_only),
        );
        done.lock().unwrap_or_else(|e| e.into_inner()).push((token, reply));
        let _ = waker.wake();
    }
}

enum State {
    /// Collecting the request head.
    Reading(Vec<u8>),
    /// Waiting for the render thread.
    Rendering,
    Writing {
        reply: Vec<u8>,
        sent: usize,
        deadline: Instant,
    },
}

struct Conn {
    stream: TcpStream,
    opened: Instant,
    state: State,
}

impl Conn {
    /// When this connection must have made progress, if ever.
    fn deadline(&self) -> Option<Instant> {
        match &self.state {
            State::Reading(head) if head.is_empty() => Some(self.opened + FIRST_BYTE_DEADLINE),
            State::Reading(_) => Some(self.opened + REQUEST_DEADLINE),
            State::Rendering => None,
            State::Writing { deadline, .. } => Some(*deadline),
        }
    }
}

/// What a step did to a connection.
enum Next {
    Keep,
    Close,
}

struct EventLoop {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<Token, Conn>,
    next_token: usize,
    render: SyncSender<(Token, bool)>,
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
            .filter_map(Conn::deadline)
            .chain(self.accept_again_at)
            .min()
    }

    /// Accepts every waiting connection (readiness is edge-triggered).
    fn accept_all(&mut self) {
        loop {
            if self.conns.len() >= MAX_CONNECTIONS && !self.evict_oldest_reading() {
                // Every slot is answering a request: leave the rest in the
                // kernel's backlog until one frees.
                self.accept_again_at = Some(Instant::now() + Duration::from_millis(50));
                return;
            }
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    let token = Token(self.next_token);
                    self.next_token = self.next_token.checked_add(1).unwrap_or(2);
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    if self.poll.registry().register(&mut stream, token, interest).is_ok() {
                        let conn = Conn {
                            stream,
                            opened: Instant::now(),
                            state: State::Reading(Vec::new()),
                        };
                        self.conns.insert(token, conn);
                        // A scrape often has its head there already: read
                        // it now, before a flood could evict it.
                        self.step(token);
                    }
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

    /// Closes the connection still sending its head that has done least:
    /// one that sent nothing before one that sent part of a head, the
    /// oldest first. False if every connection is being answered.
    fn evict_oldest_reading(&mut self) -> bool {
        let oldest = self
            .conns
            .iter()
            .filter_map(|(t, c)| match &c.state {
                State::Reading(head) => Some(((!head.is_empty(), c.opened), *t)),
                _ => None,
            })
            .min()
            .map(|(_, t)| t);
        oldest.is_some_and(|token| self.conns.remove(&token).is_some())
    }

    fn step(&mut self, token: Token) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        let next = match conn.state {
            State::Reading(_) => read_some(conn, token, &self.render),
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
                start_writing(conn, reply);
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
            .filter(|(_, c)| c.deadline().is_some_and(|at| at <= now))
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

fn start_writing(conn: &mut Conn, reply: Vec<u8>) {
    conn.state = State::Writing {
        reply,
        sent: 0,
        deadline: Instant::now() + WRITE_DEADLINE,
    };
}

/// Reads what has arrived; answers once the head is complete.
fn read_some(conn: &mut Conn, token: Token, render: &SyncSender<(Token, bool)>) -> Next {
    let State::Reading(head) = &mut conn.state else {
        return Next::Keep;
    };
    let mut chunk = [0u8; 1024];
    let complete = loop {
        if head_end(head).is_some() {
            break true;
        }
        if head.len() >= HEAD_MAX_BYTES {
            break false;
        }
        let room = (HEAD_MAX_BYTES - head.len()).min(chunk.len());
        match conn.stream.read(&mut chunk[..room]) {
            Ok(0) => return Next::Close,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    };
    let reply = if !complete {
        response(431, "text/plain", "request head too large\n", false)
    } else {
        match route(head) {
            Ok((head_only, path)) if path == "/metrics" => match render.try_send((token, head_only)) {
                Ok(()) => {
                    conn.state = State::Rendering;
                    return Next::Keep;
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    response(503, "text/plain", "busy\n", false)
                }
            },
            Ok((head_only, path)) if path == "/" => response(
                200,
                "text/html; charset=utf-8",
                "<html><body><a href=\"/metrics\">numasleuth metrics</a></body></html>\n",
                head_only,
            ),
            Ok((head_only, _)) => response(404, "text/plain", "not found; try /metrics\n", head_only),
            Err((code, why)) => response(code, "text/plain", why, false),
        }
    };
    start_writing(conn, reply);
    write_some(conn)
}

/// Writes what the socket takes; closes once the reply is out.
fn write_some(conn: &mut Conn) -> Next {
    let State::Writing { reply, sent, .. } = &mut conn.state else {
        return Next::Keep;
    };
    while *sent < reply.len() {
        match conn.stream.write(&reply[*sent..]) {
            Ok(0) => return Next::Close,
            Ok(n) => *sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    }
    let _ = conn.stream.shutdown(std::net::Shutdown::Write);
    Next::Close
}
