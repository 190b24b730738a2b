//! Waiting for a starting server to be ready: listening, then answering HTTP, while watching that
//! it has not exited; the same wait for a process this lab started and for one a server host's
//! agent started, each saying why it is not ready in its own words.

use crate::error::LabError;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// A server being started, as the readiness wait sees it.
pub(crate) trait Starting {
    /// How it exited, once it has.
    fn exit(&mut self) -> Option<String>;
    /// The error saying it is not ready, and why, with what its log says.
    fn not_ready(&self, reason: String) -> LabError;
    /// Why nothing listened on `addr`, as far as its own sockets tell (may be empty).
    fn elsewhere(&self, addr: SocketAddr) -> String;
}

/// Waits until `addr` accepts a connection, the server exits, or `timeout` passes.
pub(crate) fn wait_ready(s: &mut dyn Starting, addr: SocketAddr, timeout: Duration) -> Result<Duration, LabError> {
    let start = Instant::now();
    loop {
        if let Some(status) = s.exit() {
            return Err(s.not_ready(format!("it exited with {status} before listening on {addr}")));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(start.elapsed());
        }
        if start.elapsed() > timeout {
            return Err(s.not_ready(format!("nothing listened on {addr} within {timeout:?}{}", s.elsewhere(addr))));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until an HTTP request for `path` on `addr` gets a status line back (any status: a 404
/// also proves the server answers), the server exits, or `timeout` (counted from the start of
/// readiness) passes.
///
/// Listening is not enough: a prefork server's master (uWSGI, gunicorn) binds the socket and the
/// kernel completes connections into its backlog while the workers are still importing the
/// application, so a warm-up that started then would be spent on start-up, or worse, the
/// measurement would.
pub(crate) fn wait_answering(s: &mut dyn Starting, addr: SocketAddr, path: &str, timeout: Duration) -> Result<Duration, LabError> {
    let start = Instant::now();
    wait_ready(s, addr, timeout)?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    loop {
        if probe_once(s, addr, &request, start, timeout)? {
            return Ok(start.elapsed());
        }
        if start.elapsed() > timeout {
            return Err(s.not_ready(format!(
                "{addr} accepted connections but sent no HTTP answer to GET {path} within {timeout:?} \
                 (raise start.ready_timeout if its workers are just slow to start)"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The same wait for a server that speaks another protocol than cleartext HTTP/1.1: once it
/// listens, `answers` makes one attempt (a TLS handshake, HTTP/2's SETTINGS, a request), Err with
/// why it failed; the last failure is the reason given when `timeout` passes.
pub(crate) fn wait_answering_with(
    s: &mut dyn Starting,
    addr: SocketAddr,
    what: &str,
    timeout: Duration,
    answers: &mut dyn FnMut() -> Result<(), String>,
) -> Result<Duration, LabError> {
    let start = Instant::now();
    wait_ready(s, addr, timeout)?;
    loop {
        still_running(s, addr)?;
        let last = match answers() {
            Ok(()) => return Ok(start.elapsed()),
            Err(e) => e,
        };
        if start.elapsed() > timeout {
            return Err(s.not_ready(format!("{addr} accepted connections but gave no {what} answer within {timeout:?}: {last}")));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn still_running(s: &mut dyn Starting, addr: SocketAddr) -> Result<(), LabError> {
    match s.exit() {
        Some(status) => Err(s.not_ready(format!("it exited with {status} before answering HTTP on {addr}"))),
        None => Ok(()),
    }
}

/// One probe connection, held until a status line, a close, the server's exit or the deadline;
/// reads in short slices so an exit is noticed within 200 ms. Ok(false): try again.
fn probe_once(s: &mut dyn Starting, addr: SocketAddr, request: &str, start: Instant, timeout: Duration) -> Result<bool, LabError> {
    still_running(s, addr)?;
    let Ok(mut conn) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else { return Ok(false) };
    if conn.write_all(request.as_bytes()).is_err() || conn.set_read_timeout(Some(Duration::from_millis(200))).is_err() {
        return Ok(false);
    }
    let mut head = Vec::with_capacity(64);
    let mut buf = [0u8; 64];
    loop {
        still_running(s, addr)?;
        if start.elapsed() > timeout {
            return Ok(false);
        }
        match conn.read(&mut buf) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                head.extend_from_slice(&buf[..n]);
                if head.len() >= 12 {
                    return Ok(is_status_line(&head));
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return Ok(false),
        }
    }
}

/// "HTTP/1.x NNN": the start of a response, whatever its status.
fn is_status_line(head: &[u8]) -> bool {
    head.len() >= 12 && head.starts_with(b"HTTP/1.") && head[8] == b' ' && head[9..12].iter().all(u8::is_ascii_digit)
}
