//! Request decks end to end against a routing server: the mix as sent, each entry's own checks,
//! results per kind, bodies as given, pipelining and reconnects, and the plan's validation.

mod server;

use std::time::{Duration, Instant};

use bakeoff_load::{fnv1a64, run, Deck, DeckEntry, LoadPlan, LoadReport, PlanError, StepReport};
use server::{Route, RouteServer};

fn quick(url: &str) -> bakeoff_load::LoadPlanBuilder {
    LoadPlan::builder(url).connections(4).threads(2).timeout(Duration::from_secs(2))
}

/// Runs `plan`, failing the test if it takes longer than `max`.
fn run_within(plan: &LoadPlan, max: Duration) -> LoadReport {
    let t = Instant::now();
    let r = run(plan).unwrap();
    assert!(t.elapsed() < max, "took {:?}", t.elapsed());
    r
}

/// A GET of `path` that expects the echoed path back (status 200 and the body's hash).
fn echo(kind: u16, path: &str) -> DeckEntry {
    let mut e = DeckEntry::get(kind, path);
    e.checks.expect_status = Some(200);
    e.checks.expect_body_hash = Some(fnv1a64(path.as_bytes()));
    e
}

fn deck(kinds: &[&str], entries: Vec<DeckEntry>) -> Deck {
    Deck { kinds: kinds.iter().map(|k| k.to_string()).collect(), entries, login: None }
}

fn kind<'a>(st: &'a StepReport, name: &str) -> &'a bakeoff_load::KindReport {
    st.kinds.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no kind {name} in {:?}", st.kinds))
}

/// 6:3:1 written as ten entries.
fn weighted() -> Deck {
    let mut entries = Vec::new();
    for (k, path, n) in [(0, "/items/17", 6), (1, "/search?q=ab", 3), (2, "/about", 1)] {
        entries.extend((0..n).map(|_| echo(k, path)));
    }
    deck(&["item", "search", "about"], entries)
}

#[test]
fn the_mix_is_the_decks() {
    let s = RouteServer::start(&[]);
    // 3000 requests over 2 threads: 150 whole passes each, so the counts are exact.
    let plan = quick(&s.url()).requests(3000).deck(weighted()).build().unwrap();
    let r = run_within(&plan, Duration::from_secs(20));
    let st = &r.steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!((s.count("/items/17"), s.count("/search?q=ab"), s.count("/about")), (1800, 900, 300));
    let per_kind: Vec<u64> = st.kinds.iter().map(|k| k.requests).collect();
    assert_eq!(per_kind, [1800, 900, 300]);
    assert_eq!(st.kinds.iter().map(|k| k.latency.count).sum::<u64>(), st.latency.count);

    // A timed run stops anywhere in a pass: each thread is off by at most one pass.
    let plan = quick(&s.url()).duration(Duration::from_millis(800)).deck(weighted()).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(10)).steps[0];
    let total = st.requests as f64;
    for (k, share, per_pass) in [(0, 0.6, 6.0), (1, 0.3, 3.0), (2, 0.1, 1.0)] {
        let off = (st.kinds[k].requests as f64 - share * total).abs();
        assert!(off <= 2.0 * per_pass, "kind {k}: {} of {total}", st.kinds[k].requests);
    }
}

/// Whole passes of the deck send its mix and warn of nothing; part of one pass sends another mix,
/// and each kind off by more than a percentage point is named with both shares.
#[test]
fn a_mix_unlike_the_decks_is_a_warning_per_kind() {
    let s = RouteServer::start(&[]);
    let whole = quick(&s.url()).requests(3000).deck(weighted()).build().unwrap();
    let r = run_within(&whole, Duration::from_secs(20));
    assert!(!r.warnings.iter().any(|w| w.kind() == "mix_drift"), "{:?}", r.warnings);
    // One thread, six requests: the deck's first six entries, all `item`.
    let part = LoadPlan::builder(&s.url()).connections(1).threads(1).requests(6).deck(weighted()).build().unwrap();
    let r = run_within(&part, Duration::from_secs(10));
    let drift: Vec<String> = r.warnings.iter().filter(|w| w.kind() == "mix_drift").map(|w| w.message()).collect();
    assert_eq!(
        drift,
        [
            "[main] `item` was 100.0% of the requests sent, 60.0% of the deck",
            "[main] `search` was 0.0% of the requests sent, 30.0% of the deck",
            "[main] `about` was 0.0% of the requests sent, 10.0% of the deck",
        ]
    );
}

