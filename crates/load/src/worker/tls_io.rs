//! The request path of a TLS connection: the handshake after the TCP connect, ciphertext from the
//! socket through rustls to the parser as plaintext, and the plaintext of `wbuf` out as records.
//! Plain connections never come here: they keep their one read and one write per pass.

use std::io::{self, Read, Write};

use crate::conn::ConnState;
use crate::report::ErrorKind;
use crate::target::Protocol;

use super::Worker;

impl Worker<'_> {
    /// The TCP connect of TLS connection `i` completed: its ClientHello goes out.
    pub(super) fn start_tls(&mut self, i: usize, now: u64) {
        let addr = self.groups[self.conns[i].group].addr;
        let Some(client) = self.tls.as_ref() else { return };
        match client.connect(addr) {
            Ok(session) => {
                let c = &mut self.conns[i];
                c.tls = Some(Box::new(session));
                c.state = ConnState::Handshaking;
                c.since = now;
                self.write_tls(i, now);
            }
            Err(e) => self.handshake_failed(i, now, &e.to_string()),
        }
    }

    /// Reads what the socket holds into the session, and hands the plaintext to the parser.
    pub(super) fn read_tls(&mut self, i: usize, now: u64, rbuf: &mut [u8]) {
        let generation = self.conns[i].generation;
        loop {
            let c = &mut self.conns[i];
            let (Some(s), Some(t)) = (c.stream.as_mut(), c.tls.as_mut()) else { return };
            let closed = match t.read_tls(s) {
                Ok(0) => true,
                Ok(n) => {
                    self.rec.bytes(now, n);
                    false
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.tls_lost(i, now, ErrorKind::Read, "the socket failed"),
            };
            if let Err(e) = t.process_new_packets() {
                // The alert that says why goes out before the socket is dropped.
                let _ = t.write_tls(s);
                return self.tls_lost(i, now, ErrorKind::Tls, &describe(&e, self.plan.protocol));
            }
            if c.state == ConnState::Handshaking && c.h2.is_none() && !t.is_handshaking() {
                self.handshake_done(i, now);
                if self.conns[i].generation != generation {
                    return;
                }
            }
            // No plaintext comes before the TLS handshake completes.
            let plaintext = self.conns[i].tls.as_ref().is_some_and(|t| !t.is_handshaking());
            if plaintext && (!self.drain_plaintext(i, now, rbuf) || self.conns[i].generation != generation) {
                return;
            }
            if closed {
                return self.tls_lost(i, now, ErrorKind::Read, "the server closed the connection during the handshake");
            }
            // Handshake messages and alerts the session owes the server (a TLS 1.3 key update).
            if self.conns[i].tls.as_ref().is_some_and(|t| t.wants_write()) {
                self.write_tls(i, now);
            }
        }
    }

    /// Hands the session's plaintext to the parser; false once the connection is gone or closed.
    fn drain_plaintext(&mut self, i: usize, now: u64, rbuf: &mut [u8]) -> bool {
        let generation = self.conns[i].generation;
        loop {
            let Some(t) = self.conns[i].tls.as_mut() else { return false };
            match t.reader().read(rbuf) {
                // A close_notify, or a close without one: the server is done with this socket.
                Ok(0) => {
                    self.eof(i, now);
                    return false;
                }
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.eof(i, now);
                    return false;
                }
                Ok(n) => {
                    self.process(i, now, &rbuf[..n]);
                    if self.conns[i].generation != generation {
                        return false;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(_) => {
                    self.recycle(i, now, Some(ErrorKind::Tls));
                    return false;
                }
            }
        }
    }

    /// Writes `wbuf`'s plaintext into the session and the session's records to the socket, as far as
    /// the socket takes them; the rest waits for the next writable event.
    pub(super) fn write_tls(&mut self, i: usize, now: u64) {
        let c = &mut self.conns[i];
        let (Some(s), Some(t)) = (c.stream.as_mut(), c.tls.as_mut()) else { return };
        let failed = loop {
            if c.woff < c.wbuf.len() && !t.is_handshaking() {
                match t.writer().write(&c.wbuf[c.woff..]) {
                    Ok(n) => c.woff += n,
                    Err(_) => break true,
                }
                if c.woff >= c.wbuf.len() {
                    c.wbuf.clear();
                    c.woff = 0;
                }
            }
            if !t.wants_write() {
                break false;
            }
            match t.write_tls(s) {
                Ok(0) => break true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break true,
            }
        };
        if failed {
            self.recycle(i, now, Some(ErrorKind::Write));
        }
    }

    /// The handshake of connection `i` completed: counted and timed, then the connection serves.
    fn handshake_done(&mut self, i: usize, now: u64) {
        let c = &self.conns[i];
        if let (Some(h), Some(t)) = (self.handshakes.as_mut(), c.tls.as_deref()) {
            h.handshake(t, now.saturating_sub(c.since), self.rec.measuring(now));
        }
        if self.plan.protocol == Protocol::Http2 {
            let alpn = c.tls.as_deref().and_then(|t| t.alpn_protocol()).map(|p| String::from_utf8_lossy(p).into_owned());
            if alpn.as_deref() != Some("h2") {
                let chose = alpn.map_or("no protocol".to_string(), |p| format!("`{p}`"));
                return self.handshake_failed(
                    i,
                    now,
                    &format!("the server chose {chose} by ALPN, not h2: it does not offer HTTP/2 over TLS"),
                );
            }
            return self.start_h2(i, now);
        }
        self.opened(i, now);
    }

    /// Connection `i` lost to `kind`: a failed handshake counts once as an attempt (as a refused
    /// connect does), a failure after it as the requests in flight.
    fn tls_lost(&mut self, i: usize, now: u64, kind: ErrorKind, why: &str) {
        if self.conns[i].state == ConnState::Handshaking {
            self.handshake_failed(i, now, why);
        } else {
            self.note_tls_error(why);
            self.recycle(i, now, Some(kind));
        }
    }

    /// A handshake that did not complete: one `tls` error, then a retry after the connect backoff.
    pub(super) fn handshake_failed(&mut self, i: usize, now: u64, why: &str) {
        self.note_tls_error(why);
        self.attempt_failed(i, now, ErrorKind::Tls);
    }

    /// Keeps the first TLS failure's words, for the report.
    fn note_tls_error(&mut self, why: &str) {
        if let Some(h) = self.handshakes.as_mut() {
            if h.first_error.is_none() {
                h.first_error = Some(why.to_string());
            }
        }
    }
}

/// A TLS failure in words a user can act on: the alerts a server sends when it refuses what the
/// client offered are named for what was refused.
fn describe(e: &rustls::Error, protocol: Protocol) -> String {
    use rustls::AlertDescription as Alert;
    match e {
        rustls::Error::AlertReceived(Alert::NoApplicationProtocol) => {
            let offered = String::from_utf8_lossy(protocol.alpn());
            format!("the server refused ALPN `{offered}` (alert no_application_protocol): it does not offer {} over TLS", protocol.name())
        }
        rustls::Error::AlertReceived(Alert::ProtocolVersion) => {
            "the server refused the TLS version offered (alert protocol_version): see --tls-version".to_string()
        }
        other => other.to_string(),
    }
}
