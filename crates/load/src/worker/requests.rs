//! The request path of a worker: socket events in, responses parsed and checked, due requests
//! written out. Everything here runs per request; nothing allocates once the buffers have grown.

use std::io::{self, Read, Write};

use crate::conn::{untoken, ConnState, NOT_READY};
use crate::inflight::{Got, InFlight};
use crate::parser::Response;
use crate::report::ErrorKind;
use crate::target::Protocol;

use super::{advance, Worker};

// `#[inline]` on the three methods the loop in worker.rs calls every pass: that loop is another
// module, and the hint keeps them inlinable there as they were when all of it was one file.
impl Worker<'_> {
    #[inline]
    pub(super) fn on_event(&mut self, ev: &mio::event::Event, rbuf: &mut [u8]) {
        if ev.token() == crate::timer::TIMER {
            // The send timer only wakes the loop; the pump after the wait sends what is due.
            return;
        }
        let (i, generation) = untoken(ev.token());
        if i >= self.conns.len() || self.conns[i].generation != generation {
            return;
        }
        let now = self.now();
        match self.conns[i].state {
            ConnState::Idle => {}
            ConnState::Connecting => {
                let s = self.conns[i].stream.as_ref().expect("connecting has a socket");
                let connected = match s.take_error() {
                    Ok(Some(_)) | Err(_) => Some(false),
                    Ok(None) => match s.peer_addr() {
                        Ok(_) => Some(true),
                        Err(e) if e.kind() == io::ErrorKind::NotConnected => None,
                        Err(_) => Some(false),
                    },
                };
                match connected {
                    Some(true) if self.tls.is_some() => self.start_tls(i, now),
                    Some(true) if self.plan.protocol == Protocol::Http2 => self.start_h2(i, now),
                    Some(true) => self.opened(i, now),
                    Some(false) => self.connect_failed(i, now),
                    None => {}
                }
            }
            ConnState::Handshaking | ConnState::Open => {
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(i, now, rbuf);
                }
                let c = &self.conns[i];
                let output = !c.wbuf.is_empty() || c.tls.as_ref().is_some_and(|t| t.wants_write());
                if matches!(c.state, ConnState::Handshaking | ConnState::Open) && ev.is_writable() && output {
                    self.write(i, now);
                }
            }
        }
    }

    /// Connection `i` can carry requests (connected, and over TLS its handshake done): a deck's
    /// login goes first, else its share of the due requests.
    pub(super) fn opened(&mut self, i: usize, now: u64) {
        self.conns[i].state = ConnState::Open;
        if self.login.is_some() {
            self.send_login(i, now);
        } else {
            self.fill(i, now);
        }
    }

    fn read(&mut self, i: usize, now: u64, rbuf: &mut [u8]) {
        if self.conns[i].tls.is_some() {
            return self.read_tls(i, now, rbuf);
        }
        let generation = self.conns[i].generation;
        loop {
            let res = match self.conns[i].stream.as_mut() {
                Some(s) => s.read(rbuf),
                None => return,
            };
            match res {
                Ok(0) => {
                    self.eof(i, now);
                    return;
                }
                Ok(n) => {
                    self.rec.bytes(now, n);
                    self.process(i, now, &rbuf[..n]);
                    if self.conns[i].generation != generation || self.conns[i].state != ConnState::Open {
                        return;
                    }
                    // Edge-triggered: a short read means the socket is drained,
                    // and new data raises a new edge; skip the EAGAIN syscall.
                    if n < rbuf.len() {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.recycle(i, now, Some(ErrorKind::Read));
                    return;
                }
            }
        }
    }

    pub(super) fn eof(&mut self, i: usize, now: u64) {
        if self.conns[i].state == ConnState::Handshaking {
            // Closed before the connection could carry a request (HTTP/2 before its SETTINGS).
            self.h2_failed(i, now, "the server closed the connection before its HTTP/2 SETTINGS");
            return;
        }
        if self.logging_in(i) {
            // Closed before the login was answered, or after an answer that needed the close.
            self.login_failed(i, now);
            return;
        }
        match self.conns[i].parser.finish() {
            Ok(Some(resp)) => {
                self.respond(i, now, resp);
                if self.conns[i].state == ConnState::Open {
                    self.recycle(i, now, Some(ErrorKind::Read));
                }
            }
            // Closed between responses: only the unanswered requests failed.
            Ok(None) => self.recycle(i, now, Some(ErrorKind::Read)),
            Err(_) => self.recycle(i, now, Some(ErrorKind::Read)),
        }
    }

    pub(super) fn process(&mut self, i: usize, now: u64, mut data: &[u8]) {
        if self.conns[i].h2.is_some() {
            return self.process_h2(i, now, data);
        }
        if self.logging_in(i) {
            match self.login_read(i, now, data) {
                Some(rest) => data = rest,
                None => return,
            }
        }
        let generation = self.conns[i].generation;
        while !data.is_empty() {
            if let Some(d) = self.deck.filter(|d| d.has_head) {
                // A response to HEAD has no body whatever its head says: the parser must know
                // which request this response answers.
                let c = &mut self.conns[i];
                let head = c.inflight.front().is_some_and(|r| d.entries[r.entry as usize].head);
                c.parser.set_head_request(head);
            }
            match self.conns[i].parser.parse(data) {
                Ok((used, Some(resp))) => {
                    data = &data[used..];
                    self.respond(i, now, resp);
                    if self.conns[i].generation != generation {
                        return;
                    }
                }
                Ok((_, None)) => break,
                Err(_) => {
                    self.recycle(i, now, Some(ErrorKind::Malformed));
                    return;
                }
            }
        }
        // Refill once per event-loop pass, not once per response: every slot
        // freed by this read goes out in a single write, after every readable
        // connection of this pass was read. The server then finds a burst of
        // requests per wakeup, as it does with wrk, instead of one at a time.
        self.refill.push(i);
    }

    /// A complete HTTP/1.1 response on connection `i`: the answer to its oldest request.
    fn respond(&mut self, i: usize, now: u64, resp: Response) {
        let Some(req) = self.conns[i].inflight.pop_front() else {
            // An answer to nothing we asked: the stream is out of sync.
            self.recycle(i, now, Some(ErrorKind::Malformed));
            return;
        };
        self.answered(i, now, req, resp);
    }

    /// `req`, taken off connection `i`, answered by `resp`: checked and recorded.
    pub(super) fn answered(&mut self, i: usize, now: u64, req: InFlight, resp: Response) {
        self.inflight -= 1;
        self.last_answer_ns = now;
        let (c, kind) = match self.deck {
            Some(d) => {
                let e = &d.entries[req.entry as usize];
                (&e.checks, Some(e.kind))
            }
            None => (self.checks, None),
        };
        if now.saturating_sub(req.intended) > self.timeout_ns {
            // Past the timeout: an error, never a latency sample.
            self.rec.error(now, ErrorKind::Timeout, 1);
            if let Some(k) = kind {
                self.rec.kind_error(k, now, ErrorKind::Timeout, 1);
            }
        } else {
            let verdict = if !c.status_ok(resp.status) {
                Some(ErrorKind::Status(resp.status))
            } else if c.expect_length.is_some_and(|l| l != resp.body_len) || c.expect_body_hash.is_some_and(|h| h != resp.body_hash) {
                Some(ErrorKind::BodyMismatch)
            } else {
                None
            };
            self.rec.response(now, req.intended, req.sent, verdict);
            if let Some(k) = kind {
                self.rec.kind_response(k, now, req.intended, verdict);
            }
            if now >= self.measure_start_ns {
                self.conns[i].answered += 1;
            }
        }
        let c = &self.conns[i];
        if resp.close {
            // The server is done with this socket; anything still pipelined is lost.
            self.recycle(i, now, Some(ErrorKind::Read));
        } else if (c.draining || self.plan.close) && c.inflight.is_empty() {
            self.recycle(i, now, None);
        }
    }

    /// Hands connection `i` as many due requests as its pipeline allows and
    /// writes them in one syscall.
    #[inline]
    pub(super) fn fill(&mut self, i: usize, now: u64) {
        if self.stopping {
            return;
        }
        let capacity = self.capacity(i);
        let c = &mut self.conns[i];
        if c.state != ConnState::Open || c.draining {
            return;
        }
        // Closed model with pipelining: a connection sends its P requests as
        // one batch and the next batch when all are answered. Topping up a
        // slot per response would turn each batch into many small writes,
        // and the server's cost per request (one read per write) would set
        // the throughput, not the pipeline depth. HTTP/2 streams are
        // independent: each finished one is replaced (as h2load does).
        if !self.open && self.pipeline > 1 && c.h2.is_none() && !c.inflight.is_empty() {
            return;
        }
        let mut added = 0;
        while c.inflight.len() < capacity {
            // Requests an HTTP/2 server refused unprocessed go again first, at their own time.
            let retried = self.retry.front().copied();
            let Some(intended) = retried.or_else(|| self.pacer.due(now)) else { break };
            let mut stream = 0;
            if let Some(s) = c.h2.as_mut() {
                // Over HTTP/2 a request needs a stream id, and a body room in the server's windows.
                let frames = match self.deck {
                    Some(d) => d.entries[self.deck_cursor].h2.as_ref(),
                    None => self.plan.targets[self.groups[c.group].targets[c.cursor]].h2.as_ref(),
                };
                let body = frames.map_or(0, |f| f.body_len);
                if !s.take_window(body) {
                    break;
                }
                let Some(id) = s.next_stream() else {
                    c.draining = true;
                    break;
                };
                stream = id;
            }
            if retried.is_some() {
                self.retry.pop_front();
            } else {
                self.pacer.take();
            }
            if now - intended > self.timeout_ns {
                // Owed for longer than the timeout: it would be an error
                // whenever it went out, so count it without sending it (it takes its deck entry,
                // so the mix stays the deck's).
                self.rec.error(now, ErrorKind::Timeout, 1);
                if let Some(d) = self.deck {
                    let e = advance(&mut self.deck_cursor, d.entries.len());
                    self.rec.kind_error(d.entries[e].kind, now, ErrorKind::Timeout, 1);
                }
                continue;
            }
            if self.open && added == 0 && c.ready_since != NOT_READY {
                // The connection was free since `ready_since` and the request
                // due since `intended`: any delay past both is the client's.
                let lag = now.saturating_sub(intended.max(c.ready_since));
                if lag > self.rec.max_lag_ns && self.rec.measuring(now) {
                    self.rec.max_lag_ns = lag;
                }
            }
            let (request, entry) = match self.deck {
                Some(d) => {
                    let e = advance(&mut self.deck_cursor, d.entries.len());
                    let request = match (self.sessions.get(i), d.entries[e].h2.as_ref().filter(|_| stream != 0)) {
                        (_, Some(frames)) => {
                            frames.write(&mut c.wbuf, stream);
                            &[][..]
                        }
                        (Some(s), None) => s.request(d, e),
                        (None, None) => &d.entries[e].request[..],
                    };
                    (request, e as u32)
                }
                None => {
                    let g = &self.groups[c.group];
                    let t = &self.plan.targets[g.targets[c.cursor]];
                    c.cursor = (c.cursor + 1) % g.targets.len();
                    if let Some(frames) = t.h2.as_ref().filter(|_| stream != 0) {
                        frames.write(&mut c.wbuf, stream);
                        (&[][..], 0)
                    } else {
                        (&t.request[..], 0)
                    }
                }
            };
            c.wbuf.extend_from_slice(request);
            c.inflight.push_back(InFlight { intended, sent: now, entry, stream, got: Got::NONE });
            c.sent_on_socket += 1;
            added += 1;
            if self.plan.requests_per_conn.is_some_and(|k| c.sent_on_socket >= k) || self.plan.close {
                c.draining = true;
                break;
            }
        }
        self.inflight += added;
        if added > 0 {
            self.write(i, now);
        }
        self.mark_ready(i, now);
    }

    /// Requests connection `i` may have in flight: the pipeline, or over HTTP/2 the streams the
    /// server allows of those asked.
    #[inline]
    fn capacity(&self, i: usize) -> usize {
        match self.conns[i].h2.as_deref() {
            Some(s) => s.streams(self.pipeline),
            None => self.pipeline,
        }
    }

    /// Puts connection `i` on the ready stack if it can take another request, and notes since when.
    #[inline]
    fn mark_ready(&mut self, i: usize, now: u64) {
        let capacity = self.capacity(i);
        let c = &mut self.conns[i];
        if c.state == ConnState::Open && !c.draining && c.inflight.len() < capacity {
            if c.ready_since == NOT_READY {
                c.ready_since = now;
            }
            // `in_ready` <=> on the stack: never pushed twice, so the stack
            // stays bounded by the connection count.
            if !c.in_ready {
                c.in_ready = true;
                self.ready.push(i);
            }
        } else {
            c.ready_since = NOT_READY;
        }
    }

    pub(super) fn write(&mut self, i: usize, now: u64) {
        if self.conns[i].tls.is_some() {
            return self.write_tls(i, now);
        }
        let c = &mut self.conns[i];
        let Some(s) = c.stream.as_mut() else { return };
        let failed = loop {
            if c.woff >= c.wbuf.len() {
                c.wbuf.clear();
                c.woff = 0;
                break false;
            }
            match s.write(&c.wbuf[c.woff..]) {
                Ok(0) => break true,
                Ok(n) => c.woff += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break true,
            }
        };
        if failed {
            self.recycle(i, now, Some(ErrorKind::Write));
        }
    }

    /// Open model: give due requests to connections that have room.
    #[inline]
    pub(super) fn pump(&mut self, now: u64) {
        while self.pacer.due(now).is_some() || !self.retry.is_empty() {
            let Some(i) = self.ready.pop() else { break };
            self.conns[i].in_ready = false;
            self.fill(i, now);
        }
    }
}
