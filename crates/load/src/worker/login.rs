//! A worker's logins, off the request path: a deck with a login sends it first on every new
//! connection, reads the answer, captures its values and builds that connection's request bytes
//! once; a failed login is an error of kind `login` and the connection retries after a backoff.

use crate::deck::{PlanDeck, SHARED_SPAN};
use crate::parser::ParseSink;
use crate::report::ErrorKind;

use super::Worker;

/// Wait after a first failed login; doubled per failure in a row up to [`LOGIN_BACKOFF_MAX_NS`],
/// so a server refusing logins is neither hammered nor given up on.
const LOGIN_BACKOFF_NS: u64 = 20_000_000;
/// The longest wait between logins of one connection.
const LOGIN_BACKOFF_MAX_NS: u64 = 1_000_000_000;

/// One connection's login state and its own request bytes.
#[derive(Debug, Default)]
pub(super) struct Session {
    /// The login is sent and its answer not yet complete (the connection sends nothing else).
    pub waiting: bool,
    /// When the login was sent.
    since: u64,
    /// Which of the login's requests was sent.
    sent: usize,
    /// Failed logins in a row, for the backoff.
    failures: u32,
    /// The login answer's decoded body.
    body: Vec<u8>,
    /// The captured values.
    values: Vec<Vec<u8>>,
    /// This connection's bytes of the entries that take captured values.
    bytes: Vec<u8>,
    /// Each entry's range in `bytes`, or [`SHARED_SPAN`].
    spans: Vec<(u32, u32)>,
}

impl Session {
    /// Entry `e`'s bytes for this connection.
    #[inline]
    pub fn request<'d>(&'d self, deck: &'d PlanDeck, e: usize) -> &'d [u8] {
        match self.spans.get(e) {
            Some(&(a, b)) if (a, b) != SHARED_SPAN => &self.bytes[a as usize..b as usize],
            _ => &deck.entries[e].request,
        }
    }
}

/// Keeps the login answer's body, which the load generator otherwise only counts.
struct Keep<'a>(&'a mut Vec<u8>);

impl ParseSink for Keep<'_> {
    fn body(&mut self, data: &[u8]) {
        self.0.extend_from_slice(data);
    }
}

impl Worker<'_> {
    /// Sends the login on the newly open connection `i`; nothing else goes out until it is
    /// answered (`draining` keeps `fill` away and the connection off the ready stack).
    pub(super) fn send_login(&mut self, i: usize, now: u64) {
        let Some(login) = self.login else { return };
        let (request, _) = &login.requests[self.login_cursor];
        let s = &mut self.sessions[i];
        s.sent = self.login_cursor;
        self.login_cursor = (self.login_cursor + 1) % login.requests.len();
        s.waiting = true;
        s.since = now;
        s.body.clear();
        let c = &mut self.conns[i];
        c.draining = true;
        c.parser.set_head_request(false);
        c.wbuf.extend_from_slice(request);
        self.logins.sent += 1;
        self.write(i, now);
    }

    /// Reads the login's answer from `data`; the bytes after it, once the login succeeded (the
    /// caller goes on with them), else None (incomplete, or failed and the socket dropped).
    pub(super) fn login_read<'d>(&mut self, i: usize, now: u64, data: &'d [u8]) -> Option<&'d [u8]> {
        let s = &mut self.sessions[i];
        let parsed = self.conns[i].parser.parse_into(data, &mut Keep(&mut s.body));
        let (used, resp) = match parsed {
            Ok((used, Some(resp))) => (used, resp),
            Ok((_, None)) => return None,
            Err(_) => {
                self.login_failed(i, now);
                return None;
            }
        };
        let login = self.login.expect("a session waits only with a login");
        // An answer that closes the connection leaves nothing to send the deck on.
        if resp.status != login.requests[s.sent].1 || resp.close || !login.capture(&s.body, &mut s.values) {
            self.login_failed(i, now);
            return None;
        }
        let deck = self.deck.expect("a login comes with a deck");
        login.build(&deck.entries, &s.values, &mut s.bytes, &mut s.spans);
        s.waiting = false;
        s.failures = 0;
        self.conns[i].draining = false;
        Some(&data[used..])
    }

    /// A login that failed on connection `i`: counted, the socket dropped, a retry after the
    /// backoff. A request-count run uses up one attempt, as a failed connect does, so it ends.
    pub(super) fn login_failed(&mut self, i: usize, now: u64) {
        self.logins.failed += 1;
        self.rec.error(now, ErrorKind::Login, 1);
        if !self.open && self.pacer.due(now).is_some() && !self.pacer.unlimited() {
            self.pacer.take();
        }
        self.drop_socket(i);
        let s = &mut self.sessions[i];
        let backoff = (LOGIN_BACKOFF_NS << s.failures.min(16)).min(LOGIN_BACKOFF_MAX_NS);
        s.failures += 1;
        self.conns[i].retry_at = now + backoff;
    }

    /// Whether connection `i` waits for a login answer sent longer than the timeout ago.
    pub(super) fn login_late(&self, i: usize, now: u64) -> bool {
        self.sessions.get(i).is_some_and(|s| s.waiting && now.saturating_sub(s.since) > self.timeout_ns)
    }

    /// Whether connection `i` waits for its login's answer.
    #[inline]
    pub(super) fn logging_in(&self, i: usize) -> bool {
        self.login.is_some() && self.sessions[i].waiting
    }
}
