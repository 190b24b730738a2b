//! Which cells the summary leaves unranked, and so out of every ranking and claim: a trial with
//! errors over 1% of its requests, or a closed-model step whose connections were never answered.

use bakeoff_load::Warning;
use bakeoff_model::records::finding::{Finding, FindingKind};
use bakeoff_model::statistics::summary::{summarize, UNRANKABLE_ERROR_PERCENT};
use bakeoff_report::synthetic;
use hdrhistogram::Histogram;

fn trial(n: u32, errors: u64) -> bakeoff_model::records::results::TrialRecord {
    let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
    h.record_n(500, 10_000).unwrap();
    let mut t = synthetic::trial("scala-pekko", "hello", n, &[(None, h)]);
    let s = &mut t.load.steps[0];
    (s.requests, s.errors.read) = (10_000, errors);
    t
}

#[test]
fn errors_over_one_percent_in_any_trial_make_the_cell_unrankable() {
    assert_eq!(UNRANKABLE_ERROR_PERCENT, 1.0);
    // 100 of 10,100 attempts is 0.99%: ranked.
    let cells = summarize(&[trial(1, 100), trial(2, 0), trial(3, 100)]);
    assert!(cells[0].rankable(), "{:?}", cells[0].unrankable);
    // pekko-http in seed 001: 2-3% of requests failed in every trial.
    let cells = summarize(&[trial(1, 240), trial(2, 50), trial(3, 340)]);
    assert!(!cells[0].rankable());
    let reasons: Vec<String> = cells[0].unrankable.iter().map(Finding::tagged).collect();
    assert_eq!(reasons, ["errors: 3.29% of requests failed in trial 3 (2 of 3 trials over the 1% a ranked cell may have)"]);
}

#[test]
fn connections_never_answered_make_the_cell_unrankable_with_the_reason() {
    let mut t = trial(2, 0);
    t.load.steps[0].warnings.push(Warning::StarvedConnections { step: "main".into(), starved: 97, connections: 256 });
    let cells = summarize(&[trial(1, 0), t, trial(3, 0)]);
    let reasons: Vec<String> = cells[0].unrankable.iter().map(Finding::tagged).collect();
    assert_eq!(
        reasons,
        ["starved_connections: [main] 97 of 256 connections got no response: their waits are in no percentile (1 of 3 trials)"]
    );
    assert!(matches!(cells[0].unrankable[0].kind, FindingKind::Load(Warning::StarvedConnections { starved: 97, .. })));
}

#[test]
fn connections_starved_only_in_slices_the_lab_lengthened_since_leave_the_cell_ranked() {
    let starved = |mut t: bakeoff_model::records::results::TrialRecord| {
        t.load.steps[0].warnings.push(Warning::StarvedConnections { step: "main".into(), starved: 1, connections: 200 });
        t
    };
    let lasting = |mut t: bakeoff_model::records::results::TrialRecord, s: f64| {
        t.load.plan.duration_s = Some(s);
        t
    };
    // go/pocketbase in seed 002: 1 of 200 connections unanswered in one 1 s slice of its first
    // launch; its slices were 2 s from its second launch on, every connection answered.
    let cells =
        summarize(&[starved(lasting(trial(1, 0), 1.0)), lasting(trial(2, 0), 1.0), lasting(trial(3, 0), 2.0), lasting(trial(4, 0), 2.0)]);
    assert!(cells[0].rankable(), "{:?}", cells[0].unrankable);
    // Starved in its longest slices too: the server left the connection waiting, not the slice.
    let cells = summarize(&[lasting(trial(1, 0), 1.0), starved(lasting(trial(2, 0), 2.0)), lasting(trial(3, 0), 2.0)]);
    assert!(!cells[0].rankable());
    // Slices of one length (the trial schedule, or never lengthened): as before.
    let cells = summarize(&[starved(lasting(trial(1, 0), 1.0)), lasting(trial(2, 0), 1.0)]);
    assert!(!cells[0].rankable());
}
