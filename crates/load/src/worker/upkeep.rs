//! A worker's upkeep, off the request path: connecting and reconnecting, dropping sockets, the
//! housekeeping tick (timeouts, retries) and the watch for a stalled server.

use mio::Interest;

use crate::conn::{token, ConnState};
use crate::report::ErrorKind;

use super::{advance, Worker, CONNECT_BACKOFF_NS, STALL_NS};

impl Worker<'_> {
    pub(super) fn connect(&mut self, i: usize, now: u64) {
        let addr = self.groups[self.conns[i].group].addr;
        let res = mio::net::TcpStream::connect(addr).and_then(|mut s| {
            let _ = s.set_nodelay(true);
            let c = &self.conns[i];
            self.poll.registry().register(&mut s, token(i, c.generation), Interest::READABLE | Interest::WRITABLE)?;
            Ok(s)
        });
        let c = &mut self.conns[i];
        match res {
            Ok(s) => {
                c.stream = Some(s);
                c.state = ConnState::Connecting;
                c.since = now;
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    pub(super) fn connect_failed(&mut self, i: usize, now: u64) {
        self.attempt_failed(i, now, ErrorKind::Connect);
    }

    /// A connection attempt that failed before it could carry a request (its connect, or its TLS
    /// handshake): one `kind` error, then a retry after the backoff.
    pub(super) fn attempt_failed(&mut self, i: usize, now: u64, kind: ErrorKind) {
        self.rec.error(now, kind, 1);
        // A request-count run must end even if nothing ever connects: a failed
        // connect uses up one attempt of the closed model's budget.
        if !self.open && self.pacer.due(now).is_some() && !self.pacer.unlimited() {
            self.pacer.take();
        }
        self.drop_socket(i);
        self.conns[i].retry_at = now + CONNECT_BACKOFF_NS;
    }

    pub(super) fn drop_socket(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if let Some(mut s) = c.stream.take() {
            let _ = self.poll.registry().deregister(&mut s);
        }
        self.inflight -= c.inflight.len() as u64;
        c.reset_socket();
        if let Some(s) = self.sessions.get_mut(i) {
            s.waiting = false;
        }
    }

    /// Ends the socket: in-flight requests count as `kind` errors (none if
    /// `kind` is None), then reconnect at once unless stopping (a login still unanswered is a
    /// failed login, retried after its backoff).
    pub(super) fn recycle(&mut self, i: usize, now: u64, kind: Option<ErrorKind>) {
        if self.logging_in(i) {
            // Nothing of the deck is in flight: the login failed, and its backoff applies.
            self.login_failed(i, now);
            return;
        }
        if let Some(k) = kind {
            let n = self.conns[i].inflight.len() as u64;
            self.rec.error(now, k, n.max(u64::from(k == ErrorKind::Malformed)));
            self.inflight_kind_errors(i, now, k);
        }
        self.drop_socket(i);
        if !self.stopping && self.wants_connections() {
            self.connect(i, now);
        }
    }

    /// Whether requests are still to be sent: the open model always, the closed one until its
    /// budget is spent (or HTTP/2 requests wait to be sent again). A request-count run opens no
    /// connection it has nothing to send on (nor logs one in).
    fn wants_connections(&self) -> bool {
        self.open || !self.pacer.exhausted() || !self.retry.is_empty()
    }

    pub(super) fn housekeeping(&mut self, now: u64) {
        self.watch_stall(now);
        // Requests owed for longer than the timeout with no connection free to
        // carry them are timeouts; this also bounds the backlog of a dead server.
        while self.pacer.due(now.saturating_sub(self.timeout_ns)).is_some() && self.open {
            self.pacer.take();
            self.rec.error(now, ErrorKind::Timeout, 1);
            if let Some(d) = self.deck {
                let e = advance(&mut self.deck_cursor, d.entries.len());
                self.rec.kind_error(d.entries[e].kind, now, ErrorKind::Timeout, 1);
            }
        }
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.state {
                ConnState::Idle => {
                    if now >= c.retry_at && !self.stopping && self.wants_connections() {
                        self.connect(i, now);
                    }
                }
                ConnState::Connecting => {
                    if now - c.since > self.timeout_ns {
                        self.connect_failed(i, now);
                    }
                }
                ConnState::Handshaking => {
                    if now - c.since <= self.timeout_ns {
                    } else if c.h2.is_some() {
                        self.h2_failed(i, now, "the server sent no HTTP/2 SETTINGS within the timeout");
                    } else {
                        self.handshake_failed(i, now, "the server did not complete the TLS handshake within the timeout");
                    }
                }
                ConnState::Open => {
                    if self.login_late(i, now) {
                        self.login_failed(i, now);
                    } else if c.inflight.front().is_some_and(|r| now - r.sent > self.timeout_ns) {
                        self.recycle(i, now, Some(ErrorKind::Timeout));
                    }
                }
            }
        }
    }

    /// Notes the first silence of at least [`STALL_NS`] with requests outstanding in the measured
    /// window, and how long it lasted (to the last tick that was still silent).
    pub(super) fn watch_stall(&mut self, now: u64) {
        if self.inflight == 0 {
            self.last_answer_ns = now;
            return;
        }
        let silent = now.saturating_sub(self.last_answer_ns);
        if silent < STALL_NS || now < self.measure_start_ns {
            return;
        }
        match &mut self.stall {
            None => self.stall = Some((self.last_answer_ns, now)),
            Some((start, end)) if *start == self.last_answer_ns => *end = now,
            Some(_) => {}
        }
    }

    /// At the end of a step that finds this thread stalled (no response for [`STALL_NS`]),
    /// requests that have waited at least that long are `unanswered` errors. Younger ones are the
    /// normal last requests of busy connections; and while responses still arrive, old requests
    /// are a slow or starving server (a loop of a second per request, one keep-alive connection
    /// per worker), which other numbers show, not a hang.
    pub(super) fn count_unanswered(&mut self, now: u64) {
        if now.saturating_sub(self.last_answer_ns) < STALL_NS {
            return;
        }
        let old = self.conns.iter().flat_map(|c| c.inflight.iter()).filter(|r| now.saturating_sub(r.sent) >= STALL_NS).count();
        self.rec.error(now, ErrorKind::Unanswered, old as u64);
        if let Some(d) = self.deck {
            for r in self.conns.iter().flat_map(|c| c.inflight.iter()).filter(|r| now.saturating_sub(r.sent) >= STALL_NS) {
                self.rec.kind_error(d.entries[r.entry as usize].kind, now, ErrorKind::Unanswered, 1);
            }
        }
    }
}
