//! Tests of the curve over launches: medians per launch, intervals over launches, the knee's range
//! and the coverage of the p99 interval on heavy-tailed launches.

use super::*;
use crate::rng::{standard_normal, SplitMix64};

fn point(fraction: f64, p99_us: f64) -> LoadPoint {
    LoadPoint {
        fraction,
        offered_rps: 1000.0 * fraction,
        achieved_rps: 1000.0 * fraction,
        p50_us: p99_us / 4.0,
        p99_us,
        p999_us: 2.0 * p99_us,
        errors: 0,
        cpu_cores: Some(fraction),
    }
}

fn cell() -> CellKey {
    CellKey { stack: "s".into(), variant: "default".into(), workers: 1, scenario: crate::scenario::Scenario::Hello, twin: false }
}

/// A launch's curve at 25%, 50% and 75% with these p99s.
fn curve(p99s: [f64; 3]) -> LoadCurve {
    LoadCurve { capacity_rps: 1000.0, points: vec![point(0.25, p99s[0]), point(0.5, p99s[1]), point(0.75, p99s[2])] }
}

fn summarize(launches: &[Vec<LoadCurve>]) -> CellCurve {
    let refs: Vec<Vec<&LoadCurve>> = launches.iter().map(|l| l.iter().collect()).collect();
    summarize_cell(&cell(), &refs)
}

#[test]
fn the_knee_is_the_last_fraction_before_p99_passes_three_times_its_low_load_value() {
    let curve = [point(0.25, 100.0), point(0.5, 150.0), point(0.75, 290.0), point(0.9, 2000.0), point(1.0, 250.0)];
    // 0.9 breaks the run; 1.0 coming back below the bound does not move the knee past it.
    assert_eq!(knee(&curve), Some(0.75));
    assert_eq!(knee(&curve[..2]), Some(0.5));
    assert_eq!(knee(&[point(0.25, f64::NAN)]), None);
    assert_eq!(knee(&[]), None);
}

#[test]
fn a_launch_is_one_value_however_many_of_its_slices_measured_a_curve() {
    // Launch 0 measured twice (its median 110 at 25%), launches 1 and 2 once.
    let c = summarize(&[
        vec![curve([100.0, 150.0, 200.0]), curve([120.0, 170.0, 240.0])],
        vec![curve([90.0, 140.0, 900.0])],
        vec![curve([130.0, 160.0, 1000.0])],
    ]);
    assert_eq!((c.trials, c.launches), (4, 3));
    assert_eq!(c.points.iter().map(|p| p.median.p99_us).collect::<Vec<_>>(), [110.0, 160.0, 900.0]);
    assert_eq!(c.points[0].p99.trials, 3, "the interval is over launches, not slices");
    // Three launches: the range of the three, covering 75%.
    assert_eq!((c.points[0].p99.ci_low, c.points[0].p99.ci_high, c.points[0].p99.confidence), (90.0, 130.0, 0.75));
    // 900 > 3 x 110: the median curve's knee is 50%, but three launches cannot settle it.
    assert_eq!(c.knee, Some(0.5));
    assert_eq!(c.knee_range, None);
    assert_eq!(c.knee_text(|f| format!("{}%", f * 100.0)), None);
}

#[test]
fn six_launches_settle_the_knee_where_the_intervals_part_and_give_a_range_where_they_do_not() {
    let wobble = [1.0, 1.05, 0.95, 1.1, 0.9, 1.02];
    let settled: Vec<Vec<LoadCurve>> = wobble.iter().map(|w| vec![curve([100.0 * w, 150.0 * w, 2000.0 * w])]).collect();
    let c = summarize(&settled);
    assert!(c.points.iter().all(|p| p.p99.confidence >= CONFIDENCE), "{:?}", c.points);
    assert_eq!(c.knee_range, Some(KneeRange { low: 0.5, high: 0.5 }));
    assert_eq!(c.knee_text(|f| format!("{}%", f * 100.0)), Some(("50%".into(), false)));
    // At 75% the launches straddle three times the lowest fraction's p99: 50% to 75%.
    let straddle: Vec<Vec<LoadCurve>> =
        wobble.iter().zip([200.0, 320.0, 280.0, 360.0, 250.0, 310.0]).map(|(w, hi)| vec![curve([100.0 * w, 150.0 * w, hi])]).collect();
    let c = summarize(&straddle);
    assert_eq!(c.knee_range, Some(KneeRange { low: 0.5, high: 0.75 }));
    assert_eq!(c.knee_text(|f| format!("{}%", f * 100.0)), Some(("≥50%".into(), false)));
    // p99 held at every fraction: the knee is at or above the top.
    let held: Vec<Vec<LoadCurve>> = wobble.iter().map(|w| vec![curve([100.0 * w, 110.0 * w, 120.0 * w])]).collect();
    assert_eq!(summarize(&held).knee_text(|f| format!("{}%", f * 100.0)), Some(("≥75%".into(), true)));
}

#[test]
fn the_p99_interval_over_launches_covers_the_launches_median_p99_on_heavy_tails() {
    // Launch p99s lognormal with σ = 1 (a launch's tail may be e^2 times another's): the interval
    // is distribution-free, so it covers the true median (e^μ) in ≥ 95% of 2,000 repeats.
    let mut rng = SplitMix64(7);
    for launches in [6usize, 8, 12] {
        let mut covered = 0;
        for _ in 0..2000 {
            let runs: Vec<Vec<LoadCurve>> = (0..launches)
                .map(|_| {
                    let p = 1000.0 * standard_normal(&mut rng).exp();
                    vec![curve([p, p, p])]
                })
                .collect();
            let p99 = summarize(&runs).points[0].p99;
            covered += usize::from(p99.ci_low <= 1000.0 && 1000.0 <= p99.ci_high);
        }
        let rate = covered as f64 / 2000.0;
        assert!(rate >= 0.94, "{launches} launches: {rate}");
    }
}
