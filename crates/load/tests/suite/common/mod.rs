//! Test helper: a tiny in-process HTTP/1.1 target on 127.0.0.1:0 with scripted misbehaviour.
#![allow(dead_code)]

pub mod acceptor;
pub mod connection;
pub mod nginx;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acceptor::Acceptor;

#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// 200 with `Hello World!` (Content-Length).
    Ok,
    /// 200 with `Hello World!` in two chunks.
    Chunked,
    /// This status with a 12-byte body.
    Status(u16),
    /// Read a request, then close without answering.
    CloseEarly,
    /// Answer with bytes that are not HTTP.
    Garbage,
    /// Send half a response head, then stall forever.
    Partial,
    /// 200 with a 12-byte body other than `Hello World!`.
    WrongBody,
    /// Answer each request, but hold every answer during the first
    /// `freeze_ms` of every `period_ms` (all connections at once).
    Freeze { period_ms: u64, freeze_ms: u64 },
    /// Like `Ok` for the first this many requests (all connections together), then silence.
    HangAfter(u64),
    /// Like `Ok`, but one connection at a time, kept until the client closes it (a blocking
    /// server with one worker and keep-alive, as uWSGI's http11 socket with one process).
    OneAtATime,
}

pub struct Server {
    pub requests: Arc<AtomicU64>,
    acceptor: Acceptor,
}

impl Server {
    pub fn start(mode: Mode) -> Server {
        let requests = Arc::new(AtomicU64::new(0));
        let r = requests.clone();
        let t0 = Instant::now();
        let acceptor = Acceptor::start(move |c, s| {
            if let Mode::OneAtATime = mode {
                serve(c, Mode::Ok, r.clone(), s, t0);
                return None;
            }
            let r = r.clone();
            Some(std::thread::spawn(move || serve(c, mode, r, s, t0)))
        });
        Server { requests, acceptor }
    }

    pub fn port(&self) -> u16 {
        self.acceptor.port()
    }

    /// Connections accepted so far.
    pub fn accepts(&self) -> u64 {
        self.acceptor.accepts()
    }

    pub fn url(&self) -> String {
        self.acceptor.url()
    }
}

fn serve(mut c: TcpStream, mode: Mode, reqs: Arc<AtomicU64>, stop: Arc<AtomicBool>, t0: Instant) {
    let _ = c.set_nodelay(true);
    let _ = c.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = vec![0u8; 64 * 1024];
    let mut have = 0usize;
    let mut out = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let n = match c.read(&mut buf[have..]) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
            Err(_) => return,
        };
        have += n;
        let mut start = 0;
        out.clear();
        let mut close_after = false;
        while let Some(p) = find(&buf[start..have], b"\r\n\r\n") {
            let req = &buf[start..start + p];
            let close = contains_ci(req, b"connection: close");
            start += p + 4;
            let seen = reqs.fetch_add(1, Ordering::Relaxed);
            match mode {
                Mode::HangAfter(n) if seen >= n => {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    return;
                }
                Mode::HangAfter(_) => out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!"),
                Mode::Ok | Mode::OneAtATime => out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!"),
                Mode::Chunked => out
                    .extend_from_slice(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n7;x=y\r\n World!\r\n0\r\n\r\n"),
                Mode::Status(s) => out.extend_from_slice(format!("HTTP/1.1 {s} Nope\r\nContent-Length: 12\r\n\r\nHello World!").as_bytes()),
                Mode::CloseEarly => return,
                Mode::Garbage => out.extend_from_slice(b"SSH-2.0-OpenSSH garbage\r\n\r\n"),
                Mode::Partial => {
                    let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Le");
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    return;
                }
                Mode::WrongBody => out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello Wrld!!"),
                Mode::Freeze { period_ms, freeze_ms } => {
                    let ms = t0.elapsed().as_millis() as u64 % period_ms;
                    if ms < freeze_ms {
                        std::thread::sleep(Duration::from_millis(freeze_ms - ms));
                    }
                    out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!");
                }
            }
            if close {
                close_after = true;
                break;
            }
        }
        buf.copy_within(start..have, 0);
        have -= start;
        if !out.is_empty() && c.write_all(&out).is_err() {
            return;
        }
        if close_after {
            return;
        }
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn contains_ci(h: &[u8], n: &[u8]) -> bool {
    h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// A port nothing listens on (bound then released).
pub fn dead_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
