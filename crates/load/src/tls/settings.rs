//! What an `https://` plan asks of TLS: the one version it offers, resumption, the certificates it
//! trusts. Plain data (the plan and its report carry it); the client that acts on it is `client.rs`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::PlanError;

/// The one TLS version a plan offers: the server must speak it or the handshake fails, so a run
/// never measures another version than the one it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum TlsVersion {
    /// TLS 1.2 (RFC 5246), on request.
    #[serde(rename = "1.2")]
    Tls12,
    /// TLS 1.3 (RFC 8446), the default.
    #[default]
    #[serde(rename = "1.3")]
    Tls13,
}

impl TlsVersion {
    /// "1.2" or "1.3", as flags and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "1.2",
            TlsVersion::Tls13 => "1.3",
        }
    }

    /// Reads "1.2" or "1.3" (a `--tls-version` value).
    pub fn parse(s: &str) -> Result<TlsVersion, PlanError> {
        match s.trim().trim_start_matches("TLSv").trim_start_matches("tls") {
            "1.2" => Ok(TlsVersion::Tls12),
            "1.3" => Ok(TlsVersion::Tls13),
            _ => Err(PlanError::Invalid(format!("--tls-version `{s}`: expected 1.2 or 1.3"))),
        }
    }

    pub(crate) fn rustls(self) -> &'static rustls::SupportedProtocolVersion {
        match self {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        }
    }
}

/// How an `https://` plan speaks TLS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsSettings {
    /// The version offered (only that one).
    pub version: TlsVersion,
    /// Whether a new connection resumes an earlier session of its thread (tickets in TLS 1.3, session
    /// ids or tickets in 1.2), as browsers and HTTP clients do; off, every handshake is a full one.
    pub resumption: bool,
    /// PEM certificates to trust: the server's chain is then verified, its name included. Without
    /// them any certificate is accepted (as wrk and h2load do), its handshake signature still checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// The one cipher suite offered, as rustls names it (`TLS13_AES_128_GCM_SHA256`); None offers
    /// rustls's whole list and lets the server choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
}

impl TlsSettings {
    /// TLS 1.3 with resumption, trusting any certificate.
    pub fn new() -> TlsSettings {
        TlsSettings { version: TlsVersion::Tls13, resumption: true, ca_file: None, cipher: None }
    }
}

impl Default for TlsSettings {
    fn default() -> TlsSettings {
        TlsSettings::new()
    }
}
