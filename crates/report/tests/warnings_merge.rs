//! Warnings of several trials of one cell become one note per kind: the worst instance, with how
//! many trials raised it (the lab's summary, as every report format reads it).

use bakeoff_lab::results::LabWarning;
use bakeoff_lab::summary::summarize;
use bakeoff_load::Warning;
use bakeoff_report::synthetic;
use hdrhistogram::Histogram;

fn flat_histogram() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
    h.record_n(500, 10_000).unwrap();
    h
}

fn starved(trial: u32, starved: u32) -> bakeoff_lab::results::TrialRecord {
    let mut t = synthetic::trial("python-flask", "hello", trial, &[(None, flat_histogram())]);
    t.load.steps[0].warnings.push(Warning::StarvedConnections { step: "main".into(), starved, connections: 64 });
    t
}

#[test]
fn same_kind_from_every_trial_is_one_note_with_the_worst_numbers() {
    let trials = vec![starved(1, 60), starved(2, 63), starved(3, 61)];
    let cells = summarize(&trials);
    assert_eq!(cells.len(), 1);
    let messages: Vec<&str> = cells[0].warnings.iter().map(|(m, _)| m.as_str()).collect();
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
    let messages: Vec<&str> = cells[0].warnings.iter().map(|(m, _)| m.as_str()).collect();
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
    assert_eq!(cells[0].warnings[0].0, "[main] 5 of 64 connections got no response: their waits are in no percentile");
}
