//! One HTTP/2 connection's client side: frames read from the plaintext as it arrives (DATA streamed,
//! other frames gathered), the server's SETTINGS, PINGs and window updates answered, flow control
//! given back, and what the worker must act on (settled, a stream done or reset, GOAWAY) queued as
//! events. Responses fill the in-flight record of their stream.

use std::collections::VecDeque;

use super::frame::{self, flag, kind, setting, FrameHead, CLIENT_WINDOW, DEFAULT_WINDOW, HEAD, MAX_FRAME};
use super::hpack::Decoder;
use crate::inflight::InFlight;
use crate::parser::fnv1a64_update;

/// A connection error: the connection cannot go on. The text says what the server did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct H2Error(pub String);

impl H2Error {
    fn new(s: &str) -> H2Error {
        H2Error(s.to_string())
    }
}

/// What the worker acts on, in the order the frames came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The server's first SETTINGS arrived: requests may go.
    Settled,
    /// A stream's response is complete (its record holds the status, length and hash).
    Done(u32),
    /// The server reset a stream, with its error code.
    Reset(u32, u32),
    /// The server takes no stream above `last`, with its error code.
    GoAway { last: u32, code: u32 },
}

/// The server's SETTINGS as last received (RFC 9113 6.5.2; defaults until then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerSettings {
    pub header_table_size: u32,
    pub max_concurrent_streams: Option<u32>,
    pub initial_window_size: u32,
    pub max_frame_size: u32,
    pub max_header_list_size: Option<u32>,
}

impl Default for ServerSettings {
    fn default() -> ServerSettings {
        ServerSettings {
            header_table_size: 4096,
            max_concurrent_streams: None,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: MAX_FRAME,
            max_header_list_size: None,
        }
    }
}

/// A header block under way across CONTINUATION frames.
struct Block {
    stream: u32,
    end_stream: bool,
}

pub(crate) struct Session {
    hpack: Decoder,
    head: [u8; HEAD],
    head_len: usize,
    /// The frame being read, and how many of its payload bytes have been.
    frame: Option<FrameHead>,
    read: u32,
    /// Where a DATA frame's body ends (before its padding).
    body_end: u32,
    /// A non-DATA frame's payload, gathered.
    payload: Vec<u8>,
    /// Header block fragments awaiting their END_HEADERS.
    block: Vec<u8>,
    continuing: Option<Block>,
    next_stream: u32,
    pub server: ServerSettings,
    settled: bool,
    /// What the server's connection window still takes of request bodies.
    send_window: i64,
    /// DATA bytes received and not yet given back by a WINDOW_UPDATE.
    unacked: u32,
    hash: bool,
    pub events: Vec<Event>,
}

impl Session {
    /// A session whose preface the caller writes with [`frame::put_preface`]; `hash` turns on
    /// FNV-1a hashing of bodies.
    pub(crate) fn new(hash: bool) -> Session {
        Session {
            hpack: Decoder::new(),
            head: [0; HEAD],
            head_len: 0,
            frame: None,
            read: 0,
            body_end: 0,
            payload: Vec::new(),
            block: Vec::new(),
            continuing: None,
            next_stream: 1,
            server: ServerSettings::default(),
            settled: false,
            send_window: i64::from(DEFAULT_WINDOW),
            unacked: 0,
            hash,
            events: Vec::with_capacity(64),
        }
    }

    /// The next stream id, or None when ids ran out (the connection must be replaced).
    #[inline]
    pub(crate) fn next_stream(&mut self) -> Option<u32> {
        let id = self.next_stream;
        if id > 0x7fff_fff0 {
            return None;
        }
        self.next_stream += 2;
        Some(id)
    }

    /// Streams this connection may have open: the client's ask within the server's limit.
    #[inline]
    pub(crate) fn streams(&self, asked: usize) -> usize {
        self.server.max_concurrent_streams.map_or(asked, |m| asked.min(m as usize))
    }

    /// Whether the server's windows take a body of `len` bytes now; if so they are spent.
    #[inline]
    pub(crate) fn take_window(&mut self, len: u32) -> bool {
        if len == 0 {
            return true;
        }
        if i64::from(len) > self.send_window || len > self.server.initial_window_size {
            return false;
        }
        self.send_window -= i64::from(len);
        true
    }

