//! One URL to hit: parsed without DNS, its request bytes serialized once at plan time.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

use crate::error::PlanError;
use crate::h2::frame::RequestFrames;
use crate::h2::hpack;

/// How a URL's bytes travel: as they are, or inside TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`, port 80 by default.
    Http,
    /// `https://`, port 443 by default.
    Https,
}

/// The HTTP version a plan speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Protocol {
    /// HTTP/1.1, plain or over TLS.
    #[default]
    #[serde(rename = "h1")]
    Http1,
    /// HTTP/2: over TLS chosen by ALPN `h2`, in cleartext with prior knowledge (h2c).
    #[serde(rename = "h2")]
    Http2,
}

impl Protocol {
    /// "HTTP/1.1" or "HTTP/2".
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2",
        }
    }

    /// Its ALPN identifier (RFC 7301), what a TLS client offers.
    pub fn alpn(self) -> &'static [u8] {
        match self {
            Protocol::Http1 => b"http/1.1",
            Protocol::Http2 => b"h2",
        }
    }
}

/// One URL to hit, with its request bytes serialized once at plan time so the
/// hot path only copies bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// Plain or TLS.
    pub scheme: Scheme,
    /// Where to connect (no DNS: an IP literal or localhost).
    pub addr: SocketAddr,
    /// The `Host` header: the URL's authority.
    pub host_header: String,
    /// Path and query, `/` when the URL has none.
    pub path: String,
    /// The complete request (line, headers, body), ready to write.
    pub request: Vec<u8>,
    /// Over HTTP/2, the request as frames (their stream ids written per stream).
    pub(crate) h2: Option<RequestFrames>,
}

impl Target {
    /// Parses `url` and serializes the one request every send of it writes.
    pub fn new(url: &str, method: &str, headers: &[(String, String)], body: Option<&[u8]>, close: bool) -> Result<Target, PlanError> {
        let (scheme, addr, host_header, path) = parse_url(url)?;
        let request = serialize_request(method, &path, &host_header, headers, body, close);
        Ok(Target { url: url.to_string(), scheme, addr, host_header, path, request, h2: None })
    }

    /// Adds the request's HTTP/2 frames; fails if its header block does not fit one frame.
    pub(crate) fn with_h2(mut self, method: &str, headers: &[(String, String)], body: Option<&[u8]>) -> Result<Target, PlanError> {
        self.h2 = Some(Target::frames(method, &self, &self.path, headers, body)?);
        Ok(self)
    }

    /// A request to `path` on `target`'s address as HTTP/2 frames.
    pub(crate) fn frames(
        method: &str,
        target: &Target,
        path: &str,
        headers: &[(String, String)],
        body: Option<&[u8]>,
    ) -> Result<RequestFrames, PlanError> {
        let https = target.scheme == Scheme::Https;
        let block = hpack::encode_request(method, https, &target.host_header, path, headers, body.map(<[u8]>::len));
        RequestFrames::new(&block, body).ok_or_else(|| {
            PlanError::Invalid(format!(
                "the headers of {method} {path} take {} bytes in HPACK, above the 16384 of one HTTP/2 frame",
                block.len()
            ))
        })
    }
}

/// Parses `http(s)://HOST[:PORT][/PATH]` with HOST an IP literal or localhost.
/// No DNS on purpose: benchmarks must not depend on resolver latency or caches.
fn parse_url(url: &str) -> Result<(Scheme, SocketAddr, String, String), PlanError> {
    let bad = |reason: &str| PlanError::BadUrl { url: url.to_string(), reason: reason.to_string() };
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (Scheme::Http, rest),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (Scheme::Https, rest),
        Some((scheme, _)) => return Err(bad(&format!("scheme `{scheme}` is not supported, only http and https"))),
        None => return Err(bad("missing `http://`")),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let path = path.split('#').next().unwrap_or("");
    let path = if path.is_empty() {
        "/".to_string()
    } else if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    if authority.contains('@') {
        return Err(bad("user info is not supported"));
    }
    if authority.is_empty() {
        return Err(bad("missing host"));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed `[` in IPv6 address"))?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| bad("junk after IPv6 address"))?),
        };
        (h, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port: u16 = match (port, scheme) {
        (None, Scheme::Http) => 80,
        (None, Scheme::Https) => 443,
        (Some(p), _) => p.parse().map_err(|_| bad(&format!("invalid port `{p}`")))?,
    };
    if port == 0 {
        return Err(bad("port 0"));
    }
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse().map_err(|_| bad("host must be an IPv4/IPv6 literal or localhost (no DNS)"))?
    };
    Ok((scheme, SocketAddr::new(ip, port), authority.to_string(), path))
}

/// The bytes of one request; `Host` and `Content-Length` are added unless `headers` has them.
pub(crate) fn serialize_request(
    method: &str,
    path: &str,
    host: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    close: bool,
) -> Vec<u8> {
    let mut r = Vec::with_capacity(128);
    r.extend_from_slice(format!("{method} {path} HTTP/1.1\r\n").as_bytes());
    let has = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !has("host") {
        r.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    for (k, v) in headers {
        r.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    if let Some(b) = body {
        if !has("content-length") {
            r.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
        }
    }
    if close && !has("connection") {
        r.extend_from_slice(b"Connection: close\r\n");
    }
    r.extend_from_slice(b"\r\n");
    if let Some(b) = body {
        r.extend_from_slice(b);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let (s, a, h, p) = parse_url("http://127.0.0.1:8080/x?y=1").unwrap();
        assert_eq!(s, Scheme::Http);
        assert_eq!(a.port(), 8080);
        assert_eq!(h, "127.0.0.1:8080");
        assert_eq!(p, "/x?y=1");
        let (_, a, _, p) = parse_url("http://[::1]:9000").unwrap();
        assert!(a.is_ipv6());
        assert_eq!(p, "/");
        let (_, a, _, _) = parse_url("http://localhost/").unwrap();
        assert_eq!(a.port(), 80);
        let (s, a, _, _) = parse_url("HTTPS://127.0.0.1/").unwrap();
        assert_eq!((s, a.port()), (Scheme::Https, 443));
        assert!(parse_url("ftp://x").is_err());
        assert!(parse_url("127.0.0.1:80").is_err());
        assert!(parse_url("http://example.com/").is_err());
        assert!(parse_url("http://127.0.0.1:99999/").is_err());
        assert!(parse_url("http://[::1/").is_err());
    }
}
