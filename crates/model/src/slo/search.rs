//! The bounded search for SLO capacity: short open-model steps, the first at a fraction of the
//! cell's closed-model maximum, then halving until a step passes and bisecting between the highest
//! passing and the lowest failing rate until that bracket is within the tolerance or the step budget
//! is spent. Pure: the caller runs each step (the lab, against a real server; tests, a function).

use super::Slo;
use bakeoff_load::StepReport;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The first step offers this share of the closed-model maximum: an open model at the full maximum
/// queues by construction, a little below it is where a well-behaved server's knee usually is.
pub const FIRST_FRACTION: f64 = 0.8;
/// No step offers less than this, req/s: below it a step of a few seconds holds too few requests
/// for a percentile.
const MIN_RATE: f64 = 1.0;
/// A step passes only if it achieved this share of its offered rate (the load generator's own
/// threshold for "target rate not reached").
const ACHIEVED_FRACTION: f64 = 0.95;

/// How much a search may cost per trial: at most `max_steps` steps of `step_warmup + step_duration`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchBudget {
    /// Steps a search may run.
    pub max_steps: u32,
    /// Measured length of each step.
    #[serde(with = "secs")]
    pub step_duration: Duration,
    /// Load before each step's measurement (new connections, the server's queues drained).
    #[serde(with = "secs")]
    pub step_warmup: Duration,
    /// The search stops once (lowest failing - highest passing) / lowest failing is at most this.
    pub tolerance: f64,
}

impl Default for SearchBudget {
    fn default() -> Self {
        SearchBudget { max_steps: 8, step_duration: Duration::from_secs(2), step_warmup: Duration::from_millis(500), tolerance: 0.05 }
    }
}

/// Why a step did not meet the objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepMiss {
    /// It achieved less than 95% of the offered rate: the server could not keep up.
    RateShort,
    /// Too many requests failed.
    Errors,
    /// The objective's percentile exceeded its limit.
    Latency,
}

/// One open-model step of a search, as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloStep {
    /// The arrival rate offered, req/s.
    pub offered_rps: f64,
    /// The rate achieved, req/s.
    pub achieved_rps: f64,
    /// The objective's percentile of corrected latency (from the scheduled send time), µs.
    pub latency_us: f64,
    /// p99 of corrected latency, µs (shown whatever percentile the objective bounds).
    pub p99_us: f64,
    /// Completed responses.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
    /// None when the step met the objective.
    pub miss: Option<StepMiss>,
}

impl SloStep {
    /// Judges one measured open-model step against the objective.
    pub fn judge(slo: &Slo, offered_rps: f64, step: &StepReport) -> SloStep {
        let errors = step.errors.total();
        let attempts = step.requests + errors;
        let error_rate = if attempts == 0 { 1.0 } else { errors as f64 / attempts as f64 };
        let latency_us = slo.percentile.of(&step.latency);
        let miss = if step.requests == 0 || step.requests_per_sec < ACHIEVED_FRACTION * offered_rps {
            Some(StepMiss::RateShort)
        } else if error_rate >= slo.max_error_rate {
            Some(StepMiss::Errors)
        } else if latency_us.is_nan() || latency_us > slo.limit_us() {
            Some(StepMiss::Latency)
        } else {
            None
        };
        SloStep {
            offered_rps,
            achieved_rps: step.requests_per_sec,
            latency_us,
            p99_us: step.latency.p99_us,
            requests: step.requests,
            errors,
            miss,
        }
    }

    /// The step met the objective.
    pub fn passed(&self) -> bool {
        self.miss.is_none()
    }
}

/// One trial's search: every step in the order run, and what it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloSearch {
    /// The objective searched for.
    pub slo: Slo,
    /// The closed-model maximum the search started from, req/s (the bracket's untested top).
    pub start_rps: f64,
    /// Every step, in the order run.
    pub steps: Vec<SloStep>,
    /// The highest offered rate that met the objective; None when no step did.
    pub capacity_rps: Option<f64>,
    /// The lowest offered rate that missed it.
    pub lowest_failing_rps: Option<f64>,
    /// The bracket closed within the tolerance (false: the step budget ran out first).
    pub converged: bool,
}

impl SloSearch {
    fn record(&mut self, step: SloStep) {
        let r = step.offered_rps;
        if step.passed() {
            self.capacity_rps = Some(self.capacity_rps.map_or(r, |c| c.max(r)));
        } else {
            self.lowest_failing_rps = Some(self.lowest_failing_rps.map_or(r, |f| f.min(r)));
        }
        self.steps.push(step);
    }

    /// The top of the bracket: the lowest failing rate, or the untested closed-model maximum.
    fn top(&self) -> f64 {
        self.lowest_failing_rps.unwrap_or(self.start_rps)
    }

    fn within(&self, tolerance: f64) -> bool {
        self.capacity_rps.is_some_and(|lo| (self.top() - lo) / self.top() <= tolerance)
    }

    /// The rate of the next step; None when the search is done.
    fn next_rate(&self, tolerance: f64) -> Option<f64> {
        match self.capacity_rps {
            Some(lo) => (!self.within(tolerance)).then(|| (lo + self.top()) / 2.0),
            None => Some(self.top() / 2.0).filter(|r| *r >= MIN_RATE),
        }
    }
}

