//! The load generator over HTTP/2 against a real nginx: over TLS by ALPN and in cleartext with
//! prior knowledge, many streams per connection, bodies in several DATA frames checked, the
//! server's stream limit obeyed, streams refused by a graceful GOAWAY sent again, a deck's kinds,
//! the open model's rate, and servers that do not speak HTTP/2 as failures that say why.

use std::time::Duration;

use bakeoff_load::{Deck, DeckEntry, Layer, LoadPlan, LoadPlanBuilder, LoadReport, Protocol, TlsSettings, Warning};

use crate::common::nginx::{Nginx, BIG, HELLO};

fn h2(url: &str) -> LoadPlanBuilder {
    LoadPlan::builder(url)
        .protocol(Protocol::Http2)
        .connections(2)
        .threads(1)
        .duration(Duration::from_millis(700))
        .timeout(Duration::from_secs(2))
}

fn run(b: LoadPlanBuilder) -> LoadReport {
    bakeoff_load::run(&b.build().unwrap()).unwrap()
}

#[test]
fn h2_over_tls_and_h2c_answer_many_streams_per_connection() {
    let nginx = Nginx::start();
    for (url, tls) in [(nginx.url(nginx.h2, "https"), true), (nginx.url(nginx.h2c, "http"), false)] {
        let r = run(h2(&url).streams(8).expect_body_hash(bakeoff_load::fnv1a64(HELLO.as_bytes())));
        let s = &r.steps[0];
        assert_eq!(s.errors.total(), 0, "{url}: {:?} {:?}", s.errors, s.warnings);
        assert!(s.requests > 1000, "{url}: {} requests", s.requests);
        let h = s.h2.as_ref().expect("an HTTP/2 step reports its streams");
        assert_eq!((h.streams_asked, h.streams), (8, Some(8)));
        let server = h.server_settings.expect("nginx sends SETTINGS");
        assert_eq!(server.max_concurrent_streams, Some(128), "nginx's default");
        assert_eq!(s.tls.as_ref().map(|t| t.alpn.as_deref()), tls.then_some(Some("h2")));
        assert_eq!(r.plan.protocol, Protocol::Http2);
    }
}

#[test]
fn a_body_in_many_data_frames_is_counted_whole() {
    let nginx = Nginx::start();
    let r = run(h2(&format!("{}big", nginx.url(nginx.h2c, "http"))).streams(4).expect_length(BIG as u64));
    let s = &r.steps[0];
    assert_eq!(s.errors.total(), 0, "{:?}", s.errors);
    assert!(s.requests > 50, "{} requests", s.requests);
    assert!(s.bytes >= s.requests * BIG as u64, "{} bytes for {} bodies of {BIG}", s.bytes, s.requests);
}

#[test]
fn the_servers_stream_limit_holds_and_a_graceful_goaway_loses_nothing() {
    let nginx = Nginx::start();
    // 4 streams allowed of 16 asked; 50 requests a connection, then GOAWAY: -n must still be met
    // exactly, the streams the server refused sent again elsewhere.
    let r = run(h2(&nginx.url(nginx.h2c_limited, "http")).streams(16).requests(3000));
    let s = &r.steps[0];
    assert_eq!(s.errors.total(), 0, "{:?}", s.errors);
    assert_eq!(s.requests, 3000);
    let h = s.h2.as_ref().unwrap();
    assert_eq!(h.streams, Some(4));
    assert!(h.goaways >= 3000 / 50 - 2, "{} GOAWAYs", h.goaways);
}

#[test]
fn a_deck_is_sent_over_h2_with_results_per_kind() {
    let nginx = Nginx::start();
    let entry = |kind, path: &str, len| {
        let mut e = DeckEntry::get(kind, path);
        e.checks.expect_length = Some(len);
        e
    };
    let wrong = entry(1, "/big", 7);
    let deck = Deck {
        kinds: vec!["hello".into(), "big".into()],
        entries: vec![entry(0, "/", HELLO.len() as u64), entry(1, "/big", BIG as u64), entry(0, "/", HELLO.len() as u64)],
        login: None,
    };
    let r = run(h2(&nginx.url(nginx.h2c, "http")).streams(6).deck(deck.clone()));
    let s = &r.steps[0];
    assert_eq!(s.errors.total(), 0, "{:?}", s.errors);
    let counts: Vec<(&str, u64)> = s.kinds.iter().map(|k| (k.name.as_str(), k.requests)).collect();
    let (hello, big) = (counts[0].1, counts[1].1);
    assert!(big > 20 && hello.abs_diff(2 * big) <= 12, "two hellos for each big body: {counts:?}");
    // A check that fails on one kind fails that kind only.
    let deck = Deck { entries: vec![deck.entries[0].clone(), wrong], ..deck };
    let s = &run(h2(&nginx.url(nginx.h2c, "http")).streams(6).deck(deck)).steps[0];
    assert_eq!((s.kinds[0].errors.total(), s.kinds[1].errors.body_mismatch), (0, s.kinds[1].requests));
}

#[test]
fn the_open_model_keeps_its_rate_over_h2() {
    let nginx = Nginx::start();
    let r = run(h2(&nginx.url(nginx.h2c, "http")).streams(4).rate(2000.0).duration(Duration::from_secs(1)));
    let s = &r.steps[0];
    assert_eq!(s.errors.total(), 0, "{:?}", s.errors);
    assert!((1800.0..2200.0).contains(&s.requests_per_sec), "{} req/s at 2000/s", s.requests_per_sec);
    assert!(s.service_time.is_some());
}

#[test]
fn servers_that_do_not_speak_h2_fail_with_the_reason() {
    let nginx = Nginx::start();
    let r = run(h2(&nginx.url(nginx.plain, "http")));
    assert_failed(&r, Layer::Http2, "answered the HTTP/2 preface in HTTP/1.1");
    let r = run(h2(&nginx.url(nginx.tls, "https")).tls(TlsSettings::new()));
    assert_failed(&r, Layer::Tls, "refused ALPN `h2`");
}

/// No request answered, and a warning of `layer` quoting its first failure with `words`.
fn assert_failed(r: &LoadReport, layer: Layer, words: &str) {
    let s = &r.steps[0];
    assert_eq!(s.requests, 0);
    assert!(s.errors.total() > 0, "{:?}", s.errors);
    let error = s.warnings.iter().find_map(|w| match w {
        Warning::ProtocolFailed { layer: l, error, .. } if *l == layer => Some(error.clone()),
        _ => None,
    });
    let error = error.unwrap_or_else(|| panic!("a {layer:?} failure warning in {:?}", s.warnings));
    assert!(error.contains(words), "`{error}` should say `{words}`");
}
