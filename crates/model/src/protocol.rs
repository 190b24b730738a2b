//! How a cell's requests travel: HTTP/1.1 in cleartext or over TLS, HTTP/2 over TLS (ALPN `h2`) or
//! in cleartext with prior knowledge (h2c). One type for a stack variant's `protocol`, a scenario
//! file's, the load plan's scheme and version, and the verifier's proof of what was negotiated.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The wire protocol of a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WireProtocol {
    /// HTTP/1.1 in cleartext (every scenario's default).
    #[default]
    #[serde(rename = "h1")]
    H1,
    /// HTTP/1.1 over TLS.
    #[serde(rename = "h1-tls")]
    H1Tls,
    /// HTTP/2 over TLS, chosen by ALPN `h2`.
    #[serde(rename = "h2")]
    H2,
    /// HTTP/2 in cleartext, with prior knowledge (the client opens with the preface).
    #[serde(rename = "h2c")]
    H2c,
}

/// Every protocol, in the order reports list them.
pub const ALL_PROTOCOLS: [WireProtocol; 4] = [WireProtocol::H1, WireProtocol::H1Tls, WireProtocol::H2, WireProtocol::H2c];

impl WireProtocol {
    /// The name manifests, scenario files and reports use.
    pub fn id(self) -> &'static str {
        match self {
            WireProtocol::H1 => "h1",
            WireProtocol::H1Tls => "h1-tls",
            WireProtocol::H2 => "h2",
            WireProtocol::H2c => "h2c",
        }
    }

    /// Whether the bytes travel inside TLS (an `https://` URL).
    pub fn tls(self) -> bool {
        matches!(self, WireProtocol::H1Tls | WireProtocol::H2)
    }

    /// Whether it is HTTP/2.
    pub fn http2(self) -> bool {
        matches!(self, WireProtocol::H2 | WireProtocol::H2c)
    }

    /// The URL scheme: `https` over TLS, else `http`.
    pub fn scheme(self) -> &'static str {
        if self.tls() {
            "https"
        } else {
            "http"
        }
    }

    /// The ALPN identifier a TLS server must choose (None in cleartext).
    pub fn alpn(self) -> Option<&'static str> {
        match self {
            WireProtocol::H1Tls => Some("http/1.1"),
            WireProtocol::H2 => Some("h2"),
            WireProtocol::H1 | WireProtocol::H2c => None,
        }
    }
}

impl fmt::Display for WireProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for WireProtocol {
    type Err = String;

    fn from_str(s: &str) -> Result<WireProtocol, String> {
        ALL_PROTOCOLS
            .into_iter()
            .find(|p| p.id() == s.trim())
            .ok_or_else(|| format!("unknown protocol `{s}`: expected one of h1, h1-tls, h2, h2c"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocol_reads_back_from_its_name_and_says_how_it_travels() {
        for p in ALL_PROTOCOLS {
            assert_eq!(p.id().parse::<WireProtocol>(), Ok(p));
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.id()));
            assert_eq!(p.alpn().is_some(), p.tls());
        }
        assert_eq!((WireProtocol::H2c.tls(), WireProtocol::H2c.http2(), WireProtocol::H2c.scheme()), (false, true, "http"));
        assert_eq!((WireProtocol::H2.tls(), WireProtocol::H2.alpn()), (true, Some("h2")));
        assert!("http3".parse::<WireProtocol>().unwrap_err().contains("h1, h1-tls, h2, h2c"));
    }
}