    /// Reads `data`, updating the records in `inflight` and writing the frames the server is owed
    /// onto `out`; events queue in `events`.
    pub(crate) fn feed(&mut self, mut data: &[u8], inflight: &mut VecDeque<InFlight>, out: &mut Vec<u8>) -> Result<(), H2Error> {
        while !data.is_empty() {
            let Some(h) = self.frame else {
                let n = (HEAD - self.head_len).min(data.len());
                self.head[self.head_len..self.head_len + n].copy_from_slice(&data[..n]);
                self.head_len += n;
                data = &data[n..];
                if self.head_len == HEAD {
                    self.head_len = 0;
                    self.begin(FrameHead::parse(&self.head), inflight, out)?;
                }
                continue;
            };
            let n = ((h.len - self.read) as usize).min(data.len());
            let (chunk, rest) = data.split_at(n);
            data = rest;
            if h.kind == kind::DATA {
                self.data(h, chunk, inflight)?;
            } else {
                self.payload.extend_from_slice(chunk);
                self.read += n as u32;
            }
            if self.read == h.len {
                self.end(h, inflight, out)?;
            }
        }
        Ok(())
    }

    /// A frame header read: checks it; a frame without payload ends at once.
    fn begin(&mut self, h: FrameHead, inflight: &mut VecDeque<InFlight>, out: &mut Vec<u8>) -> Result<(), H2Error> {
        if !self.settled && h.kind != kind::SETTINGS {
            return Err(if &self.head[..5] == b"HTTP/" {
                H2Error::new("the server answered the HTTP/2 preface in HTTP/1.1: it does not speak HTTP/2 on this port (h2c needs prior-knowledge support)")
            } else {
                H2Error::new("the server's first frame was not SETTINGS: it does not speak HTTP/2 on this port")
            });
        }
        if h.len > MAX_FRAME {
            return Err(H2Error(format!("a frame of {} bytes, above the {MAX_FRAME} the client allows", h.len)));
        }
        if self.continuing.is_some() && h.kind != kind::CONTINUATION {
            return Err(H2Error::new("a header block interrupted by another frame"));
        }
        self.frame = Some(h);
        self.read = 0;
        self.body_end = h.len;
        self.payload.clear();
        if h.len == 0 {
            self.end(h, inflight, out)?;
        }
        Ok(())
    }

    /// Part of a DATA frame: its body bytes counted (and hashed) on their stream's record.
    fn data(&mut self, h: FrameHead, chunk: &[u8], inflight: &mut VecDeque<InFlight>) -> Result<(), H2Error> {
        let start = self.read;
        self.read += chunk.len() as u32;
        let mut body_start = 0;
        if h.flags & flag::PADDED != 0 {
            body_start = 1;
            if start == 0 {
                let pad = u32::from(chunk[0]);
                if pad >= h.len {
                    return Err(H2Error::new("DATA padding longer than its frame"));
                }
                self.body_end = h.len - pad;
            }
        }
        let from = body_start.max(start);
        let to = self.body_end.min(self.read);
        if from < to {
            let body = &chunk[(from - start) as usize..(to - start) as usize];
            if let Some(r) = find(inflight, h.stream) {
                r.got.body_len += body.len() as u64;
                if self.hash {
                    r.got.body_hash = fnv1a64_update(r.got.body_hash, body);
                }
            }
        }
        Ok(())
    }

    /// A whole frame read: acted on.
    fn end(&mut self, h: FrameHead, inflight: &mut VecDeque<InFlight>, out: &mut Vec<u8>) -> Result<(), H2Error> {
        self.frame = None;
        match h.kind {
            kind::DATA => {
                if h.stream == 0 {
                    return Err(H2Error::new("DATA on stream 0"));
                }
                self.give_back(h.len, out);
                if h.flags & flag::END_STREAM != 0 {
                    self.events.push(Event::Done(h.stream));
                }
            }
            kind::HEADERS => self.headers(h, inflight)?,
            kind::CONTINUATION => {
                let Some(b) = self.continuing.as_ref().filter(|b| b.stream == h.stream) else {
                    return Err(H2Error::new("a CONTINUATION frame without its HEADERS"));
                };
                let (stream, end_stream) = (b.stream, b.end_stream);
                self.block.extend_from_slice(&self.payload);
                if h.flags & flag::END_HEADERS != 0 {
                    self.continuing = None;
                    let block = std::mem::take(&mut self.block);
                    let res = self.response_head(stream, end_stream, &block, inflight);
                    self.block = block;
                    self.block.clear();
                    res?;
                }
            }
            kind::SETTINGS => self.settings(h, out)?,
            kind::PING => {
                if h.len != 8 {
                    return Err(H2Error::new("a PING frame that is not 8 bytes"));
                }
                if h.flags & flag::ACK == 0 {
                    frame::put_head(out, 8, kind::PING, flag::ACK, 0);
                    out.extend_from_slice(&self.payload);
                }
            }
            kind::WINDOW_UPDATE => {
                let inc = self.word(0, "WINDOW_UPDATE")? & 0x7fff_ffff;
                if h.stream == 0 {
                    self.send_window += i64::from(inc);
                }
            }
            kind::RST_STREAM => {
                let code = self.word(0, "RST_STREAM")?;
                self.events.push(Event::Reset(h.stream, code));
            }
            kind::GOAWAY => {
                let last = self.word(0, "GOAWAY")? & 0x7fff_ffff;
                let code = self.word(4, "GOAWAY")?;
                self.events.push(Event::GoAway { last, code });
            }
            kind::PUSH_PROMISE => return Err(H2Error::new("the server pushed a stream though the client's SETTINGS disabled push")),
            // PRIORITY, and kinds this client does not know, are ignored (RFC 9113 4.1, 5.5).
            _ => {}
        }
        Ok(())
    }

