//! The load generator over TLS against a real nginx: what was negotiated, handshakes counted and
//! timed apart from requests, resumption on and off, TLS 1.2 on request, and the failures a user
//! meets (a plain server, a refused version, a certificate from another authority) as TLS errors
//! with the first failure's words.

use std::time::Duration;

use bakeoff_load::{Layer, LoadPlan, LoadReport, TlsSettings, TlsVersion, Warning};

use crate::common::nginx::{Nginx, HELLO};

fn run(url: &str, tls: TlsSettings, shape: impl FnOnce(bakeoff_load::LoadPlanBuilder) -> bakeoff_load::LoadPlanBuilder) -> LoadReport {
    let b = LoadPlan::builder(url).connections(4).threads(1).duration(Duration::from_millis(700)).timeout(Duration::from_secs(2)).tls(tls);
    bakeoff_load::run(&shape(b).expect_length(HELLO.len() as u64).build().unwrap()).unwrap()
}

fn settings(version: TlsVersion, resumption: bool, ca: Option<std::path::PathBuf>) -> TlsSettings {
    TlsSettings { version, resumption, ca_file: ca, cipher: None }
}

#[test]
fn https_is_answered_with_one_handshake_per_connection() {
    let server = Nginx::start();
    let r = run(&server.url(server.tls, "https"), settings(TlsVersion::Tls13, true, Some(server.ca())), |b| b);
    let s = &r.steps[0];
    assert_eq!(s.errors.total(), 0, "{:?}", s.errors);
    assert!(s.requests > 100, "{} requests", s.requests);
    let t = s.tls.as_ref().expect("a TLS step reports its handshakes");
    assert_eq!((t.version.as_deref(), t.alpn.as_deref()), (Some("1.3"), Some("http/1.1")));
    assert!(t.cipher.as_deref().is_some_and(|c| c.starts_with("TLS13_")), "{:?}", t.cipher);
    // Keep-alive: one handshake per connection, none per request.
    assert_eq!(t.handshakes, 4);
    assert_eq!(t.handshake_latency.as_ref().map(|l| l.count), Some(4));
    assert_eq!(r.plan.tls.as_ref().map(|t| t.version), Some(TlsVersion::Tls13));
}

#[test]
fn a_connection_per_request_is_a_handshake_per_request_resumed_or_full() {
    let server = Nginx::start();
    let url = server.url(server.tls, "https");
    for resumption in [true, false] {
        let r = run(&url, settings(TlsVersion::Tls13, resumption, None), |b| b.close(true));
        let s = &r.steps[0];
        let t = s.tls.as_ref().unwrap();
        assert_eq!(s.errors.total(), 0, "{:?}", s.errors);
        assert!(s.requests > 50, "{} requests", s.requests);
        // Every request had its own connection; the handshakes in flight at the window's edges differ.
        assert!(t.handshakes.abs_diff(s.requests) <= 8, "{} handshakes for {} requests", t.handshakes, s.requests);
        if resumption {
            assert!(t.resumed * 10 >= t.handshakes * 9, "{} of {} resumed", t.resumed, t.handshakes);
        } else {
            assert_eq!(t.resumed, 0);
        }
    }
}

#[test]
fn tls_1_2_is_spoken_on_request_and_refused_where_the_server_forbids_it() {
    let server = Nginx::start();
    let r = run(&server.url(server.tls12_only, "https"), settings(TlsVersion::Tls12, true, Some(server.ca())), |b| b);
    let t = r.steps[0].tls.as_ref().unwrap();
    assert_eq!(r.steps[0].errors.total(), 0);
    assert_eq!(t.version.as_deref(), Some("1.2"));
    assert!(t.cipher.as_deref().is_some_and(|c| c.starts_with("TLS_ECDHE_")), "{:?}", t.cipher);
    let r = run(&server.url(server.tls12_only, "https"), settings(TlsVersion::Tls13, true, None), |b| b);
    assert_failed(&r, "refused the TLS version");
}

#[test]
fn a_plain_server_and_a_foreign_certificate_are_tls_failures_that_say_why() {
    let server = Nginx::start();
    let r = run(&server.url(server.plain, "https"), settings(TlsVersion::Tls13, true, None), |b| b);
    assert_failed(&r, "corrupt message");
    let r = run(&server.url(server.tls, "https"), settings(TlsVersion::Tls13, true, Some(server.other_ca())), |b| b);
    assert_failed(&r, "UnknownIssuer");
}

/// No request answered, every failure a TLS one, and a warning quoting the first with `words`.
fn assert_failed(r: &LoadReport, words: &str) {
    let s = &r.steps[0];
    assert_eq!(s.requests, 0);
    assert!(s.errors.tls > 0 && s.errors.tls == s.errors.total(), "{:?}", s.errors);
    let warning = s.warnings.iter().find_map(|w| match w {
        Warning::ProtocolFailed { layer: Layer::Tls, error, failed, .. } => Some((error.clone(), *failed)),
        _ => None,
    });
    let (error, failed) = warning.expect("a TLS failure warning");
    assert_eq!(failed, s.errors.tls);
    assert!(error.contains(words), "`{error}` should say `{words}`");
}

#[test]
fn tls_options_need_an_https_url_and_a_readable_certificate_file() {
    let e = LoadPlan::builder("http://127.0.0.1:1/").tls(TlsSettings::new()).build().unwrap_err();
    assert!(e.to_string().contains("https://"), "{e}");
    let e = LoadPlan::builder("https://127.0.0.1:1/").url("http://127.0.0.1:2/").build().unwrap_err();
    assert!(e.to_string().contains("one scheme"), "{e}");
    let missing = settings(TlsVersion::Tls13, true, Some("/nonexistent/ca.pem".into()));
    let e = LoadPlan::builder("https://127.0.0.1:1/").tls(missing).build().unwrap_err();
    assert!(e.to_string().contains("/nonexistent/ca.pem") && !e.hint().is_empty(), "{e}");
}
