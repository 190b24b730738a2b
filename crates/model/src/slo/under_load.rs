//! Latency under load: after a trial's measurement, short open-model steps at fixed fractions of
//! the closed-model capacity that trial measured (no search of its own), each with p50/p99/p99.9
//! and the server's CPU; summarised per cell over trials with the knee, the highest fraction at
//! which p99 stays within `KNEE_FACTOR` times its lowest-load value.

use crate::results::{CellKey, TrialRecord};
use bakeoff_load::StepReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// How far p99 may rise over its value at the lowest fraction before the load is past the knee:
/// three times, so a doubling from ordinary queueing is not yet a knee but a tail that explodes is.
pub const KNEE_FACTOR: f64 = 3.0;

/// The most a fraction may be: 150% of capacity (past 100% shows the overload itself).
pub const MAX_FRACTION: f64 = 1.5;

/// What to measure: the fractions of each cell's capacity, each step's length, and in how many of
/// the first rounds (the others measure nothing more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnderLoad {
    /// Fractions of the closed-model capacity, rising, e.g. 0.25, 0.5, 0.75, 0.9, 1.0.
    pub fractions: Vec<f64>,
    /// Each fraction's measured length (after a quarter of it as warm-up).
    #[serde(with = "secs")]
    pub step: Duration,
    /// Measured in rounds 1 up to this one.
    pub trials: u32,
}

impl UnderLoad {
    /// From a study's percentages; a problem says what is wrong with them.
    pub fn from_percent(percent: &[f64], step: Duration, trials: u32) -> Result<UnderLoad, String> {
        if percent.is_empty() {
            return Err("no fractions given".into());
        }
        if let Some(p) = percent.iter().find(|p| !(p.is_finite() && **p > 0.0 && **p <= 100.0 * MAX_FRACTION)) {
            return Err(format!("{p}% is not a share of capacity between 0 and {}%", 100.0 * MAX_FRACTION));
        }
        if percent.windows(2).any(|w| w[0] >= w[1]) {
            return Err("the percentages must rise, each once".into());
        }
        if step < Duration::from_millis(200) || trials == 0 {
            return Err("each step needs at least 0.2 s and the option at least one round".into());
        }
        Ok(UnderLoad { fractions: percent.iter().map(|p| p / 100.0).collect(), step, trials })
    }

    /// The unmeasured lead-in of each step: a quarter of it.
    pub fn warmup(&self) -> Duration {
        self.step / 4
    }

    /// Whether round `trial` (from 1) measures the curve.
    pub fn measures(&self, trial: u32) -> bool {
        trial <= self.trials
    }
}

/// The study option as written: `latency_under_load = { percent = [25, 50, 75, 90, 100], step = "1s", trials = 1 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnderLoadOption {
    /// Percentages of each cell's closed-model capacity, rising.
    pub percent: Vec<f64>,
    /// Each step's measured length, e.g. "1s" (default: the SLO search's step, 2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The first rounds that measure it (default 1: a picture, not a ranking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u32>,
}

impl UnderLoadOption {
    /// The resolved option; a problem says what is wrong.
    pub fn resolve(&self) -> Result<UnderLoad, String> {
        let step = match &self.step {
            Some(s) => crate::duration::parse_duration(s).map_err(|e| format!("`step`: {e}"))?,
            None => super::SearchBudget::default().step_duration,
        };
        UnderLoad::from_percent(&self.percent, step, self.trials.unwrap_or(1))
    }
}

/// One step of a trial's curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadPoint {
    /// The fraction of the trial's capacity offered.
    pub fraction: f64,
    /// The rate offered, req/s.
    pub offered_rps: f64,
    /// The rate served, req/s.
    pub achieved_rps: f64,
    /// Corrected latency percentiles (from each request's scheduled send time), µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Failed requests.
    pub errors: u64,
    /// Server CPU over the step (warm-up included), cores; None when it could not be read.
    pub cpu_cores: Option<f64>,
}

impl LoadPoint {
    /// The point of a measured step, with the server's CPU seconds over `wall` seconds.
    pub fn of(fraction: f64, offered_rps: f64, step: &StepReport, cpu_seconds: Option<f64>, wall: f64) -> LoadPoint {
        LoadPoint {
            fraction,
            offered_rps,
            achieved_rps: step.requests_per_sec,
            p50_us: step.latency.p50_us,
            p99_us: step.latency.p99_us,
            p999_us: step.latency.p999_us,
            errors: step.errors.total(),
            cpu_cores: cpu_seconds.filter(|_| wall > 0.0).map(|c| c / wall),
        }
    }

    /// Server CPU µs per request served.
    pub fn cpu_us_per_request(&self) -> Option<f64> {
        self.cpu_cores.filter(|_| self.achieved_rps > 0.0).map(|c| c * 1e6 / self.achieved_rps)
    }
}

/// One trial's curve: the capacity it was scaled from and a point per fraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadCurve {
    /// The trial's closed-model requests/s the fractions are of.
    pub capacity_rps: f64,
    /// One point per fraction, rising.
    pub points: Vec<LoadPoint>,
}