#[test]
fn the_open_model_walks_the_deck_too() {
    let s = RouteServer::start(&[]);
    let plan = quick(&s.url()).rate(2000.0).duration(Duration::from_millis(700)).deck(weighted()).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(10)).steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert!(st.requests > 1000, "{}", st.requests);
    let sent = [s.count("/items/17"), s.count("/search?q=ab"), s.count("/about")];
    let total: u64 = sent.iter().sum();
    for (k, (share, per_pass)) in [(0.6, 6.0), (0.3, 3.0), (0.1, 1.0)].into_iter().enumerate() {
        assert!((sent[k] as f64 - share * total as f64).abs() <= 2.0 * per_pass, "{sent:?}");
        // Counted by its kind; a request still in flight when the step ended (at most one per
        // connection) has no response.
        let got = st.kinds[k].requests;
        assert!(got <= sent[k] && got + 4 >= sent[k], "kind {k}: {got} of {} sent", sent[k]);
    }
    assert!(st.service_time.is_some());
}

#[test]
fn each_entry_is_checked_by_its_own_checks() {
    let not_found = Route { status: 404, delay: Duration::ZERO };
    let s = RouteServer::start(&[("/missing", not_found), ("/gone", not_found)]);
    let mut gone = DeckEntry::get(2, "/gone");
    gone.checks.expect_status = Some(404);
    let d = deck(&["ok", "missing", "gone"], vec![echo(0, "/ok"), echo(1, "/missing"), gone]);
    let plan = quick(&s.url()).requests(600).deck(d).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(20)).steps[0];
    let (ok, missing, gone) = (kind(st, "ok"), kind(st, "missing"), kind(st, "gone"));
    assert_eq!((ok.requests, missing.requests, gone.requests), (200, 200, 200));
    assert_eq!(ok.errors.total(), 0, "{:?}", ok.errors);
    assert_eq!(gone.errors.total(), 0, "{:?}", gone.errors);
    assert_eq!(missing.errors.status.get(&404), Some(&200), "{:?}", missing.errors);
    assert_eq!(missing.errors.total(), 200);
    assert_eq!(st.errors, missing.errors, "the step's errors are the kinds' together");
}

#[test]
fn latency_is_measured_per_kind() {
    let slow = Route { status: 200, delay: Duration::from_millis(5) };
    let s = RouteServer::start(&[("/slow", slow)]);
    let d = deck(&["fast", "slow"], vec![echo(0, "/fast"), echo(0, "/fast"), echo(1, "/slow")]);
    let plan = quick(&s.url()).duration(Duration::from_millis(1000)).deck(d).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(10)).steps[0];
    let (fast, slow) = (kind(st, "fast"), kind(st, "slow"));
    assert!(slow.requests > 20 && fast.requests > 20, "{} {}", fast.requests, slow.requests);
    assert!(slow.latency.p50_us >= 5000.0, "slow p50 {}", slow.latency.p50_us);
    assert!(fast.latency.p50_us < 2500.0, "fast p50 {} (slow {})", fast.latency.p50_us, slow.latency.p50_us);
    assert!(slow.requests_per_sec > 0.0 && slow.latency.max_us >= slow.latency.p99_us);
    let h = bakeoff_load::decode_histogram(&slow.histogram).unwrap();
    assert_eq!(h.len(), slow.latency.count);
}

#[test]
fn bodies_arrive_byte_identical() {
    let s = RouteServer::start(&[]);
    let json = br#"{"item":17,"qty":2,"note":"caf\u00e9"}"#.to_vec();
    // Binary, with what looks like the end of a head inside it: only Content-Length frames it.
    let binary: Vec<u8> = b"\x00\x01\r\n\r\nGET / HTTP/1.1\r\n\r\n".iter().copied().chain(0..=255u8).collect();
    let mut cart = echo(1, "/cart");
    cart.method = "POST".into();
    cart.headers.push(("Content-Type".into(), "application/json".into()));
    cart.body = Some(json.clone());
    let mut upload = echo(1, "/upload");
    upload.method = "put".into();
    upload.body = Some(binary.clone());
    let d = deck(&["item", "write"], vec![echo(0, "/items/1"), cart, upload]);
    let plan = quick(&s.url()).requests(300).deck(d).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(20)).steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!((s.count("/cart"), s.count("/upload"), s.count("/items/1")), (100, 100, 100));
    let seen = s.seen.lock().unwrap();
    assert!(!seen.bodies["/cart"].is_empty() && seen.bodies["/cart"].iter().all(|b| *b == json));
    assert!(!seen.bodies["/upload"].is_empty() && seen.bodies["/upload"].iter().all(|b| *b == binary));
}

