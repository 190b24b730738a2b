//! End-to-end runs against the in-process target: counts, connection reuse, pipelining, errors by kind.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bakeoff_load::{run, run_with_cancel, ErrorCounts, LoadPlan, LoadPlanBuilder, LoadReport, Warning};
use common::{dead_port, Mode, Server};

fn quick(url: &str) -> LoadPlanBuilder {
    LoadPlan::builder(url).connections(4).threads(2).timeout(Duration::from_secs(2))
}

fn timed<T>(f: impl FnOnce() -> T, max: Duration) -> T {
    let t = Instant::now();
    let r = f();
    assert!(t.elapsed() < max, "took {:?}", t.elapsed());
    r
}

#[test]
fn closed_model_counts_match_server() {
    let s = Server::start(Mode::Ok);
    let plan = quick(&s.url()).requests(1000).expect_length(12).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(10));
    let st = &r.steps[0];
    assert_eq!(st.requests, 1000);
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert_eq!(s.requests.load(Ordering::Relaxed), 1000);
    // keep-alive: one socket per connection
    assert_eq!(s.accepts(), 4);
    assert_eq!(st.latency.count, 1000);
    assert!(st.service_time.is_none());
    assert!(st.bytes >= 1000 * 50);
    assert_eq!(r.schema_version, 1);
    // the JSON round-trips
    let back: LoadReport = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(back.steps[0].requests, r.steps[0].requests);
    let h = bakeoff_load::decode_histogram(&st.histogram).unwrap();
    assert_eq!(h.len(), 1000);
}

#[test]
fn duration_run_and_timeline() {
    let s = Server::start(Mode::Chunked);
    let plan = quick(&s.url())
        .duration(Duration::from_millis(1500))
        .expect_length(12)
        .expect_body_hash(bakeoff_load::fnv1a64(b"Hello World!"))
        .build()
        .unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(5));
    let st = &r.steps[0];
    assert!(st.requests > 100, "{}", st.requests);
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert!(st.duration_s > 1.4 && st.duration_s < 1.7, "{}", st.duration_s);
    assert_eq!(st.timeline.len(), 2);
    assert_eq!(st.timeline.iter().map(|t| t.requests).sum::<u64>(), st.requests);
}

/// `requests` requests against a healthy server, the plan shaped by `shape`: every one answered,
/// none failed. Returns how many connections the server accepted.
fn accepts_for(requests: u64, shape: impl FnOnce(LoadPlanBuilder) -> LoadPlanBuilder) -> u64 {
    let s = Server::start(Mode::Ok);
    let plan = shape(quick(&s.url()).requests(requests)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(10));
    assert_eq!(r.steps[0].requests, requests);
    assert_eq!(r.steps[0].errors.total(), 0, "{:?}", r.steps[0].errors);
    s.accepts()
}

#[test]
fn close_mode_opens_a_connection_per_request() {
    let a = accepts_for(200, |p| p.close(true));
    assert!((200..=204).contains(&a), "accepts {a}");
}

#[test]
fn requests_per_conn_reconnects() {
    let a = accepts_for(400, |p| p.requests_per_conn(10));
    assert!((40..=44).contains(&a), "accepts {a}");
}

#[test]
fn pipelining() {
    assert_eq!(accepts_for(2000, |p| p.connections(2).pipeline(16)), 2);
}

#[test]
fn refused_connection_is_counted_not_hung() {
    let url = format!("http://127.0.0.1:{}/", dead_port());
    let plan = quick(&url).duration(Duration::from_millis(300)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(3));
    assert!(r.steps[0].errors.connect > 0);
    assert_eq!(r.steps[0].requests, 0);
    assert!(r.warnings.iter().any(|w| matches!(w, Warning::NoResponses { .. })));
    assert!(r.warnings.iter().any(|w| matches!(w, Warning::HighErrorRate { .. })));
    // a request-count run against nothing still ends
    let plan = quick(&url).requests(50).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(5));
    assert!(r.steps[0].errors.connect >= 50);
}