/// Searches for the highest rate that meets `slo`, starting from the closed-model maximum
/// `start_rps`; `measure` runs one open-model step at the given rate. Stops at the first error.
pub fn search<E>(
    slo: &Slo,
    start_rps: f64,
    budget: &SearchBudget,
    mut measure: impl FnMut(f64) -> Result<SloStep, E>,
) -> Result<SloSearch, E> {
    let mut s = SloSearch { slo: *slo, start_rps, steps: Vec::new(), capacity_rps: None, lowest_failing_rps: None, converged: false };
    let mut next = Some(FIRST_FRACTION * start_rps).filter(|r| *r >= MIN_RATE);
    while let Some(rate) = next {
        if s.steps.len() as u32 >= budget.max_steps {
            break;
        }
        s.record(measure(rate)?);
        next = s.next_rate(budget.tolerance);
    }
    s.converged = s.within(budget.tolerance);
    Ok(s)
}

/// Durations stored as seconds, e.g. `"step_duration": 2.0`.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs_f64(f64::deserialize(d)?.max(0.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slo() -> Slo {
        "p99<=10ms".parse().unwrap()
    }

    /// A server whose p99 is 1 ms up to `knee` req/s and 50 ms beyond, reaching every offered rate.
    fn knee(knee: f64) -> impl FnMut(f64) -> Result<SloStep, ()> {
        move |rate| {
            let latency_us = if rate <= knee { 1_000.0 } else { 50_000.0 };
            let miss = (latency_us > 10_000.0).then_some(StepMiss::Latency);
            Ok(SloStep { offered_rps: rate, achieved_rps: rate, latency_us, p99_us: latency_us, requests: 1000, errors: 0, miss })
        }
    }

    #[test]
    fn finds_a_known_knee_within_the_tolerance_and_the_step_budget() {
        let budget = SearchBudget::default();
        for k in [630.0, 790.0, 810.0, 950.0, 200.0, 150.0] {
            let s = search(&slo(), 1000.0, &budget, knee(k)).unwrap();
            let found = s.capacity_rps.unwrap_or_else(|| panic!("knee {k}: {s:?}"));
            assert!(found <= k && (k - found) / k <= budget.tolerance, "knee {k}: found {found} in {:?}", s.steps);
            assert!(s.steps.len() as u32 <= budget.max_steps, "knee {k}: {} steps", s.steps.len());
            assert!(s.converged, "knee {k}: {s:?}");
        }
    }

    #[test]
    fn a_server_that_never_meets_the_objective_has_none() {
        let budget = SearchBudget::default();
        let s = search(&slo(), 1000.0, &budget, knee(0.0)).unwrap();
        assert_eq!(s.capacity_rps, None);
        assert!(!s.converged);
        assert_eq!(s.steps.len() as u32, budget.max_steps, "it halves until the budget is spent");
        assert!(s.steps.windows(2).all(|w| w[1].offered_rps < w[0].offered_rps));
    }

    #[test]
    fn the_step_budget_bounds_the_search_and_a_failing_step_stops_it() {
        let tight = SearchBudget { max_steps: 3, ..SearchBudget::default() };
        let s = search(&slo(), 1000.0, &tight, knee(637.0)).unwrap();
        assert_eq!(s.steps.len(), 3);
        assert!(!s.converged && s.capacity_rps.is_some_and(|c| c <= 637.0), "{s:?}");
        let mut calls = 0;
        let r = search(&slo(), 1000.0, &tight, |_| {
            calls += 1;
            Err::<SloStep, _>("load generator failed")
        });
        assert_eq!((r.unwrap_err(), calls), ("load generator failed", 1));
        assert!(search(&slo(), 0.5, &tight, knee(1.0)).unwrap().steps.is_empty(), "nothing to search below 1 req/s");
    }

    #[test]
    fn a_step_fails_on_a_short_rate_on_errors_and_on_latency() {
        let base = |rps: f64, p99: f64, errors: u64| {
            let step: StepReport = serde_json::from_value(serde_json::json!({
                "label": "r", "connections": 8, "target_rate": 100.0, "duration_s": 2.0, "requests": 2000, "bytes": 0,
                "requests_per_sec": rps, "bytes_per_sec": 0.0, "latency": {"min_us": 1.0, "mean_us": 1.0, "stddev_us": 0.0,
                "p50_us": 1.0, "p75_us": 1.0, "p90_us": 1.0, "p95_us": 1.0, "p99_us": p99, "p999_us": p99, "p9999_us": p99,
                "max_us": p99, "tm99_us": 1.0, "tm999_us": 1.0, "count": 2000}, "service_time": null,
                "errors": {"connect": 0, "read": 0, "write": 0, "timeout": errors, "malformed": 0, "status": {}, "body_mismatch": 0},
                "timeline": [], "histogram": "", "max_schedule_lag_ms": null, "warnings": []
            }))
            .unwrap();
            SloStep::judge(&slo(), 1000.0, &step).miss
        };
        assert_eq!(base(1000.0, 9_000.0, 0), None);
        assert_eq!(base(900.0, 9_000.0, 0), Some(StepMiss::RateShort));
        assert_eq!(base(1000.0, 9_000.0, 3), Some(StepMiss::Errors), "3 of 2003 is above 0.1%");
        assert_eq!(base(1000.0, 9_000.0, 2), None, "2 of 2002 is below 0.1%");
        assert_eq!(base(1000.0, 10_001.0, 0), Some(StepMiss::Latency));
    }
}
