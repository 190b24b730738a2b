//! The proof that a cell speaks the protocol it claims, on a connection of its own: over TLS, the
//! version and cipher suite the lab set and the application protocol its ALPN must choose; over
//! HTTP/2, the server's SETTINGS and several streams sent at once on one connection, each answered
//! on its own stream (the scenarios' checks then prove the bodies over the same protocol). A server that falls back to HTTP/1.1, negotiates something else, or
//! refuses concurrent streams fails here before anything is measured.

use super::client::{Client, LAB_CIPHER};
use super::{fail, Checks, Target};
use bakeoff_load::blocking::H2Request;
use bakeoff_model::protocol::WireProtocol;
use bakeoff_model::records::results::{CheckScope, Verdict};

/// Streams sent at once to prove HTTP/2 serves them concurrently on one connection; a server must
/// allow at least this many (RFC 9113 recommends no fewer than 100).
pub(crate) const PROVEN_STREAMS: usize = 8;

/// The protocol checks of `target` (none for cleartext HTTP/1.1, which every other check speaks).
pub(crate) fn check(checks: &mut Checks, client: &mut Client, target: &Target<'_>) {
    let protocol = target.wire.protocol;
    if protocol == WireProtocol::H1 {
        return;
    }
    let connected = client.connect();
    if protocol.tls() {
        let outcome = connected.clone().map_err(|e| (Verdict::Fail, e)).and_then(|()| negotiated(client, protocol));
        checks.add_measured(CheckScope::Stack, &format!("TLS 1.3 with {LAB_CIPHER}, ALPN {}", alpn(protocol)), "/", outcome);
    }
    if protocol.http2() {
        let outcome = connected.map_err(|e| (Verdict::Fail, e)).and_then(|()| streams_at_once(client));
        checks.add_measured(
            CheckScope::Stack,
            &format!("HTTP/2: {PROVEN_STREAMS} streams answered at once on one connection"),
            "/",
            outcome,
        );
    }
}

fn alpn(protocol: WireProtocol) -> &'static str {
    protocol.alpn().unwrap_or("none")
}

/// What the handshake chose, against what the lab set.
fn negotiated(client: &Client, protocol: WireProtocol) -> Result<String, (Verdict, String)> {
    let Some(n) = client.negotiated() else { return fail("no TLS handshake was made") };
    if n.version != "1.3" {
        return fail(format!("the server negotiated TLS {}, not the 1.3 the lab set", n.version));
    }
    if n.cipher != LAB_CIPHER {
        return fail(format!("the server chose {}, not the {LAB_CIPHER} the lab offered alone", n.cipher));
    }
    match (protocol, n.alpn.as_deref()) {
        (WireProtocol::H2, Some("h2")) | (WireProtocol::H1Tls, Some("http/1.1") | None) => {}
        (WireProtocol::H2, other) => {
            return fail(format!(
                "ALPN chose {}, not h2: the server does not offer HTTP/2 over TLS (enable h2 in its TLS setup)",
                other.unwrap_or("nothing")
            ))
        }
        (_, Some(other)) => return fail(format!("ALPN chose {other} where only http/1.1 was offered")),
        (WireProtocol::H1 | WireProtocol::H2c, None) => return fail("a TLS handshake on a cleartext cell"),
    }
    Ok(format!("TLS {} {}, ALPN {}", n.version, n.cipher, n.alpn.as_deref().unwrap_or("none (HTTP/1.1)")))
}

/// Several streams sent before any answer is read: each must come back 200 on its own stream, and
/// the server must allow that many at once.
fn streams_at_once(client: &mut Client) -> Result<String, (Verdict, String)> {
    let x = client.h2().map_err(|e| (Verdict::Fail, e))?.ok_or((Verdict::Fail, "the connection is not HTTP/2".to_string()))?;
    let limit = x.max_concurrent_streams();
    if limit.is_some_and(|m| (m as usize) < PROVEN_STREAMS) {
        return fail(format!(
            "the server's SETTINGS allow {} concurrent streams, fewer than {PROVEN_STREAMS}: raise its MAX_CONCURRENT_STREAMS",
            limit.unwrap_or_default()
        ));
    }
    let paths: Vec<String> = (0..PROVEN_STREAMS).map(|i| format!("/no-such-route-{i}")).collect();
    let requests: Vec<H2Request<'_>> = paths.iter().map(|p| H2Request { method: "GET", path: p, headers: &[], body: None }).collect();
    let answers = x.send_all(&requests).map_err(|e| (Verdict::Fail, format!("{PROVEN_STREAMS} streams at once: {e}")))?;
    if let Some(bad) = answers.iter().find(|a| a.status != 404) {
        return fail(format!("a stream of an unknown route was answered {} instead of 404", bad.status));
    }
    Ok(format!(
        "{PROVEN_STREAMS} of {PROVEN_STREAMS} streams answered; MAX_CONCURRENT_STREAMS {}",
        limit.map_or("unlimited".to_string(), |m| m.to_string())
    ))
}
