//! Latency under load against a real server: the burn fixture (a threaded stdlib server spinning
//! BURN_US of CPU per request) measured once per schedule with `latency_under_load`; the curve's
//! steps are scaled from the trial's own closed-model maximum, once a launch (in its first slice)
//! or in the first launches the option names, and overload shows in the tail.

use crate::common;

use bakeoff_lab::run::cells::{plan, Cell};
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::records::results::{MemorySink, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::{LoadCurve, UnderLoad};
use bakeoff_model::study::WorkerCounts;
use std::time::Duration;

/// The burn fixture at `BURN_US=400` under `schedule` for `rounds` rounds (in `launches` when
/// blocks), with a curve at 25%, 50%, 100% and 150% of capacity in the first `curves` launches.
fn measure(schedule: Schedule, (rounds, launches): (u32, Option<u32>), curves: Option<u32>, id: &str) -> Vec<TrialRecord> {
    let burn = common::burn_stack(400);
    let scratch = common::Scratch::new(id);
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let s = lab.bench.settings_mut();
    (s.schedule, s.trials, s.launches) = (schedule, rounds, launches);
    s.latency_under_load = Some(UnderLoad::from_percent(&[25.0, 50.0, 100.0, 150.0], Duration::from_millis(800), curves).unwrap());
    let cells: Vec<Cell<'_>> = plan(&[&burn], Some(&[Scenario::Hello]), None, &WorkerCounts::same(&[1])).unwrap();
    let outcome = lab.run(&common::run_info(id), &cells).unwrap();
    drop(lab);
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    sink.trials
}

/// What every curve must show: fractions of the trial's own maximum, the low-load steps served at
/// their rate, the overloaded step's p99 far above the lightest step's, CPU rising with the load.
fn check(trial: &TrialRecord, curve: &LoadCurve) {
    let dump = serde_json::to_string_pretty(curve).unwrap();
    let max = trial.load.steps.iter().filter(|s| s.target_rate.is_none()).map(|s| s.requests_per_sec).fold(0.0, f64::max);
    assert_eq!(curve.capacity_rps, max, "scaled from the trial's closed-model maximum: {dump}");
    let fractions: Vec<f64> = curve.points.iter().map(|p| p.fraction).collect();
    assert_eq!(fractions, [0.25, 0.5, 1.0, 1.5]);
    for p in &curve.points {
        assert!((p.offered_rps - p.fraction * max).abs() < 1e-6 * max, "{dump}");
    }
    for p in &curve.points[..2] {
        assert!(p.achieved_rps >= 0.9 * p.offered_rps, "a light step is served at its rate: {dump}");
    }
    let (light, over) = (&curve.points[0], &curve.points[3]);
    // 150% of what the server can do queues for the whole step: the corrected p99 is the queue's.
    assert!(over.p99_us > 5.0 * light.p99_us, "overload shows in the tail: {dump}");
    let cpu = |i: usize| curve.points[i].cpu_cores.unwrap_or_else(|| panic!("CPU of step {i}: {dump}"));
    assert!(cpu(2) > cpu(0), "more load, more CPU: {dump}");
    let knee = bakeoff_model::slo::knee(&curve.points).unwrap_or_else(|| panic!("a knee: {dump}"));
    assert!(knee < 1.5, "the overloaded step is past the knee: {dump}");
    eprintln!(
        "capacity {max:.0} req/s; p99 {}; knee {knee}",
        curve.points.iter().map(|p| format!("{:.0}% {:.2} ms", 100.0 * p.fraction, p.p99_us / 1000.0)).collect::<Vec<_>>().join(", ")
    );
}

#[test]
fn a_curve_once_a_launch_of_either_schedule() {
    // Trials: each its own launch; the option limits the curves to the first.
    let trials = measure(Schedule::Trials, (2, None), Some(1), "under-load-trials");
    let first = trials.iter().find(|t| t.trial == 1).unwrap();
    check(first, first.under_load.as_ref().expect("the first trial carries its curve"));
    assert!(trials.iter().find(|t| t.trial == 2).unwrap().under_load.is_none(), "only the first launch measures it");

    // Blocks: 3 blocks in 2 launches (blocks 1-2, then 3); every launch measures once, in its
    // first slice.
    let blocks = measure(Schedule::Blocks, (3, Some(2)), None, "under-load-blocks");
    assert_eq!(blocks.len(), 3, "three blocks");
    let mut curved: Vec<(u32, Option<u32>)> = blocks.iter().filter(|t| t.under_load.is_some()).map(|t| (t.trial, t.launch)).collect();
    curved.sort();
    assert_eq!(curved, [(1, Some(0)), (3, Some(1))], "the first slice of each launch");
    for t in blocks.iter().filter(|t| t.under_load.is_some()) {
        check(t, t.under_load.as_ref().unwrap());
    }
}