/// 300 ms against a server that never answers properly: no request counts, and these are the errors.
fn errors_without_an_answer(mode: Mode) -> ErrorCounts {
    let s = Server::start(mode);
    let plan = quick(&s.url()).duration(Duration::from_millis(300)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(3));
    assert_eq!(r.steps[0].requests, 0);
    r.steps[0].errors.clone()
}

#[test]
fn server_closing_early_is_a_read_error() {
    let e = errors_without_an_answer(Mode::CloseEarly);
    assert!(e.read > 0, "{e:?}");
}

#[test]
fn garbage_is_malformed() {
    let e = errors_without_an_answer(Mode::Garbage);
    assert!(e.malformed > 0, "{e:?}");
}

#[test]
fn partial_response_then_stall_times_out() {
    let s = Server::start(Mode::Partial);
    let plan =
        quick(&s.url()).connections(2).threads(1).duration(Duration::from_millis(800)).timeout(Duration::from_millis(200)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(3));
    let e = &r.steps[0].errors;
    assert!(e.timeout >= 2, "{e:?}");
    assert_eq!(r.steps[0].requests, 0);
    assert_eq!(r.steps[0].latency.count, 0);
}

#[test]
fn wrong_status_counted_by_code() {
    let s = Server::start(Mode::Status(503));
    let plan = quick(&s.url()).requests(100).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(5));
    assert_eq!(r.steps[0].errors.status.get(&503), Some(&100));
    // --expect-status makes it a success
    let plan = quick(&s.url()).requests(100).expect_status(503).build().unwrap();
    let r = run(&plan).unwrap();
    assert_eq!(r.steps[0].errors.total(), 0);
    // and a 200 a failure
    let ok = Server::start(Mode::Ok);
    let plan = quick(&ok.url()).requests(10).expect_status(204).build().unwrap();
    assert_eq!(run(&plan).unwrap().steps[0].errors.status.get(&200), Some(&10));
}

#[test]
fn body_mismatch() {
    let s = Server::start(Mode::WrongBody);
    let plan = quick(&s.url()).requests(100).expect_body_hash(bakeoff_load::fnv1a64(b"Hello World!")).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(5));
    assert_eq!(r.steps[0].errors.body_mismatch, 100);
    let plan = quick(&s.url()).requests(100).expect_length(12).build().unwrap();
    assert_eq!(run(&plan).unwrap().steps[0].errors.body_mismatch, 0);
}

#[test]
fn cancel_stops_early() {
    let s = Server::start(Mode::Ok);
    let plan = quick(&s.url()).duration(Duration::from_secs(30)).build().unwrap();
    let cancel = AtomicBool::new(false);
    let r = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, Ordering::Relaxed);
        });
        timed(|| run_with_cancel(&plan, &cancel).unwrap(), Duration::from_secs(3))
    });
    assert!(r.plan.cancelled);
    assert!(r.steps[0].requests > 0);
    assert!(r.warnings.contains(&Warning::Cancelled));
}

#[test]
fn open_rate_is_met_and_ramp_and_ladder_make_steps() {
    let s = Server::start(Mode::Ok);
    let plan = quick(&s.url()).rate(500.0).duration(Duration::from_secs(1)).warmup(Duration::from_millis(200)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(4));
    let st = &r.steps[0];
    assert!((st.requests as f64 - 500.0).abs() < 30.0, "{}", st.requests);
    assert!(st.service_time.is_some());
    assert!(st.max_schedule_lag_ms.is_some());
    assert!(!r.warnings.iter().any(|w| matches!(w, Warning::TargetRateNotReached { .. })), "{:?}", r.warnings);

    let plan = quick(&s.url()).ramp(bakeoff_load::Ramp::parse("100:100:300ms:300").unwrap()).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(4));
    assert_eq!(r.steps.len(), 3);
    assert_eq!(r.steps[2].target_rate, Some(300.0));
    for (st, want) in r.steps.iter().zip([30.0, 60.0, 90.0]) {
        assert!((st.requests as f64 - want).abs() <= 8.0, "{} vs {want}", st.requests);
    }

    let plan = quick(&s.url()).conn_ladder(vec![2, 4]).step_duration(Duration::from_millis(300)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(4));
    assert_eq!(r.steps.len(), 2);
    assert_eq!(r.steps[1].connections, 4);
}

