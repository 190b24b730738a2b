//! Warnings of several trials of one cell become one note per kind: the worst instance, with how
//! many trials raised it (the lab's summary, as every report format reads it).

use bakeoff_load::Warning;
use bakeoff_model::records::finding::Finding;
use bakeoff_model::records::results::LabWarning;
use bakeoff_model::statistics::summary::summarize;
use bakeoff_report::synthetic;
use hdrhistogram::Histogram;

fn flat_histogram() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
    h.record_n(500, 10_000).unwrap();
    h
}

fn starved(trial: u32, starved: u32) -> bakeoff_model::records::results::TrialRecord {
    let mut t = synthetic::trial("python-flask", "hello", trial, &[(None, flat_histogram())]);
    t.load.steps[0].warnings.push(Warning::StarvedConnections { step: "main".into(), starved, connections: 64 });
    t
}

#[test]
fn same_kind_from_every_trial_is_one_note_with_the_worst_numbers() {
    let trials = vec![starved(1, 60), starved(2, 63), starved(3, 61)];
    let cells = summarize(&trials);
    assert_eq!(cells.len(), 1);
    let messages: Vec<String> = cells[0].warnings.iter().map(Finding::message).collect();
    assert_eq!(
        messages,
        ["[main] 63 of 64 connections got no response: their waits are in no percentile (3 of 3 trials; the worst shown)"]
    );
}

#[test]
fn kinds_stay_apart_and_a_single_trial_says_so() {
    let mut trials = vec![starved(1, 10), starved(2, 12)];
    trials[1].warnings.push(LabWarning::BackgroundNoise { cpu_percent: 14.0 });
    trials[1].load.warnings.push(Warning::ClientSaturated { cpu_percent: 95.0, threads: 1 });
    let cells = summarize(&trials);
    let messages: Vec<String> = cells[0].warnings.iter().map(Finding::message).collect();
    let kinds: Vec<&str> = cells[0].warnings.iter().map(Finding::id).collect();
    assert_eq!(kinds, ["starved_connections", "client_saturated", "background_noise"]);
    assert_eq!(
        messages,
        [
            "[main] 12 of 64 connections got no response: their waits are in no percentile (2 of 2 trials; the worst shown)",
            "client saturated: 95% CPU over 1 thread(s) (1 of 2 trials)",
            "other processes used 14% CPU during measurement (1 of 2 trials)",
        ]
    );
}

#[test]
fn one_trial_keeps_the_plain_message() {
    let cells = summarize(&[starved(1, 5)]);
    assert_eq!(cells[0].warnings[0].message(), "[main] 5 of 64 connections got no response: their waits are in no percentile");
}

#[test]
fn a_step_keeps_its_own_warnings_and_the_run_wide_ones_only() {
    let mut t = synthetic::trial("python-flask", "hello", 1, &[(Some(1000.0), flat_histogram()), (Some(2000.0), flat_histogram())]);
    let late = Warning::TargetRateNotReached { step: t.load.steps[1].label.clone(), target_rps: 2000.0, achieved_rps: 1200.0 };
    let saturated = Warning::ClientSaturated { cpu_percent: 95.0, threads: 1 };
    t.load.steps[1].warnings.push(late.clone());
    // As the load generator reports it: the run-wide list holds the run's own and every step's.
    t.load.warnings = vec![saturated.clone(), late.clone()];
    let cells = summarize(&[t]);
    let messages =
        |step: usize| -> Vec<String> { cells.iter().find(|c| c.step == step).unwrap().warnings.iter().map(Finding::message).collect() };
    assert_eq!(messages(0), [saturated.message()], "the second step's shortfall is not the first step's");
    assert_eq!(messages(1), [saturated.message(), late.message()]);
}
