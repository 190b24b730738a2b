//! A small blocking client for verification: one keep-alive connection in the cell's protocol
//! (HTTP/1.1 in cleartext or over TLS, HTTP/2 over TLS or h2c), every response read whole, every
//! read bounded by a timeout. HTTP/1.1 responses are decoded by the load generator's own parser and
//! TLS is the load generator's own client, so a stack that passes verification is framed and
//! negotiated the same way under load.

use bakeoff_load::blocking::{H2Exchange, H2Request, Negotiated, Stream};
use bakeoff_load::{Framing, ParseError, ParseSink, ResponseParser, TlsSettings};
use bakeoff_model::protocol::WireProtocol;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How a verified server is spoken to: its protocol, and the CA its certificate must chain to
/// (None: any certificate, as under load).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wire {
    /// The cell's protocol.
    pub protocol: WireProtocol,
    /// The run's CA (PEM), for a TLS protocol.
    pub ca: Option<PathBuf>,
}

/// The one cipher suite every TLS cell is offered, so every stack does the same cryptography per
/// byte: TLS 1.3's mandatory suite (RFC 8446 9.1).
pub const LAB_CIPHER: &str = "TLS13_AES_128_GCM_SHA256";

impl Wire {
    /// The TLS the lab sets for every TLS cell, in verification and under load alike: TLS 1.3
    /// only, [`LAB_CIPHER`] only, resumption on; the chain verified against `ca` when given. None
    /// in cleartext.
    pub(crate) fn tls(&self) -> Option<TlsSettings> {
        self.protocol.tls().then(|| TlsSettings { ca_file: self.ca.clone(), cipher: Some(LAB_CIPHER.into()), ..TlsSettings::new() })
    }

    /// `scheme://addr`, the base of the URLs checks name.
    pub(crate) fn base(&self, addr: SocketAddr) -> String {
        format!("{}://{addr}", self.protocol.scheme())
    }
}

/// The load generator's HTTP version for a cell's protocol.
pub(crate) fn http_version(p: WireProtocol) -> bakeoff_load::Protocol {
    if p.http2() {
        bakeoff_load::Protocol::Http2
    } else {
        bakeoff_load::Protocol::Http1
    }
}

/// A connection in its protocol.
enum Conn {
    H1(Stream),
    H2(Box<H2Exchange>),
}

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
const CLOSED_IDLE: &str = bakeoff_load::blocking::CLOSED;

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
    wire: Wire,
    conn: Option<Conn>,
    timeout: Duration,
    parser: ResponseParser,
    negotiated: Option<Negotiated>,
}

impl Client {
    /// An HTTP/1.1 client of `addr` in cleartext; it connects on the first request, and every
    /// connect, write and read waits `timeout` at most.
    pub fn new(addr: SocketAddr, timeout: Duration) -> Client {
        Client::over(addr, Wire::default(), timeout)
    }

    /// A client of `addr` speaking `wire`.
    pub fn over(addr: SocketAddr, wire: Wire, timeout: Duration) -> Client {
        Client { addr, wire, conn: None, timeout, parser: ResponseParser::new(false), negotiated: None }
    }

    /// What the last TLS handshake chose (None in cleartext or before the first request).
    pub fn negotiated(&self) -> Option<&Negotiated> {
        self.negotiated.as_ref()
    }

    /// Opens a connection now (a handshake, and HTTP/2's SETTINGS), replacing any open one.
    pub(crate) fn connect(&mut self) -> Result<(), String> {
        let (stream, negotiated) = Stream::connect(self.addr, self.wire.tls().as_ref(), http_version(self.wire.protocol), self.timeout)?;
        self.negotiated = negotiated;
        self.parser.reset();
        self.conn = Some(if self.wire.protocol.http2() {
            Conn::H2(Box::new(H2Exchange::start(stream, &self.addr.to_string(), self.wire.protocol.tls())?))
        } else {
            Conn::H1(stream)
        });
        Ok(())
    }

    /// The open HTTP/2 exchange (connecting first when none is open); None over HTTP/1.1.
    pub(crate) fn h2(&mut self) -> Result<Option<&mut H2Exchange>, String> {
        if self.conn.is_none() {
            self.connect()?;
        }
        Ok(match self.conn.as_mut() {
            Some(Conn::H2(x)) => Some(x),
            _ => None,
        })
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
        let mut h1 = req.into_bytes();
        h1.extend_from_slice(b"\r\n");
        h1.extend_from_slice(body.unwrap_or_default());
        let req = Request { h1, method, path, headers, body };
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

    fn try_send(&mut self, req: &Request<'_>) -> Result<Response, String> {
        if self.conn.is_none() {
            self.connect()?;
        }
        match self.conn.as_mut().expect("connected") {
            Conn::H1(conn) => {
                conn.write_all(&req.h1).map_err(|e| format!("write: {e}"))?;
                read_response(conn, &mut self.parser)
            }
            Conn::H2(x) => {
                let r = x.send(&H2Request { method: req.method, path: req.path, headers: req.headers, body: req.body })?;
                Ok(Response { status: r.status, headers: r.headers, body: r.body, framing: Framing::Frames, close: false })
            }
        }
    }
}

/// One request, in both forms: HTTP/1.1's bytes, and its parts for an HTTP/2 stream.
struct Request<'a> {
    h1: Vec<u8>,
    method: &'a str,
    path: &'a str,
    headers: &'a [(String, String)],
    body: Option<&'a [u8]>,
}

/// Reads until the parser completes one response (or the peer closes, which ends a
/// close-delimited body); bytes after it would be an answer to nothing, and are a failure.
fn read_response(conn: &mut Stream, parser: &mut ResponseParser) -> Result<Response, String> {
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
