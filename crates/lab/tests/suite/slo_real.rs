//! SLO capacity against a real server: the burn fixture (a threaded stdlib server spinning BURN_US
//! of CPU per request, so its knee is set by its CPU) searched once with a loose objective and once
//! with a strict one, each in one trial whose server is started once for the measurement and the
//! search.

use crate::common;

use bakeoff_lab::run::cells::{plan, Cell};
use bakeoff_model::records::results::{MemorySink, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::{SearchBudget, SloSearch};
use bakeoff_model::study::WorkerCounts;
use std::time::Duration;

/// One trial of the burn fixture at `BURN_US=400` with an SLO search for `objective`.
fn search(objective: &str, id: &str) -> (TrialRecord, SloSearch) {
    let burn = common::burn_stack(400);
    let scratch = common::Scratch::new(id);
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.bench.settings_mut().slo = Some(objective.parse().unwrap());
    lab.bench.settings_mut().slo_budget =
        SearchBudget { step_duration: Duration::from_secs(1), step_warmup: Duration::from_millis(300), ..SearchBudget::default() };
    let cells: Vec<Cell<'_>> = plan(&[&burn], Some(&[Scenario::Hello]), None, &WorkerCounts::same(&[1])).unwrap();
    let outcome = lab.run(&common::run_info(id), &cells).unwrap();
    drop(lab);
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    let trial = sink.trials.pop().expect("one trial");
    let found = trial.slo.clone().unwrap_or_else(|| panic!("the trial carries its search: {trial:?}"));
    (trial, found)
}

#[test]
fn slo_capacity_is_below_the_maximum_and_lower_for_a_stricter_objective() {
    // p90 rather than p99: a step at a low rate holds a few dozen requests, and on a machine that
    // others share one stalled request would be its p99.
    let (trial, loose) = search("p90<=100ms", "slo-loose");
    let max = trial.load.steps[0].requests_per_sec;
    let dump = |s: &SloSearch| serde_json::to_string_pretty(s).unwrap();
    assert_eq!(loose.start_rps, max, "the search starts from the trial's closed-model maximum");
    let capacity = loose.capacity_rps.unwrap_or_else(|| panic!("a 100 ms p90 holds at some rate: {}", dump(&loose)));
    assert!(capacity > 0.1 * max && capacity < max, "{capacity} of {max}: {}", dump(&loose));
    assert!(loose.steps.len() as u32 <= SearchBudget::default().max_steps);
    let offered: Vec<String> = loose.steps.iter().map(|s| format!("{:.0}{}", s.offered_rps, if s.passed() { "+" } else { "-" })).collect();
    eprintln!("p90<=100ms: {capacity:.0} of the maximum {max:.0} req/s; steps {}", offered.join(" "));
    // Every step was measured against the real server: the passing ones reached their rate.
    for s in loose.steps.iter().filter(|s| s.passed()) {
        assert!(s.achieved_rps >= 0.95 * s.offered_rps && s.latency_us <= 100_000.0, "{}", dump(&loose));
    }

    // 300 µs is less than every request spins here (400 µs): no rate can meet it, and the search
    // halves until its step budget is spent.
    let (_, strict) = search("p90<=300us", "slo-strict");
    assert_eq!(strict.capacity_rps, None, "{}", dump(&strict));
    assert_eq!(strict.steps.len() as u32, SearchBudget::default().max_steps, "{}", dump(&strict));
    assert!(strict.steps.iter().filter(|s| s.requests > 0).all(|s| s.latency_us > 300.0), "{}", dump(&strict));
}
