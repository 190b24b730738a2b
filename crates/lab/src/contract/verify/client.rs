//! A small blocking HTTP/1.1 client for verification: one keep-alive connection, every response
//! read whole with its framing recorded, every read bounded by a timeout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    ContentLength,
    Chunked,
    /// Body ends when the server closes: no keep-alive possible, not allowed by the contract.
    Close,
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub framing: Framing,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub struct Client {
    addr: SocketAddr,
    conn: Option<TcpStream>,
    timeout: Duration,
    buf: Vec<u8>,
}

impl Client {
    pub fn new(addr: SocketAddr, timeout: Duration) -> Client {
        Client { addr, conn: None, timeout, buf: Vec::new() }
    }

    /// GETs `path` on the current keep-alive connection (opening one when needed).
    pub fn get(&mut self, path: &str) -> Result<Response, String> {
        let result = self.try_get(path);
        if result.as_ref().map(|r| r.framing == Framing::Close || wants_close(r)).unwrap_or(true) {
            self.conn = None;
            self.buf.clear();
        }
        result
    }

    /// Whether the last response left the connection open for the next request.
    pub fn connected(&self) -> bool {
        self.conn.is_some()
    }

    fn try_get(&mut self, path: &str) -> Result<Response, String> {
        if self.conn.is_none() {
            let s = TcpStream::connect_timeout(&self.addr, self.timeout).map_err(|e| format!("connect: {e}"))?;
            s.set_read_timeout(Some(self.timeout)).ok();
            s.set_write_timeout(Some(self.timeout)).ok();
            s.set_nodelay(true).ok();
            self.conn = Some(s);
            self.buf.clear();
        }
        let req = format!("GET {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: bakeoff-verify\r\n\r\n", self.addr);
        let conn = self.conn.as_mut().expect("connected");
        conn.write_all(req.as_bytes()).map_err(|e| format!("write: {e}"))?;
        read_response(conn, &mut self.buf)
    }
}

fn wants_close(r: &Response) -> bool {
    r.header("connection").map(|v| v.eq_ignore_ascii_case("close")).unwrap_or(false)
}

fn fill(conn: &mut TcpStream, buf: &mut Vec<u8>) -> Result<usize, String> {
    let mut chunk = [0u8; 16384];
    let n = conn.read(&mut chunk).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out waiting for the response".to_string(),
        _ => format!("read: {e}"),
    })?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

const MAX_BODY: usize = 64 * 1024 * 1024;

fn read_response(conn: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Response, String> {
    let (status, headers, head_len) = loop {
        let mut hs = [httparse::EMPTY_HEADER; 64];
        let mut parsed = httparse::Response::new(&mut hs);
        match parsed.parse(buf) {
            Ok(httparse::Status::Complete(n)) => {
                let headers = parsed
                    .headers
                    .iter()
                    .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).trim().to_string()))
                    .collect::<Vec<_>>();
                break (parsed.code.unwrap_or(0), headers, n);
            }
            Ok(httparse::Status::Partial) => {
                if buf.len() > 64 * 1024 {
                    return Err("response headers larger than 64 KiB".into());
                }
                if fill(conn, buf)? == 0 {
                    return Err(if buf.is_empty() {
                        "connection closed without a response".into()
                    } else {
                        "connection closed inside the headers".into()
                    });
                }
            }
            Err(e) => return Err(format!("malformed response: {e}")),
        }
    };
    buf.drain(..head_len);
    let find = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone());
    let chunked = find("transfer-encoding").map(|v| v.to_ascii_lowercase().contains("chunked")).unwrap_or(false);
    let (body, framing) = if chunked {
        (read_chunked(conn, buf)?, Framing::Chunked)
    } else if let Some(len) = find("content-length") {
        let len: usize = len.parse().map_err(|_| format!("bad Content-Length `{len}`"))?;
        if len > MAX_BODY {
            return Err(format!("Content-Length {len} is over the 64 MiB limit"));
        }
        while buf.len() < len {
            if fill(conn, buf)? == 0 {
                return Err(format!("connection closed after {} of {len} body bytes", buf.len()));
            }
        }
        (buf.drain(..len).collect(), Framing::ContentLength)
    } else if status == 204 || status == 304 || (100..200).contains(&status) {
        (Vec::new(), Framing::ContentLength)
    } else {
        while fill(conn, buf)? > 0 {
            if buf.len() > MAX_BODY {
                return Err("close-delimited body over 64 MiB".into());
            }
        }
        (std::mem::take(buf), Framing::Close)
    };
    Ok(Response { status, headers, body, framing })
}

fn read_chunked(conn: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                break i;
            }
            if fill(conn, buf)? == 0 {
                return Err("connection closed inside a chunk header".into());
            }
        };
        let line = String::from_utf8_lossy(&buf[..line_end]).to_string();
        let size_hex = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| format!("bad chunk size `{size_hex}`"))?;
        buf.drain(..line_end + 2);
        if size == 0 {
            // Trailers end with an empty line.
            loop {
                if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                    let empty = i == 0;
                    buf.drain(..i + 2);
                    if empty {
                        return Ok(body);
                    }
                } else if fill(conn, buf)? == 0 {
                    return Err("connection closed inside the chunked trailer".into());
                }
            }
        }
        while buf.len() < size + 2 {
            if fill(conn, buf)? == 0 {
                return Err("connection closed inside a chunk".into());
            }
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
        if body.len() > MAX_BODY {
            return Err("chunked body over 64 MiB".into());
        }
    }
}
