//! Test helper: an in-process HTTP/1.1 server with logins. `POST /login` issues a new token per
//! login, good on that connection only; any other path answers 200 (its path as the body) to a
//! request carrying `Authorization: Bearer TOKEN` with the connection's token, 401 otherwise.
//! The first `refuse` logins fail: with 403, or with 200 and no token in the body.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../common/acceptor.rs"]
mod acceptor;
use acceptor::Acceptor;

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

/// Path, body length, whether the client asked to close, and the Authorization header.
fn parse_head(head: &[u8]) -> (String, usize, bool, String) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let path = lines.next().unwrap_or("").split(' ').nth(1).unwrap_or("").to_string();
    let (mut len, mut close, mut auth) = (0, false, String::new());
    for l in lines {
        let Some((k, v)) = l.split_once(':') else { continue };
        match k.to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().unwrap_or(0),
            "connection" => close = v.trim().eq_ignore_ascii_case("close"),
            "authorization" => auth = v.trim().to_string(),
            _ => {}
        }
    }
    (path, len, close, auth)
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

fn serve(mut c: TcpStream, counts: &Counts, refuse: u64, how: Refusal, stop: &AtomicBool) {
    let _ = c.set_nodelay(true);
    let _ = c.set_read_timeout(Some(Duration::from_millis(50)));
    let (mut buf, mut have, mut out, mut token) = (vec![0u8; 256 * 1024], 0usize, Vec::new(), None);
    while !stop.load(Ordering::Relaxed) {
        match c.read(&mut buf[have..]) {
            Ok(0) => return,
            Ok(n) => have += n,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
            Err(_) => return,
        }
        let (mut start, mut close) = (0, false);
        out.clear();
        while let Some(p) = buf[start..have].windows(4).position(|w| w == b"\r\n\r\n") {
            let (path, len, close_asked, auth) = parse_head(&buf[start..start + p]);
            let body_at = start + p + 4;
            if have < body_at + len {
                break;
            }
            let (status, body) = answer(&path, &auth, &mut token, counts, refuse, how);
            out.extend_from_slice(format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
            start = body_at + len;
            if close_asked {
                close = true;
                break;
            }
        }
        buf.copy_within(start..have, 0);
        have -= start;
        if (!out.is_empty() && c.write_all(&out).is_err()) || close {
            return;
        }
    }
}
