//! The TLS client of a worker thread (its own rustls configuration and session cache), the
//! verifier that accepts any certificate but checks the handshake's signature, and what a step's
//! handshakes measured, merged across threads and client hosts.

use std::sync::Arc;

use hdrhistogram::Histogram;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, HandshakeKind, RootCertStore, SignatureScheme};

use super::settings::TlsSettings;
use crate::error::PlanError;
use crate::report::TlsReport;
use crate::stats::{decode_histogram, encode_histogram, latency_stats, new_histogram};
use crate::target::Protocol;

/// A worker thread's TLS client: its own configuration, so its session cache is touched by that
/// thread only (nothing shared on the request path).
pub(crate) struct TlsClient {
    config: Arc<ClientConfig>,
}

impl TlsClient {
    /// The client of `settings`; fails on a certificate file that cannot be read or holds none.
    pub(crate) fn new(settings: &TlsSettings, protocol: Protocol) -> Result<TlsClient, PlanError> {
        let mut provider = rustls::crypto::ring::default_provider();
        if let Some(name) = &settings.cipher {
            let known: Vec<String> = provider.cipher_suites.iter().map(|s| format!("{:?}", s.suite())).collect();
            provider.cipher_suites.retain(|s| format!("{:?}", s.suite()) == *name);
            if provider.cipher_suites.is_empty() {
                return Err(PlanError::Invalid(format!("TLS cipher suite `{name}` is not one of {}", known.join(", "))));
            }
        }
        let provider = Arc::new(provider);
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

/// What a handshake negotiated: the version, the cipher suite and the application protocol, in
/// the names the load generator's report uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// "1.2" or "1.3".
    pub version: String,
    /// The cipher suite, as rustls names it (e.g. `TLS13_AES_128_GCM_SHA256`).
    pub cipher: String,
    /// The application protocol the server chose by ALPN, if it chose one.
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

impl TlsReport {
    /// Several clients' reports of one step as one (counts summed, histograms added, what was
    /// negotiated and the first failure from the first that has them), over `duration_s`.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a TlsReport>, duration_s: f64) -> Option<TlsReport> {
        let mut all: Option<(TlsReport, Histogram<u64>)> = None;
        for p in parts {
            let h = p.handshake_histogram.as_deref().and_then(|b| decode_histogram(b).ok()).unwrap_or_else(new_histogram);
            match &mut all {
                None => all = Some((p.clone(), h)),
                Some((a, sum)) => {
                    a.handshakes += p.handshakes;
                    a.resumed += p.resumed;
                    a.version = a.version.take().or_else(|| p.version.clone());
                    a.cipher = a.cipher.take().or_else(|| p.cipher.clone());
                    a.alpn = a.alpn.take().or_else(|| p.alpn.clone());
                    a.first_error = a.first_error.take().or_else(|| p.first_error.clone());
                    let _ = sum.add(&h);
                }
            }
        }
        all.map(|(mut a, h)| {
            a.handshakes_per_sec = a.handshakes as f64 / duration_s;
            a.handshake_latency = (!h.is_empty()).then(|| latency_stats(&h));
            a.handshake_histogram = (!h.is_empty()).then(|| encode_histogram(&h));
            a
        })
    }
}
