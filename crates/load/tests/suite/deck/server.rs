//! Test helper: an in-process HTTP/1.1 server on 127.0.0.1:0 that routes by path. It counts requests
//! per path, keeps the first bodies it receives, answers each path with its own status and delay,
//! and echoes the path as the body (so a client can check that a response is the one it asked for).

use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::acceptor::Acceptor;
use crate::common::connection;

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
fn serve(c: TcpStream, routes: &HashMap<String, Route>, seen: &Mutex<Seen>, stop: &AtomicBool) {
    connection::serve(c, stop, |request, out| {
        let route = routes.get(request.path).copied().unwrap_or(Route { status: 200, delay: Duration::ZERO });
        {
            let mut s = seen.lock().unwrap();
            *s.counts.entry(request.path.to_string()).or_default() += 1;
            let bodies = s.bodies.entry(request.path.to_string()).or_default();
            if !request.body.is_empty() && bodies.len() < KEEP_BODIES {
                bodies.push(request.body.to_vec());
            }
        }
        std::thread::sleep(route.delay);
        out.extend_from_slice(format!("HTTP/1.1 {} X\r\nContent-Length: {}\r\n\r\n", route.status, request.path.len()).as_bytes());
        if request.method != "HEAD" {
            out.extend_from_slice(request.path.as_bytes());
        }
    });
}