#[test]
fn pipelined_responses_meet_their_own_entries() {
    let s = RouteServer::start(&[("/nf", Route { status: 404, delay: Duration::ZERO })]);
    let mut nf = DeckEntry::get(1, "/nf");
    nf.checks.expect_status = Some(404);
    nf.checks.expect_body_hash = Some(fnv1a64(b"/nf"));
    // Every entry expects its own path echoed back: a response checked against another
    // entry's checks fails its status or its body hash.
    let entries = vec![echo(0, "/p0"), echo(0, "/p1"), nf, echo(0, "/p2"), echo(0, "/p3")];
    let plan = quick(&s.url()).pipeline(4).requests(2000).deck(deck(&["p", "nf"], entries)).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(20)).steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!((kind(st, "p").requests, kind(st, "nf").requests), (1600, 400));
    for p in ["/p0", "/p1", "/p2", "/p3", "/nf"] {
        assert_eq!(s.count(p), 400, "{p}");
    }
    assert_eq!(s.accepts(), 4, "keep-alive");
}

#[test]
fn head_entries_expect_no_body_and_the_others_do() {
    let s = RouteServer::start(&[]);
    let mut head = DeckEntry::get(1, "/h");
    head.method = "HEAD".into();
    head.checks.expect_length = Some(0);
    // Pipelined, so a HEAD response and a GET response often arrive in one read.
    let d = deck(&["get", "head"], vec![echo(0, "/g"), head, echo(0, "/g2")]);
    let plan = quick(&s.url()).pipeline(3).requests(900).deck(d).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(20)).steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!((kind(st, "get").requests, kind(st, "head").requests), (600, 300));
}

#[test]
fn reconnects_keep_the_deck_and_its_checks() {
    let s = RouteServer::start(&[]);
    let plan = quick(&s.url()).requests(1000).requests_per_conn(7).deck(weighted()).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(20)).steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!((s.count("/items/17"), s.count("/search?q=ab"), s.count("/about")), (600, 300, 100));
    let plan = quick(&s.url()).requests(200).close(true).deck(weighted()).build().unwrap();
    let st = &run_within(&plan, Duration::from_secs(20)).steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!(st.kinds.iter().map(|k| k.requests).collect::<Vec<_>>(), [120, 60, 20]);
    assert!(s.accepts() >= 1000 / 7 + 200);
}

#[test]
fn bad_decks_are_plan_errors_with_a_hint() {
    let b = || LoadPlan::builder("http://127.0.0.1:9/");
    let bad = [
        b().deck(deck(&["a"], vec![])),
        b().deck(deck(&["a"], vec![DeckEntry::get(1, "/")])),
        b().deck(deck(&[], vec![DeckEntry::get(0, "/")])),
        b().deck(Deck { kinds: vec!["k".into(); 65_536], entries: vec![DeckEntry::get(0, "/")], login: None }),
        b().deck(deck(&["a"], vec![DeckEntry::get(0, "items")])),
    ];
    for p in bad {
        let e = p.build().unwrap_err();
        assert!(matches!(e, PlanError::BadDeck(_)), "{e}");
        assert!(e.hint().contains("65535"), "{}", e.hint());
    }
    let two_urls = b().url("http://127.0.0.1:10/").deck(weighted()).build().unwrap_err();
    assert!(matches!(two_urls, PlanError::Conflict(_)), "{two_urls}");
    assert!(b().deck(Deck { kinds: vec!["k".into(); 65_535], entries: vec![DeckEntry::get(65_534, "/")], login: None }).build().is_ok());
}

#[test]
fn without_a_deck_the_report_has_no_kinds() {
    let s = RouteServer::start(&[]);
    let plan = quick(&s.url()).requests(100).build().unwrap();
    assert!(plan.deck.is_none());
    let r = run_within(&plan, Duration::from_secs(10));
    assert!(r.steps[0].kinds.is_empty());
    let json = r.to_json();
    assert!(!json.contains("\"kinds\""), "the JSON shape is unchanged");
    let back: LoadReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.steps[0].requests, r.steps[0].requests);
    assert!(back.steps[0].kinds.is_empty());
}
