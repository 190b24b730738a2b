//! Test helper: an in-process HTTP/1.1 server on 127.0.0.1:0 that routes by path. It counts requests
//! per path, keeps the first bodies it receives, answers each path with its own status and delay,
//! and echoes the path as the body (so a client can check that a response is the one it asked for).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// The in-process target's acceptor: this server needs all of it but its port.
#[allow(dead_code)]
#[path = "../common/acceptor.rs"]
mod acceptor;
use acceptor::Acceptor;

/// Bodies kept per path: enough to compare, bounded however long a test runs.
const KEEP_BODIES: usize = 64;

/// How the server answers one path (unlisted paths: 200 at once).
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub status: u16,
    pub delay: Duration,
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Seen {
    pub counts: HashMap<String, u64>,
    pub bodies: HashMap<String, Vec<Vec<u8>>>,
}

pub struct RouteServer {
    pub seen: Arc<Mutex<Seen>>,
    acceptor: Acceptor,
}

impl RouteServer {
    pub fn start(routes: &[(&str, Route)]) -> RouteServer {
        let routes: Arc<HashMap<String, Route>> = Arc::new(routes.iter().map(|(p, r)| (p.to_string(), *r)).collect());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let sn = seen.clone();
        let acceptor = Acceptor::start(move |c, st| {
            let (r, sn) = (routes.clone(), sn.clone());
            Some(std::thread::spawn(move || serve(c, &r, &sn, &st)))
        });
        RouteServer { seen, acceptor }
    }

    /// Connections accepted so far.
    pub fn accepts(&self) -> u64 {
        self.acceptor.accepts()
    }

    pub fn url(&self) -> String {
        self.acceptor.url()
    }

    pub fn count(&self, path: &str) -> u64 {
        self.seen.lock().unwrap().counts.get(path).copied().unwrap_or(0)
    }
}

/// One request's head, parsed: path, body length, whether the client asked to close, whether it
/// is a HEAD request.
fn parse_head(head: &[u8]) -> (String, usize, bool, bool) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or("");
    let is_head = line.starts_with("HEAD ");
    let path = line.split(' ').nth(1).unwrap_or("").to_string();
    let (mut len, mut close) = (0, false);
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            } else if k.eq_ignore_ascii_case("connection") && v.trim().eq_ignore_ascii_case("close") {
                close = true;
            }
        }
    }
    (path, len, close, is_head)
}

fn serve(mut c: TcpStream, routes: &HashMap<String, Route>, seen: &Mutex<Seen>, stop: &AtomicBool) {
    let _ = c.set_nodelay(true);
    let _ = c.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = vec![0u8; 256 * 1024];
    let (mut have, mut out) = (0usize, Vec::new());
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
            let (path, len, close_asked, is_head) = parse_head(&buf[start..start + p]);
            let body_at = start + p + 4;
            if have < body_at + len {
                break; // the body is still on its way
            }
            let route = routes.get(&path).copied().unwrap_or(Route { status: 200, delay: Duration::ZERO });
            {
                let mut s = seen.lock().unwrap();
                *s.counts.entry(path.clone()).or_default() += 1;
                let bodies = s.bodies.entry(path.clone()).or_default();
                if len > 0 && bodies.len() < KEEP_BODIES {
                    bodies.push(buf[body_at..body_at + len].to_vec());
                }
            }
            std::thread::sleep(route.delay);
            out.extend_from_slice(format!("HTTP/1.1 {} X\r\nContent-Length: {}\r\n\r\n", route.status, path.len()).as_bytes());
            if !is_head {
                out.extend_from_slice(path.as_bytes());
            }
            start = body_at + len;
            if close_asked {
                close = true;
                break;
            }
        }
        buf.copy_within(start..have, 0);
        have -= start;
        if !out.is_empty() && c.write_all(&out).is_err() {
            return;
        }
        if close {
            return;
        }
    }
}