#[test]
fn unreachable_rate_warns() {
    // One connection answering in ~ms cannot do 1M req/s.
    let s = Server::start(Mode::Ok);
    let plan = LoadPlan::builder(&s.url()).connections(1).rate(1_000_000.0).duration(Duration::from_millis(300)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(4));
    assert!(r.warnings.iter().any(|w| matches!(w, Warning::TargetRateNotReached { .. })), "{:?}", r.warnings);
}

#[test]
fn multiple_urls_round_robin() {
    let a = Server::start(Mode::Ok);
    let plan = quick(&a.url()).url(&format!("http://127.0.0.1:{}/other", a.port())).requests(100).build().unwrap();
    let r = run(&plan).unwrap();
    assert_eq!(r.steps[0].requests, 100);
    assert_eq!(r.plan.urls.len(), 2);
}

#[test]
fn hdr_log_has_one_interval_per_measured_second() {
    let s = Server::start(Mode::Ok);
    let plan = quick(&s.url()).connections(2).duration(Duration::from_millis(1200)).header_line("X-Test: 1").build().unwrap();
    let out = bakeoff_load::run_observed(&plan, &AtomicBool::new(false), None).unwrap();
    assert_eq!(out.report.steps[0].errors.total(), 0, "{:?}", out.report.steps[0].errors);
    let path = std::env::temp_dir().join(format!("bakeoff-load-test-{}.hlog", std::process::id()));
    bakeoff_load::write_hdr_log(&path, &out.details, std::time::SystemTime::now()).unwrap();
    let text = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let mut total = 0;
    let mut intervals = 0;
    for item in hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&text) {
        if let Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(h)) = item {
            let b = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, h.encoded_histogram()).unwrap();
            let hist: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new().deserialize(&mut &b[..]).unwrap();
            total += hist.len();
            intervals += 1;
        }
    }
    assert_eq!(intervals, 2);
    assert_eq!(total, out.report.steps[0].requests);
}

#[test]
fn open_model_with_pipelining() {
    let s = Server::start(Mode::Ok);
    let plan = quick(&s.url()).connections(2).pipeline(4).rate(1000.0).duration(Duration::from_millis(800)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(4));
    let st = &r.steps[0];
    assert_eq!(st.errors.total(), 0, "{:?}", st.errors);
    assert!((st.requests as f64 - 800.0).abs() < 40.0, "{}", st.requests);
    assert_eq!(s.accepts(), 2);
}

#[test]
fn connections_a_server_never_answers_are_reported_as_starved() {
    let s = Server::start(Mode::OneAtATime);
    let plan =
        quick(&s.url()).connections(4).threads(1).duration(Duration::from_millis(500)).timeout(Duration::from_secs(5)).build().unwrap();
    let r = timed(|| run(&plan).unwrap(), Duration::from_secs(5));
    assert!(r.steps[0].requests > 10, "the one served connection made progress");
    assert!(
        r.steps[0].warnings.iter().any(|w| matches!(w, Warning::StarvedConnections { starved, connections: 4, .. } if *starved >= 2)),
        "{:?}",
        r.steps[0].warnings
    );
    // A server that answers every connection leaves none starved.
    let ok = Server::start(Mode::Ok);
    let plan = quick(&ok.url()).connections(4).duration(Duration::from_millis(300)).build().unwrap();
    let r = run(&plan).unwrap();
    assert!(!r.steps[0].warnings.iter().any(|w| matches!(w, Warning::StarvedConnections { .. })));
}
