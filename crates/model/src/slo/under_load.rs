//! Latency under load, what to measure and what one launch measured: after a launch's first
//! measurement, short open-model steps at fixed fractions of the closed-model capacity it just
//! measured (no search of its own), each with p50/p99/p99.9 and the server's CPU. `curve.rs`
//! summarises them over launches.

use bakeoff_load::StepReport;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The most a fraction may be: 150% of capacity (past 100% shows the overload itself).
pub const MAX_FRACTION: f64 = 1.5;

/// What to measure: the fractions of each cell's capacity, each step's length, and in how many
/// launches (every one unless limited: a percentile's interval is over launches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnderLoad {
    /// Fractions of the closed-model capacity, rising, e.g. 0.25, 0.5, 0.75, 0.9, 1.0.
    pub fractions: Vec<f64>,
    /// Each fraction's measured length (after a quarter of it as warm-up).
    #[serde(with = "secs")]
    pub step: Duration,
    /// Measured in the first this many launches; None: in every launch. (Runs stored before
    /// launches counted wrote `trials`, the first rounds, which were their first launches.)
    #[serde(default, alias = "trials")]
    pub launches: Option<u32>,
}

impl UnderLoad {
    /// From a study's percentages; a problem says what is wrong with them.
    pub fn from_percent(percent: &[f64], step: Duration, launches: Option<u32>) -> Result<UnderLoad, String> {
        if percent.is_empty() {
            return Err("no fractions given".into());
        }
        if let Some(p) = percent.iter().find(|p| !(p.is_finite() && **p > 0.0 && **p <= 100.0 * MAX_FRACTION)) {
            return Err(format!("{p}% is not a share of capacity between 0 and {}%", 100.0 * MAX_FRACTION));
        }
        if percent.windows(2).any(|w| w[0] >= w[1]) {
            return Err("the percentages must rise, each once".into());
        }
        if step < Duration::from_millis(200) || launches == Some(0) {
            return Err("each step needs at least 0.2 s and the option at least one launch".into());
        }
        Ok(UnderLoad { fractions: percent.iter().map(|p| p / 100.0).collect(), step, launches })
    }

    /// The unmeasured lead-in of each step: a quarter of it.
    pub fn warmup(&self) -> Duration {
        self.step / 4
    }

    /// Whether launch `launch` (from 0) measures the curve.
    pub fn measures(&self, launch: u32) -> bool {
        self.launches.is_none_or(|n| launch < n)
    }

    /// How many of `launches` measure the curve.
    pub fn launches_of(&self, launches: u32) -> u32 {
        self.launches.map_or(launches, |n| n.min(launches))
    }
}

/// The study option as written: `latency_under_load = { percent = [25, 50, 75, 90], step = "0.5s" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnderLoadOption {
    /// Percentages of each cell's closed-model capacity, rising.
    pub percent: Vec<f64>,
    /// Each step's measured length, e.g. "1s" (default: the SLO search's step, 2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The first launches that measure it (default: every launch, so that each percentile at
    /// each fraction has an interval over launches). Study files written before launches counted
    /// said `trials`: the first rounds, which were their first launches.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "trials")]
    pub launches: Option<u32>,
}

impl UnderLoadOption {
    /// The resolved option; a problem says what is wrong.
    pub fn resolve(&self) -> Result<UnderLoad, String> {
        let step = match &self.step {
            Some(s) => crate::duration::parse_duration(s).map_err(|e| format!("`step`: {e}"))?,
            None => super::SearchBudget::default().step_duration,
        };
        UnderLoad::from_percent(&self.percent, step, self.launches)
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

/// One launch's curve: the capacity it was scaled from and a point per fraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadCurve {
    /// The trial's closed-model requests/s the fractions are of.
    pub capacity_rps: f64,
    /// One point per fraction, rising.
    pub points: Vec<LoadPoint>,
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

    #[test]
    fn percentages_must_rise_and_stay_in_range() {
        let s = Duration::from_secs(1);
        assert_eq!(UnderLoad::from_percent(&[25.0, 50.0, 100.0], s, None).unwrap().fractions, [0.25, 0.5, 1.0]);
        assert!(UnderLoad::from_percent(&[50.0, 25.0], s, None).is_err());
        assert!(UnderLoad::from_percent(&[0.0], s, None).is_err());
        assert!(UnderLoad::from_percent(&[200.0], s, None).is_err());
        assert!(UnderLoad::from_percent(&[], s, None).is_err());
        assert!(UnderLoad::from_percent(&[50.0], Duration::from_millis(10), None).is_err());
        assert!(UnderLoad::from_percent(&[50.0], s, Some(0)).is_err());
        assert_eq!(UnderLoad::from_percent(&[50.0], s, None).unwrap().warmup(), Duration::from_millis(250));
    }

    #[test]
    fn every_launch_measures_unless_the_option_limits_them() {
        let every = UnderLoad::from_percent(&[50.0], Duration::from_secs(1), None).unwrap();
        assert!((0..10).all(|l| every.measures(l)));
        assert_eq!(every.launches_of(6), 6);
        let two = UnderLoad { launches: Some(2), ..every };
        assert_eq!((0..4).map(|l| two.measures(l)).collect::<Vec<_>>(), [true, true, false, false]);
        assert_eq!(two.launches_of(6), 2);
        // A run stored before launches counted said `trials = 1`: its first launch.
        let old: UnderLoad = serde_json::from_str(r#"{"fractions": [0.5], "step": 1.0, "trials": 1}"#).unwrap();
        assert_eq!(old.launches, Some(1));
    }
}
