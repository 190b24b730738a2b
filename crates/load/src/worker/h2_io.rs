//! The request path of an HTTP/2 connection: the preface once the transport is ready (TCP for h2c,
//! the TLS handshake with ALPN `h2` otherwise), frames read by the connection's session, and its
//! events (settled, a stream done, reset or dropped by GOAWAY) turned into answered or failed
//! requests. Requests go out as frames in `requests::fill`, many streams per connection.

use crate::conn::ConnState;
use crate::h2::frame;
use crate::h2::session::{Event, Session};
use crate::inflight::InFlight;
use crate::parser::{Framing, Response};
use crate::report::ErrorKind;

use super::Worker;

impl Worker<'_> {
    /// Connection `i`'s transport is ready: the preface and SETTINGS go out, and the connection
    /// waits for the server's SETTINGS before it carries requests.
    pub(super) fn start_h2(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        c.h2 = Some(Box::new(Session::new(self.hash)));
        frame::put_preface(&mut c.wbuf);
        c.state = ConnState::Handshaking;
        c.since = now;
        self.write(i, now);
    }

    /// Plaintext of HTTP/2 connection `i`: frames read, then their events acted on in order.
    pub(super) fn process_h2(&mut self, i: usize, now: u64, data: &[u8]) {
        let generation = self.conns[i].generation;
        let c = &mut self.conns[i];
        let Some(session) = c.h2.as_mut() else { return };
        let fed = session.feed(data, &mut c.inflight, &mut c.wbuf);
        let mut events = std::mem::take(&mut session.events);
        for &ev in &events {
            self.h2_event(i, now, ev);
            if self.conns[i].generation != generation {
                return;
            }
        }
        events.clear();
        if let Some(s) = self.conns[i].h2.as_mut() {
            // The queue's buffer goes back, so events never allocate after the first.
            s.events = events;
        }
        if let Err(e) = fed {
            self.h2_failed(i, now, &e.0);
            return;
        }
        if !self.conns[i].wbuf.is_empty() {
            self.write(i, now);
        }
        self.refill.push(i);
    }

    fn h2_event(&mut self, i: usize, now: u64, ev: Event) {
        match ev {
            Event::Settled => {
                let asked = self.pipeline;
                if let (Some(stats), Some(s)) = (self.h2_stats.as_mut(), self.conns[i].h2.as_deref()) {
                    stats.settled(s.server, s.streams(asked));
                }
                if self.conns[i].state == ConnState::Handshaking {
                    self.opened(i, now);
                }
            }
            Event::Done(stream) => {
                let Some(req) = self.take_stream(i, stream) else { return };
                if req.got.status == 0 {
                    // A stream that ended without a final status answered nothing.
                    self.inflight -= 1;
                    self.note_h2_error(&format!("stream {stream} ended without a :status"));
                    self.stream_failed(now, &req, ErrorKind::Malformed);
                    return;
                }
                let resp = Response {
                    status: req.got.status,
                    body_len: req.got.body_len,
                    body_hash: req.got.body_hash,
                    close: false,
                    framing: Framing::Frames,
                };
                self.answered(i, now, req, resp);
            }
            Event::Reset(stream, code) => {
                if let Some(s) = self.h2_stats.as_mut() {
                    s.resets += 1;
                }
                let Some(req) = self.take_stream(i, stream) else { return };
                self.inflight -= 1;
                if code == REFUSED_STREAM {
                    // Not processed: safe to send again (RFC 9113 8.7).
                    self.retry.push_back(req.intended);
                } else {
                    self.note_h2_error(&format!("the server reset stream {stream} ({})", error_name(code)));
                    self.stream_failed(now, &req, ErrorKind::Reset);
                }
            }
            Event::GoAway { last, code } => {
                if let Some(s) = self.h2_stats.as_mut() {
                    s.goaways += 1;
                }
                if code != 0 {
                    self.note_h2_error(&format!("the server sent GOAWAY ({})", error_name(code)));
                }
                // Streams above `last` were never processed: after a graceful GOAWAY (a server
                // that limits requests per connection) they go again on another connection; after
                // an error each is a failed request.
                while let Some(pos) = self.conns[i].inflight.iter().position(|r| r.stream > last) {
                    let req = self.conns[i].inflight.remove(pos).expect("a position found");
                    self.inflight -= 1;
                    if code == 0 {
                        self.retry.push_back(req.intended);
                    } else {
                        self.stream_failed(now, &req, ErrorKind::Reset);
                    }
                }
                self.conns[i].draining = true;
                if self.conns[i].inflight.is_empty() {
                    self.recycle(i, now, None);
                }
            }
        }
    }

    /// The in-flight record of `stream` on connection `i`, removed.
    fn take_stream(&mut self, i: usize, stream: u32) -> Option<InFlight> {
        let c = &mut self.conns[i];
        let pos = c.inflight.iter().position(|r| r.stream == stream)?;
        c.inflight.remove(pos)
    }

    /// One request that failed on its own stream (the connection goes on).
    fn stream_failed(&mut self, now: u64, req: &InFlight, kind: ErrorKind) {
        self.rec.error(now, kind, 1);
        if let Some(d) = self.deck {
            self.rec.kind_error(d.entries[req.entry as usize].kind, now, kind, 1);
        }
    }

    /// A connection error: before the server's SETTINGS a failed attempt (a server that does not
    /// speak HTTP/2 there), after them the requests in flight lost.
    pub(super) fn h2_failed(&mut self, i: usize, now: u64, why: &str) {
        self.note_h2_error(why);
        if self.conns[i].state == ConnState::Handshaking {
            self.attempt_failed(i, now, ErrorKind::Malformed);
        } else {
            self.recycle(i, now, Some(ErrorKind::Malformed));
        }
    }

    fn note_h2_error(&mut self, why: &str) {
        if let Some(s) = self.h2_stats.as_mut() {
            s.error(why);
        }
    }
}

/// RFC 9113 7: the server did not process the stream.
const REFUSED_STREAM: u32 = 0x7;

/// RFC 9113 7: an error code's name.
fn error_name(code: u32) -> String {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    NAMES.get(code as usize).map_or_else(|| format!("error code {code:#x}"), |n| (*n).to_string())
}
