//! One connection of the exporter's HTTP server: what state it is in,
//! when it must have made progress, and the read and write steps the I/O
//! thread runs when it is ready. Kept apart from the event loop, which only
//! decides which connection to step, evict or expire.

use std::io::{self, Read, Write};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::Token;

use super::request::{head_end, response, route};
use super::{Limits, RenderJob, HEAD_MAX_BYTES};

pub(super) enum State {
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

pub(super) struct Conn {
    pub(super) stream: TcpStream,
    pub(super) opened: Instant,
    /// Order of acceptance, which picks the oldest exactly where two
    /// `opened` instants are equal.
    pub(super) seq: u64,
    pub(super) state: State,
}

impl Conn {
    /// When this connection must have made progress, if ever.
    pub(super) fn deadline(&self, limits: &Limits) -> Option<Instant> {
        match &self.state {
            State::Reading(head) if head.is_empty() => Some(self.opened + limits.first_byte),
            State::Reading(_) => Some(self.opened + limits.request),
            State::Rendering => None,
            State::Writing { deadline, .. } => Some(*deadline),
        }
    }
}

/// What a step did to a connection.
pub(super) enum Next {
    Keep,
    Close,
}

pub(super) fn start_writing(conn: &mut Conn, reply: Vec<u8>, write_deadline: Duration) {
    conn.state = State::Writing {
        reply,
        sent: 0,
        deadline: Instant::now() + write_deadline,
    };
}

/// Reads what has arrived; answers once the head is complete.
pub(super) fn read_some(
    conn: &mut Conn,
    token: Token,
    render: &SyncSender<RenderJob>,
    write_deadline: Duration,
) -> Next {
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
            Ok(asked) if asked.path == "/metrics" => match render.try_send((token, asked.head_only, asked.format)) {
                Ok(()) => {
                    conn.state = State::Rendering;
                    return Next::Keep;
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    response(503, "text/plain", "busy\n", false)
                }
            },
            Ok(asked) if asked.path == "/" => response(
                200,
                "text/html; charset=utf-8",
                "<html><body><a href=\"/metrics\">numasleuth metrics</a></body></html>\n",
                asked.head_only,
            ),
            Ok(asked) => response(404, "text/plain", "not found; try /metrics\n", asked.head_only),
            Err((code, why)) => response(code, "text/plain", why, false),
        }
    };
    start_writing(conn, reply, write_deadline);
    write_some(conn)
}

/// Writes what the socket takes; closes once the reply is out.
pub(super) fn write_some(conn: &mut Conn) -> Next {
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
