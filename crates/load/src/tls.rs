//! TLS for the load generator: the settings a plan carries (version, resumption, the certificates
//! it trusts), the client configuration each worker thread builds from them, and what a step's
//! handshakes measured.

use std::path::PathBuf;
use std::sync::Arc;

use hdrhistogram::Histogram;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, HandshakeKind, RootCertStore, SignatureScheme};
use serde::{Deserialize, Serialize};

use crate::error::PlanError;
use crate::report::TlsReport;
use crate::stats::{encode_histogram, latency_stats, new_histogram};
use crate::target::Protocol;

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

    fn rustls(self) -> &'static rustls::SupportedProtocolVersion {
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
}

impl TlsSettings {
    /// TLS 1.3 with resumption, trusting any certificate.
    pub fn new() -> TlsSettings {
        TlsSettings { version: TlsVersion::Tls13, resumption: true, ca_file: None }
    }
}

impl Default for TlsSettings {
    fn default() -> TlsSettings {
        TlsSettings::new()
    }
}

/// A worker thread's TLS client: its own configuration, so its session cache is touched by that
/// thread only (nothing shared on the request path).
pub(crate) struct TlsClient {
    config: Arc<ClientConfig>,
}

impl TlsClient {
    /// The client of `settings`; fails on a certificate file that cannot be read or holds none.
    pub(crate) fn new(settings: &TlsSettings, protocol: Protocol) -> Result<TlsClient, PlanError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[settings.version.rustls()])
            .map_err(|e| PlanError::Invalid(format!("TLS {}: {e}", settings.version.name())))?;
        let mut config = match &settings.ca_file {
            Some(path) => builder.with_root_certificates(roots(path)?).with_no_client_auth(),
            None => builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate(provider))).with_no_client_auth(),
        };
        config.alpn_protocols = vec![protocol.alpn().to_vec()];
        if !settings.resumption {
            config.resumption = Resumption::disabled();
        }
        Ok(TlsClient { config: Arc::new(config) })
    }

    /// A new client connection to `addr` (no SNI: targets are IP literals).
    pub(crate) fn connect(&self, addr: std::net::SocketAddr) -> Result<ClientConnection, rustls::Error> {
        ClientConnection::new(self.config.clone(), ServerName::IpAddress(addr.ip().into()))
    }
}

/// The certificates of a PEM file, as trust anchors.
fn roots(path: &std::path::Path) -> Result<RootCertStore, PlanError> {
    let bad = |reason: String| PlanError::BadCertificates { path: path.to_path_buf(), reason };
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))? {
        store.add(cert.map_err(|e| bad(e.to_string()))?).map_err(|e| bad(e.to_string()))?;
    }
    if store.is_empty() {
        return Err(bad("it holds no certificate".into()));
    }
    Ok(store)
}

/// Accepts any certificate chain but checks the handshake's signature with the certificate's key,
/// so a handshake costs the client what a verifying client's does, bar the chain.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// What was negotiated: the version, the cipher suite and the application protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Negotiated {
    pub version: String,
    pub cipher: String,
    pub alpn: Option<String>,
}

impl Negotiated {
    /// What `c`, handshake done, agreed on.
    pub(crate) fn of(c: &ClientConnection) -> Negotiated {
        let version = match c.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_2) => "1.2".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_3) => "1.3".to_string(),
            other => format!("{other:?}"),
        };
        let cipher = c.negotiated_cipher_suite().map_or_else(|| "none".to_string(), |s| format!("{:?}", s.suite()));
        let alpn = c.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
        Negotiated { version, cipher, alpn }
    }
}

/// One thread's handshakes in a step: counted and timed apart from requests (from the TCP connect's
/// completion to the handshake's), the measured window only; what was negotiated, from the first.
#[derive(Debug, Clone)]
pub(crate) struct HandshakeRecorder {
    pub handshakes: u64,
    pub resumed: u64,
    pub latency: Histogram<u64>,
    pub negotiated: Option<Negotiated>,
    /// The first TLS failure's words (a plain server, a refused version, a bad certificate).
    pub first_error: Option<String>,
}

impl HandshakeRecorder {
    pub(crate) fn new() -> HandshakeRecorder {
        HandshakeRecorder { handshakes: 0, resumed: 0, latency: new_histogram(), negotiated: None, first_error: None }
    }

    /// A completed handshake of `c` that took `ns`; counted if `measuring`.
    pub(crate) fn handshake(&mut self, c: &ClientConnection, ns: u64, measuring: bool) {
        if self.negotiated.is_none() {
            self.negotiated = Some(Negotiated::of(c));
        }
        if measuring {
            self.handshakes += 1;
            self.resumed += u64::from(c.handshake_kind() == Some(HandshakeKind::Resumed));
            let _ = self.latency.record((ns / 1000).max(1));
        }
    }

    pub(crate) fn merge(&mut self, o: &HandshakeRecorder) {
        self.handshakes += o.handshakes;
        self.resumed += o.resumed;
        let _ = self.latency.add(&o.latency);
        if self.negotiated.is_none() {
            self.negotiated.clone_from(&o.negotiated);
        }
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
        }
    }

    /// The step's TLS report over `duration_s` measured seconds.
    pub(crate) fn report(&self, duration_s: f64) -> TlsReport {
        let n = self.negotiated.as_ref();
        TlsReport {
            version: n.map(|n| n.version.clone()),
            cipher: n.map(|n| n.cipher.clone()),
            alpn: n.and_then(|n| n.alpn.clone()),
            handshakes: self.handshakes,
            resumed: self.resumed,
            handshakes_per_sec: self.handshakes as f64 / duration_s,
            handshake_latency: (self.handshakes > 0).then(|| latency_stats(&self.latency)),
            handshake_histogram: (self.handshakes > 0).then(|| encode_histogram(&self.latency)),
            first_error: self.first_error.clone(),
        }
    }
}