/// A cell's curve over its trials: per fraction the median of each value, and the knee.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellCurve {
    /// The cell.
    #[serde(flatten)]
    pub cell: CellKey,
    /// Trials that measured a curve.
    pub trials: u32,
    /// The median capacity the fractions are of, req/s.
    pub capacity_rps: f64,
    /// Per fraction, the median over trials of every value.
    pub points: Vec<LoadPoint>,
    /// The highest fraction at which p99 stays within `KNEE_FACTOR` times its value at the lowest;
    /// None when not even the lowest fraction has a p99.
    pub knee: Option<f64>,
}

/// The highest fraction up to which every p99 is within `KNEE_FACTOR` of the first point's.
pub fn knee(points: &[LoadPoint]) -> Option<f64> {
    let base = points.first().map(|p| p.p99_us).filter(|b| b.is_finite() && *b > 0.0)?;
    points.iter().take_while(|p| p.p99_us.is_finite() && p.p99_us <= KNEE_FACTOR * base).last().map(|p| p.fraction)
}

/// One curve per cell whose trials carry one, in cell order.
pub fn summarize_curves(trials: &[TrialRecord]) -> Vec<CellCurve> {
    let mut groups: BTreeMap<&CellKey, Vec<&LoadCurve>> = BTreeMap::new();
    for t in trials {
        if let Some(c) = &t.under_load {
            groups.entry(&t.cell).or_default().push(c);
        }
    }
    groups.into_iter().map(|(cell, curves)| summarize_cell(cell, &curves)).collect()
}

fn summarize_cell(cell: &CellKey, curves: &[&LoadCurve]) -> CellCurve {
    let median = |v: Vec<f64>| crate::summary::Estimate::from_values(&v).median;
    let mut fractions: Vec<f64> = curves.iter().flat_map(|c| c.points.iter().map(|p| p.fraction)).collect();
    fractions.sort_by(f64::total_cmp);
    fractions.dedup();
    let points: Vec<LoadPoint> = fractions
        .iter()
        .map(|&f| {
            let at: Vec<&LoadPoint> = curves.iter().filter_map(|c| c.points.iter().find(|p| p.fraction == f)).collect();
            let of = |v: fn(&LoadPoint) -> f64| median(at.iter().map(|p| v(p)).collect());
            let cpu: Vec<f64> = at.iter().filter_map(|p| p.cpu_cores).collect();
            LoadPoint {
                fraction: f,
                offered_rps: of(|p| p.offered_rps),
                achieved_rps: of(|p| p.achieved_rps),
                p50_us: of(|p| p.p50_us),
                p99_us: of(|p| p.p99_us),
                p999_us: of(|p| p.p999_us),
                errors: at.iter().map(|p| p.errors).sum(),
                cpu_cores: (!cpu.is_empty()).then(|| median(cpu)),
            }
        })
        .collect();
    CellCurve {
        cell: cell.clone(),
        trials: curves.len() as u32,
        capacity_rps: median(curves.iter().map(|c| c.capacity_rps).collect()),
        knee: knee(&points),
        points,
    }
}

/// Durations as seconds, e.g. `"step": 1.0`.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn percentages_must_rise_and_stay_in_range() {
        let s = Duration::from_secs(1);
        assert_eq!(UnderLoad::from_percent(&[25.0, 50.0, 100.0], s, 1).unwrap().fractions, [0.25, 0.5, 1.0]);
        assert!(UnderLoad::from_percent(&[50.0, 25.0], s, 1).is_err());
        assert!(UnderLoad::from_percent(&[0.0], s, 1).is_err());
        assert!(UnderLoad::from_percent(&[200.0], s, 1).is_err());
        assert!(UnderLoad::from_percent(&[], s, 1).is_err());
        assert!(UnderLoad::from_percent(&[50.0], Duration::from_millis(10), 1).is_err());
        assert_eq!(UnderLoad::from_percent(&[50.0], s, 1).unwrap().warmup(), Duration::from_millis(250));
    }

    #[test]
    fn a_cell_curve_is_the_median_of_its_trials_per_fraction() {
        let curves = [
            LoadCurve { capacity_rps: 900.0, points: vec![point(0.5, 100.0), point(1.0, 200.0)] },
            LoadCurve { capacity_rps: 1000.0, points: vec![point(0.5, 120.0), point(1.0, 1000.0)] },
            LoadCurve { capacity_rps: 1100.0, points: vec![point(0.5, 110.0), point(1.0, 900.0)] },
        ];
        let cell =
            CellKey { stack: "s".into(), variant: "default".into(), workers: 1, scenario: crate::scenario::Scenario::Hello, twin: false };
        let c = summarize_cell(&cell, &curves.iter().collect::<Vec<_>>());
        assert_eq!((c.trials, c.capacity_rps), (3, 1000.0));
        assert_eq!(c.points.iter().map(|p| p.p99_us).collect::<Vec<_>>(), [110.0, 900.0]);
        // 900 > 3 x 110: the knee is the lower fraction.
        assert_eq!(c.knee, Some(0.5));
    }
}
