//! A small blocking HTTP/1.1 client for verification: one keep-alive connection, every response
//! read whole, every read bounded by a timeout. Responses are decoded by the load generator's own
//! parser, so a stack that passes verification is framed the same way under load.

use bakeoff_load::{Framing, ParseError, ParseSink, ResponseParser};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A whole response as the verifier reads it.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The header lines, in order.
    pub headers: Vec<(String, String)>,
    /// The body, decoded from its framing (chunked or not).
    pub body: Vec<u8>,
    pub(crate) framing: Framing,
    /// The server said it closes the connection after this response.
    pub(crate) close: bool,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Keeps what the parser decodes: the head (for the headers) and the body, bounded.
#[derive(Default)]
struct Keep {
    head: Vec<u8>,
    body: Vec<u8>,
    too_big: bool,
}

const MAX_BODY: usize = 64 * 1024 * 1024;
const CLOSED_IDLE: &str = "connection closed without a response";

impl ParseSink for Keep {
    fn head(&mut self, head: &[u8]) {
        self.head.clear();
        self.head.extend_from_slice(head);
    }
    fn body(&mut self, data: &[u8]) {
        if self.body.len() + data.len() > MAX_BODY {
            self.too_big = true;
        } else {
            self.body.extend_from_slice(data);
        }
    }
}

/// One keep-alive connection to a server under verification, reopened when the server closed it.
pub struct Client {
    addr: SocketAddr,
    conn: Option<TcpStream>,
    timeout: Duration,
    parser: ResponseParser,
}

impl Client {
    /// A client of `addr`; it connects on the first request, and every connect, write and read waits
    /// `timeout` at most.
    pub fn new(addr: SocketAddr, timeout: Duration) -> Client {
        Client { addr, conn: None, timeout, parser: ResponseParser::new(false) }
    }

    /// GETs `path` on the current keep-alive connection (opening one when needed).
    pub fn get(&mut self, path: &str) -> Result<Response, String> {
        self.send("GET", path, &[], None)
    }

    /// Sends one request (`Host` and `User-Agent` added, `Content-Length` for a body) on the
    /// current keep-alive connection, opening one when needed.
    pub fn send(&mut self, method: &str, path: &str, headers: &[(String, String)], body: Option<&[u8]>) -> Result<Response, String> {
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: bakeoff-verify\r\n", self.addr);
        for (name, value) in headers {
            req.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(b) = body {
            req.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
        let mut req = req.into_bytes();
        req.extend_from_slice(b"\r\n");
        req.extend_from_slice(body.unwrap_or_default());
        let reused = self.conn.is_some();
        let mut result = self.try_send(&req);
        if reused && result.as_ref().is_err_and(|e| e == CLOSED_IDLE || e.starts_with("write:") || e.contains("reset")) {
            // A server may close a keep-alive connection that sat idle (the live-data probe
            // changes the store in between); like any HTTP client, ask again on a new one.
            self.conn = None;
            result = self.try_send(&req);
        }
        if result.as_ref().map(|r| r.close).unwrap_or(true) {
            self.conn = None;
        }
        result
    }

    /// Whether the last response left the connection open for the next request.
    pub(crate) fn connected(&self) -> bool {
        self.conn.is_some()
    }

    fn try_send(&mut self, req: &[u8]) -> Result<Response, String> {
        if self.conn.is_none() {
            let s = TcpStream::connect_timeout(&self.addr, self.timeout).map_err(|e| format!("connect: {e}"))?;
            s.set_read_timeout(Some(self.timeout)).ok();
            s.set_write_timeout(Some(self.timeout)).ok();
            s.set_nodelay(true).ok();
            self.conn = Some(s);
            self.parser.reset();
        }
        let conn = self.conn.as_mut().expect("connected");
        conn.write_all(req).map_err(|e| format!("write: {e}"))?;
        read_response(conn, &mut self.parser)
    }
}

/// Reads until the parser completes one response (or the peer closes, which ends a
/// close-delimited body); bytes after it would be an answer to nothing, and are a failure.
fn read_response(conn: &mut TcpStream, parser: &mut ResponseParser) -> Result<Response, String> {
    let mut keep = Keep::default();
    let mut chunk = [0u8; 16384];
    loop {
        let n = conn.read(&mut chunk).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out waiting for the response".to_string(),
            _ => format!("read: {e}"),
        })?;
        let done = if n == 0 {
            parser.finish().map_err(|e| decode_error(e, true))?.ok_or(CLOSED_IDLE)?
        } else {
            match parser.parse_into(&chunk[..n], &mut keep).map_err(|e| decode_error(e, false))? {
                (used, Some(r)) if used == n => r,
                (_, Some(_)) => return Err("bytes after the response's end: its framing is wrong, or it answered twice".into()),
                (_, None) => continue,
            }
        };
        if keep.too_big {
            return Err("body over 64 MiB".into());
        }
        let headers = headers(&keep.head);
        return Ok(Response { status: done.status, headers, body: keep.body, framing: done.framing, close: done.close || n == 0 });
    }
}

fn decode_error(e: ParseError, at_close: bool) -> String {
    match e {
        ParseError::Truncated if at_close => "connection closed inside the response".into(),
        ParseError::Truncated => "response truncated".into(),
        ParseError::HeadTooLarge => "response headers larger than 64 KiB".into(),
        ParseError::BadChunk => "malformed chunked framing".into(),
        ParseError::Malformed => "malformed response (not HTTP/1.1, bad header or Content-Length)".into(),
    }
}

/// The head's header lines; the parser already accepted the head, so httparse succeeds here.
fn headers(head: &[u8]) -> Vec<(String, String)> {
    let mut hs = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut hs);
    let _ = parsed.parse(head);
    parsed.headers.iter().map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).trim().to_string())).collect()
}
