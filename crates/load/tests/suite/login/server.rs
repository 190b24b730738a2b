//! Test helper: an in-process HTTP/1.1 server with logins. `POST /login` issues a new token per
//! login, good on that connection only; any other path answers 200 (its path as the body) to a
//! request carrying `Authorization: Bearer TOKEN` with the connection's token, 401 otherwise.
//! The first `refuse` logins fail: with 403, or with 200 and no token in the body.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::common::acceptor::Acceptor;
use crate::common::connection;

/// How the first refused logins fail.
#[derive(Debug, Clone, Copy)]
pub enum Refusal {
    /// Status 403.
    Forbidden,
    /// Status 200 with a body that has no token.
    NoToken,
}

/// What the server counted.
#[derive(Debug, Default)]
pub struct Counts {
    pub logins: AtomicU64,
    pub authorized: AtomicU64,
    pub unauthorized: AtomicU64,
}

pub struct LoginServer {
    pub counts: Arc<Counts>,
    acceptor: Acceptor,
}

impl LoginServer {
    pub fn start(refuse: u64, how: Refusal) -> LoginServer {
        let counts = Arc::new(Counts::default());
        let c = counts.clone();
        let acceptor = Acceptor::start(move |conn, stop| {
            let c = c.clone();
            Some(std::thread::spawn(move || serve(conn, &c, refuse, how, &stop)))
        });
        LoginServer { counts, acceptor }
    }

    pub fn url(&self) -> String {
        self.acceptor.url()
    }

    pub fn accepts(&self) -> u64 {
        self.acceptor.accepts()
    }

    pub fn get(&self, which: fn(&Counts) -> &AtomicU64) -> u64 {
        which(&self.counts).load(Ordering::Relaxed)
    }
}

/// The answer to one request, given the connection's token (set by a login).
fn answer(path: &str, auth: &str, token: &mut Option<String>, counts: &Counts, refuse: u64, how: Refusal) -> (u16, String) {
    if path == "/login" {
        let n = counts.logins.fetch_add(1, Ordering::Relaxed);
        if n < refuse {
            return match how {
                Refusal::Forbidden => (403, "{}".into()),
                Refusal::NoToken => (200, "{\"user\":\"ada\"}".into()),
            };
        }
        let t = format!("tok-{n}");
        *token = Some(t.clone());
        return (200, format!("{{\"token\":\"{t}\"}}"));
    }
    if token.as_deref().is_some_and(|t| auth == format!("Bearer {t}")) {
        counts.authorized.fetch_add(1, Ordering::Relaxed);
        (200, path.to_string())
    } else {
        counts.unauthorized.fetch_add(1, Ordering::Relaxed);
        (401, "who are you".into())
    }
}

fn serve(c: TcpStream, counts: &Counts, refuse: u64, how: Refusal, stop: &AtomicBool) {
    let mut token = None;
    connection::serve(c, stop, |request, out| {
        let auth = request.header("authorization").unwrap_or("");
        let (status, body) = answer(request.path, auth, &mut token, counts, refuse, how);
        out.extend_from_slice(format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    });
}
