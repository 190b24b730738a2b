//! `compare` does not call a change that the CPU meter cannot see: a cell measured in a handful of
//! /proc ticks per trial differs by a tick between identical runs, while the same relative change
//! over thousands of ticks is real.

use bakeoff_model::plan::goal::PrimaryMetric;
use bakeoff_model::records::results::{ProcessSample, TrialRecord, PROC_TICK_S};
use bakeoff_model::statistics::comparison::{compare, Change};
use bakeoff_report::synthetic;
use hdrhistogram::Histogram;

fn histogram() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
    h.record_n(500, 1_000).unwrap();
    h
}

/// A one-process trial that served `requests` requests on `ticks` ticks of CPU.
fn trial(n: u32, requests: u64, ticks: f64) -> TrialRecord {
    let mut t = synthetic::trial("python-flask", "hello", n, &[(None, histogram())]);
    let cpu_s = ticks * PROC_TICK_S;
    t.server.cpu_s = cpu_s;
    t.server.cpu_us_per_request = cpu_s * 1e6 / requests as f64;
    t.samples = vec![ProcessSample { t_ms: 0, rss_bytes: 1, pss_bytes: 1, cpu_s: 0.0, processes: 1 }];
    t
}

fn cpu_verdict(requests: u64, ticks_a: &[f64], ticks_b: &[f64]) -> Change {
    let a: Vec<TrialRecord> = ticks_a.iter().enumerate().map(|(i, &k)| trial(i as u32, requests, k)).collect();
    let b: Vec<TrialRecord> = ticks_b.iter().enumerate().map(|(i, &k)| trial(i as u32, requests, k)).collect();
    let c = compare(("a", &a), ("b", &b), PrimaryMetric::Efficiency, Some(0.05));
    c.cells[0].verdict
}

#[test]
fn a_change_of_a_tick_or_two_is_no_detectable_change() {
    // 168 requests a trial, 5 ticks against 3: the meter's steps, not the server.
    assert_eq!(cpu_verdict(168, &[5.0, 5.0, 4.0, 5.0, 6.0], &[3.0, 3.0, 3.0, 4.0, 3.0]), Change::NoDetectableChange);
}

#[test]
fn the_same_relative_change_over_thousands_of_ticks_is_detected() {
    let scale = |v: &[f64]| v.iter().map(|k| k * 1000.0).collect::<Vec<_>>();
    let (a, b) = (scale(&[5.0, 5.0, 4.0, 5.0, 6.0]), scale(&[3.0, 3.0, 3.0, 4.0, 3.0]));
    assert_eq!(cpu_verdict(168_000, &a, &b), Change::Faster);
    assert_eq!(cpu_verdict(168_000, &b, &a), Change::Slower);
}