    /// A HEADERS frame: its fragment decoded now, or kept until END_HEADERS.
    fn headers(&mut self, h: FrameHead, inflight: &mut VecDeque<InFlight>) -> Result<(), H2Error> {
        if h.stream == 0 {
            return Err(H2Error::new("HEADERS on stream 0"));
        }
        let p = &self.payload[..];
        let (mut from, mut to) = (0usize, p.len());
        if h.flags & flag::PADDED != 0 {
            let pad = usize::from(*p.first().ok_or_else(|| H2Error::new("HEADERS padding without its length"))?);
            from = 1;
            to = to.checked_sub(pad).filter(|&t| t >= from).ok_or_else(|| H2Error::new("HEADERS padding longer than its frame"))?;
        }
        if h.flags & flag::PRIORITY != 0 {
            from += 5;
        }
        if from > to {
            return Err(H2Error::new("a HEADERS frame too short for its flags"));
        }
        let end_stream = h.flags & flag::END_STREAM != 0;
        if h.flags & flag::END_HEADERS == 0 {
            self.block.clear();
            self.block.extend_from_slice(&self.payload[from..to]);
            self.continuing = Some(Block { stream: h.stream, end_stream });
            return Ok(());
        }
        let payload = std::mem::take(&mut self.payload);
        let res = self.response_head(h.stream, end_stream, &payload[from..to], inflight);
        self.payload = payload;
        res
    }

    /// A complete header block of `stream`: the table kept in step, the status noted on the record
    /// (an informational 1xx is not the response; a block after the status is trailers).
    fn response_head(&mut self, stream: u32, end_stream: bool, block: &[u8], inflight: &mut VecDeque<InFlight>) -> Result<(), H2Error> {
        let fields = self.hpack.decode(block).map_err(|e| H2Error(format!("a header block HPACK cannot decode: {}", e.0)))?;
        if let (Some(status), Some(r)) = (fields.status, find(inflight, stream)) {
            if r.got.status == 0 && status >= 200 {
                r.got.status = status;
            }
        }
        if end_stream {
            self.events.push(Event::Done(stream));
        }
        Ok(())
    }

    /// The server's SETTINGS applied and acknowledged; the first one settles the connection.
    fn settings(&mut self, h: FrameHead, out: &mut Vec<u8>) -> Result<(), H2Error> {
        if h.stream != 0 {
            return Err(H2Error::new("SETTINGS on a stream"));
        }
        if h.flags & flag::ACK != 0 {
            return Ok(());
        }
        if !h.len.is_multiple_of(6) {
            return Err(H2Error::new("a SETTINGS frame whose length is not a multiple of 6"));
        }
        for entry in self.payload.chunks_exact(6) {
            let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
            let s = &mut self.server;
            match u16::from_be_bytes([entry[0], entry[1]]) {
                setting::HEADER_TABLE_SIZE => s.header_table_size = value,
                setting::MAX_CONCURRENT_STREAMS => s.max_concurrent_streams = Some(value),
                setting::INITIAL_WINDOW_SIZE => s.initial_window_size = value,
                setting::MAX_FRAME_SIZE => s.max_frame_size = value,
                setting::MAX_HEADER_LIST_SIZE => s.max_header_list_size = Some(value),
                _ => {}
            }
        }
        frame::put_head(out, 0, kind::SETTINGS, flag::ACK, 0);
        if !self.settled {
            self.settled = true;
            self.events.push(Event::Settled);
        }
        Ok(())
    }

    /// Gives DATA bytes back to the connection window once half of it is spent (stream windows
    /// are the client's 2^30 - 1 each: a benchmark's response never exhausts one).
    fn give_back(&mut self, n: u32, out: &mut Vec<u8>) {
        self.unacked += n;
        if self.unacked >= CLIENT_WINDOW / 2 {
            frame::put_window_update(out, 0, self.unacked);
            self.unacked = 0;
        }
    }

    /// The big-endian u32 at `at` of the payload.
    fn word(&self, at: usize, what: &str) -> Result<u32, H2Error> {
        let b = self.payload.get(at..at + 4).ok_or_else(|| H2Error(format!("a {what} frame too short")))?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The in-flight record of `stream`: nearly always the oldest, as servers answer mostly in order.
#[inline]
pub(crate) fn find(inflight: &mut VecDeque<InFlight>, stream: u32) -> Option<&mut InFlight> {
    inflight.iter_mut().find(|r| r.stream == stream)
}
