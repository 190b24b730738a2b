//! One client connection: socket, in-flight requests (ring of intended/sent times and deck entries),
//! write buffer, parser.

use std::collections::VecDeque;

use mio::net::TcpStream;

use crate::inflight::InFlight;
use crate::parser::ResponseParser;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    /// No socket; (re)connect at `retry_at`.
    Idle,
    Connecting,
    /// Connected; the TLS handshake under way (TLS plans only).
    Handshaking,
    Open,
}

/// `ready_since` of a connection that is full, draining or not connected.
pub const NOT_READY: u64 = u64::MAX;

pub struct Conn {
    pub stream: Option<TcpStream>,
    pub state: ConnState,
    /// Bumped on every new socket so a stale event cannot hit a new socket.
    pub generation: u32,
    /// Index into the worker's address groups.
    pub group: usize,
    /// Round-robin position within the group's targets.
    pub cursor: usize,
    /// Capacity = pipeline depth, allocated once: push/pop never allocate.
    pub inflight: VecDeque<InFlight>,
    /// Pending request bytes; reused, so it stops allocating after the first fill.
    pub wbuf: Vec<u8>,
    pub woff: usize,
    pub parser: ResponseParser,
    /// The TLS session of the current socket (TLS plans only): ciphertext to and from the socket,
    /// plaintext to and from the parser and `wbuf`.
    pub tls: Option<Box<rustls::ClientConnection>>,
    /// The HTTP/2 session of the current socket (HTTP/2 plans only).
    pub h2: Option<Box<crate::h2::session::Session>>,
    /// Requests written on the current socket (for --requests-per-conn).
    pub sent_on_socket: u64,
    /// No more requests on this socket; recycle it once `inflight` drains.
    pub draining: bool,
    /// Connect start (for the connect timeout), then the connect's completion (for the
    /// handshake's time and timeout).
    pub since: u64,
    pub retry_at: u64,
    /// Whether the index is on the worker's ready stack.
    pub in_ready: bool,
    /// Since when this socket could take a request ([`NOT_READY`] if it cannot).
    pub ready_since: u64,
    /// Responses received in the measured window: a connection that got none was starved (a
    /// server serving one keep-alive connection per worker leaves the others waiting).
    pub answered: u64,
}

impl Conn {
    pub fn new(group: usize, pipeline: u32, hash: bool, head: bool) -> Conn {
        let mut parser = ResponseParser::new(hash);
        parser.set_head_request(head);
        Conn {
            stream: None,
            state: ConnState::Idle,
            generation: 0,
            group,
            cursor: 0,
            inflight: VecDeque::with_capacity(pipeline as usize),
            wbuf: Vec::new(),
            woff: 0,
            parser,
            tls: None,
            h2: None,
            sent_on_socket: 0,
            draining: false,
            since: 0,
            retry_at: 0,
            in_ready: false,
            ready_since: NOT_READY,
            answered: 0,
        }
    }

    /// Drops the socket and all per-socket state. The caller has already
    /// accounted for the in-flight requests.
    pub fn reset_socket(&mut self) {
        self.stream = None;
        self.state = ConnState::Idle;
        self.generation = self.generation.wrapping_add(1);
        self.inflight.clear();
        self.wbuf.clear();
        self.woff = 0;
        self.parser.reset();
        self.tls = None;
        self.h2 = None;
        self.sent_on_socket = 0;
        self.draining = false;
        self.ready_since = NOT_READY;
    }
}

/// Token layout: low 32 bits connection index, high 32 bits generation.
#[inline]
pub fn token(index: usize, generation: u32) -> mio::Token {
    mio::Token(index | ((generation as usize) << 32))
}

#[inline]
pub fn untoken(t: mio::Token) -> (usize, u32) {
    (t.0 & 0xffff_ffff, (t.0 >> 32) as u32)
}
