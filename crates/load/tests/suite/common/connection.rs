//! Test helper: one HTTP/1.1 connection of an in-process test server, read request by request
//! (pipelined ones too, a body by its Content-Length) until the peer closes, asks to close, or the
//! test stops; what each request is answered is the server's own.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One request as the connection read it.
pub struct Request<'a> {
    /// The request line's first word.
    pub method: &'a str,
    /// The request target.
    pub path: &'a str,
    /// The headers, names as sent.
    pub headers: Vec<(&'a str, &'a str)>,
    /// The body (Content-Length bytes).
    pub body: &'a [u8],
}

impl Request<'_> {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }
}

/// Serves `c`: each whole request handed to `answer`, which appends its response to the bytes
/// written back once the requests read together are answered.
pub fn serve(mut c: TcpStream, stop: &AtomicBool, mut answer: impl FnMut(&Request<'_>, &mut Vec<u8>)) {
    let _ = c.set_nodelay(true);
    let _ = c.set_read_timeout(Some(Duration::from_millis(50)));
    let (mut buf, mut have, mut out) = (vec![0u8; 256 * 1024], 0usize, Vec::new());
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
            let head = String::from_utf8_lossy(&buf[start..start + p]).into_owned();
            let body_at = start + p + 4;
            let request = parse(&head, &buf[body_at..have]);
            let Some(request) = request else { break }; // the body is still on its way
            close = request.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
            start = body_at + request.body.len();
            answer(&request, &mut out);
            if close {
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

/// The request of `head`, its body taken from `rest`; None while the body has not all come.
fn parse<'a>(head: &'a str, rest: &'a [u8]) -> Option<Request<'a>> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, path) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let headers: Vec<(&str, &str)> = lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k, v.trim())).collect();
    let len = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-length")).and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    (rest.len() >= len).then(|| Request { method, path, headers, body: &rest[..len] })
}
