//! A hang is a failure: requests a stalled server never answers are `unanswered` errors, and a
//! silence with requests outstanding is a typed warning saying when the server stopped.

use crate::common;

use std::time::Duration;

use bakeoff_load::{run, LoadPlan, LoadReport, Warning};
use common::{Mode, Server};

/// Three seconds of closed-model load with a timeout longer than the step, so nothing times out.
fn three_seconds(mode: Mode) -> LoadReport {
    let s = Server::start(mode);
    let plan = LoadPlan::builder(&s.url())
        .connections(4)
        .threads(2)
        .timeout(Duration::from_secs(30))
        .duration(Duration::from_secs(3))
        .build()
        .unwrap();
    run(&plan).unwrap()
}

fn stopped_at(r: &LoadReport) -> Option<(f64, f64)> {
    r.steps[0].warnings.iter().find_map(|w| match w {
        Warning::StoppedAnswering { at_s, silent_s, .. } => Some((*at_s, *silent_s)),
        _ => None,
    })
}

#[test]
fn a_server_that_hangs_after_some_requests_leaves_them_unanswered_and_is_reported_stopped() {
    let r = three_seconds(Mode::HangAfter(300));
    let st = &r.steps[0];
    assert_eq!(st.requests, 300, "{st:?}");
    assert_eq!(st.errors.unanswered, 4, "one waiting request per connection: {:?}", st.errors);
    assert_eq!(st.errors.timeout, 0);
    let (at, silent) = stopped_at(&r).unwrap_or_else(|| panic!("no stopped-answering warning: {:?}", st.warnings));
    assert!(at < 1.0, "300 requests take well under a second here, so it stopped early: t={at}");
    assert!(silent > 1.5, "silent from then to the end: {silent}");
    assert!(st.warnings.iter().any(|w| w.kind() == "high_error_rate"), "4 of 304 requests failed: {:?}", st.warnings);
    assert!(stopped_at(&r).map(|_| r.warnings.iter().any(|w| w.kind() == "stopped_answering")).unwrap());
}

#[test]
fn a_partial_response_then_a_stall_is_unanswered_not_a_clean_run() {
    let r = three_seconds(Mode::Partial);
    let st = &r.steps[0];
    assert_eq!(st.requests, 0);
    assert_eq!(st.errors.unanswered, 4, "{:?}", st.errors);
    assert!(stopped_at(&r).is_some(), "{:?}", st.warnings);
}

#[test]
fn a_healthy_server_has_no_unanswered_requests_and_no_stall() {
    let r = three_seconds(Mode::Ok);
    let st = &r.steps[0];
    assert!(st.requests > 1000, "{st:?}");
    assert_eq!(st.errors.unanswered, 0, "the last request of each connection is young, not unanswered");
    assert_eq!(stopped_at(&r), None);
}

#[test]
fn a_pause_shorter_than_a_second_is_not_a_stall() {
    let r = three_seconds(Mode::Freeze { period_ms: 1000, freeze_ms: 600 });
    assert_eq!(stopped_at(&r), None, "{:?}", r.steps[0].warnings);
    assert_eq!(r.steps[0].errors.unanswered, 0);
}
