//! Summaries of repeated trials: every metric of a cell as a median with a 95% confidence interval,
//! computed on read from the stored trials (the trials are the source of truth, never the summary).

use crate::plan::goal::PrimaryMetric;
use crate::records::finding::{self, Finding, FindingKind};
use crate::records::results::{CellKey, TrialRecord};
use bakeoff_load::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Trials of a cell whose requests/s spread (max-min over median) exceeds this are marked.
pub const DISAGREEMENT_TOLERANCE: f64 = 0.05;

/// A trial with more failed requests than this (percent of attempts, the report's "errors %") makes
/// its cell unrankable: wrk's and k6's convention (k6's `http_req_failed: rate<0.01`), and the load
/// generator's own high-error warning. A failing server's throughput and latency are not comparable.
pub const UNRANKABLE_ERROR_PERCENT: f64 = 1.0;

pub use crate::records::metric::Metric;

/// What a metric reads from a trial: here with the summaries that read it, so that metric.rs
/// imports nothing and stands under the result types.
impl Metric {
    /// The value of this metric in one step of one trial.
    pub fn of(self, trial: &TrialRecord, step: usize) -> f64 {
        const MIB: f64 = 1024.0 * 1024.0;
        let s = &trial.load.steps[step];
        let l = &s.latency;
        let attempts = s.requests + s.errors.total();
        match self {
            Metric::RequestsPerSec => s.requests_per_sec,
            Metric::MibPerSec => s.bytes_per_sec / MIB,
            Metric::P50Us => l.p50_us,
            Metric::P90Us => l.p90_us,
            Metric::P99Us => l.p99_us,
            Metric::P999Us => l.p999_us,
            Metric::P9999Us => l.p9999_us,
            Metric::MaxUs => l.max_us,
            Metric::MeanUs => l.mean_us,
            Metric::Tm999Us => l.tm999_us,
            Metric::StddevUs => l.stddev_us,
            Metric::ErrorPercent => {
                if attempts == 0 {
                    0.0
                } else {
                    100.0 * s.errors.total() as f64 / attempts as f64
                }
            }
            Metric::ServerCpuPercent => trial.step_usage.get(step).map_or(trial.server.cpu_percent, |u| u.cpu_percent),
            Metric::CpuUsPerRequest => trial.step_usage.get(step).map_or(trial.server.cpu_us_per_request, |u| u.cpu_us_per_request),
            Metric::PeakRssMib => trial.server.peak_rss_bytes as f64 / MIB,
            Metric::MeanRssMib => trial.server.mean_rss_bytes as f64 / MIB,
            Metric::PeakPssMib => trial.server.peak_pss_bytes as f64 / MIB,
            Metric::MeanPssMib => trial.server.mean_pss_bytes as f64 / MIB,
            Metric::ClientCpuPercent => trial.load.client.cpu_percent,
            Metric::OtherCpuServerPercent => trial.noise.as_ref().map_or(f64::NAN, |n| n.server.other_percent),
            Metric::OtherCpuClientPercent => trial.noise.as_ref().map_or(f64::NAN, |n| n.client.other_percent),
            Metric::StealPercent => trial.noise.as_ref().map_or(f64::NAN, |n| n.steal_percent()),
        }
    }
}

/// A median over trials with its distribution-free interval: the order statistics that cover the
/// true median with at least 95% (see `robust::median_interval`). Below six trials no such pair
/// exists; the interval is then the range of the trials and `confidence` says what it covers.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// The median over trials (NaN without a finite value).
    pub median: f64,
    /// The interval's lower end.
    pub ci_low: f64,
    /// The interval's upper end.
    pub ci_high: f64,
    /// Trials with a finite value.
    pub trials: u32,
    /// Coverage of [ci_low, ci_high]: 0.95 or more from six trials on; 0.75 with three.
    #[serde(default)]
    pub confidence: f64,
}

impl Estimate {
    /// No value: every field NaN, no trial.
    pub const NONE: Estimate = Estimate { median: f64::NAN, ci_low: f64::NAN, ci_high: f64::NAN, trials: 0, confidence: 0.0 };

    /// The median and interval of the finite values (NaN ones are left out); `NONE` without any.
    pub fn from_values(values: &[f64]) -> Estimate {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        match crate::statistics::robust::median_interval(&finite) {
            Some(m) => Estimate { median: m.median, ci_low: m.low, ci_high: m.high, trials: finite.len() as u32, confidence: m.confidence },
            None => Estimate::NONE,
        }
    }

    /// Spread of the interval relative to the median, as a fraction: the "±x%" a report states.
    pub fn relative_half_width(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.ci_high - self.ci_low) / 2.0 / self.median.abs()
        }
    }

    /// Whether the interval is a real 95% interval no wider than ±`target` (a fraction).
    pub fn meets(&self, target: f64) -> bool {
        self.confidence >= crate::statistics::robust::CONFIDENCE && self.relative_half_width() <= target
    }
}

/// How a run's cells are judged: the metric it ranks by and, if set, the precision it aims for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Policy {
    /// The metric cells are ranked by.
    pub primary: PrimaryMetric,
    /// Target relative half-width of the primary metric's interval (0.05 = ±5%).
    pub precision: Option<f64>,
    /// The run measured block by block: its precision target is on the paired ratios it ranks.
    pub paired: bool,
}

/// The summary of one step of one cell over its trials.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellSummary {
    /// The cell summarized.
    pub cell: CellKey,
    /// The step's index in the cell's load plan (0 for a single-step run).
    pub step: usize,
    /// The step's label, as the load generator named it ("64 connections", "1000 req/s").
    pub step_label: String,
    /// The step's target rate in an open model; None in a closed one.
    pub target_rate: Option<f64>,
    /// Every metric's median and interval over the trials.
    pub metrics: BTreeMap<Metric, Estimate>,
    /// Spread of requests/s between the trials, (max - min) / median.
    pub rps_spread: f64,
    /// The trials disagree: the primary metric missed the run's precision target, or (without a
    /// target) requests/s spread more than `DISAGREEMENT_TOLERANCE`.
    pub disagree: bool,
    /// The trials' warnings, one per kind (the worst instance, with how many trials raised it),
    /// then the cell's own (trials disagree, precision missed).
    pub warnings: Vec<Finding>,
    /// Why this cell's numbers may not be ranked, claimed about or called fastest (a server that
    /// died, hung, left processes behind or served stale answers), one per kind; empty when they may.
    #[serde(default)]
    pub unrankable: Vec<Finding>,
    /// The load generator ran at its ceiling in most trials (`client_saturated`): the cell's
    /// requests/s is a lower bound on the server's, never ranked, claimed about or chased by
    /// precision rounds; its CPU per request still stands.
    #[serde(default)]
    pub client_bound: bool,
}

impl CellSummary {
    /// A step's metrics with nothing found about them: no spread, warnings or reasons not to rank.
    pub fn plain(cell: CellKey, step: usize, step_label: &str, target_rate: Option<f64>, metrics: BTreeMap<Metric, Estimate>) -> Self {
        CellSummary {
            cell,
            step,
            step_label: step_label.into(),
            target_rate,
            metrics,
            rps_spread: 0.0,
            disagree: false,
            warnings: Vec::new(),
            unrankable: Vec::new(),
            client_bound: false,
        }
    }

    /// Whether the cell takes part in rankings and claims; it is shown either way.
    pub fn rankable(&self) -> bool {
        self.unrankable.is_empty()
    }

    /// The estimate of one metric (`Estimate::NONE` when it was not measured).
    pub fn get(&self, m: Metric) -> Estimate {
        self.metrics.get(&m).copied().unwrap_or(Estimate::NONE)
    }
}

/// Groups trials by cell and step and summarizes each group, in cell order (no precision target).
pub fn summarize(trials: &[TrialRecord]) -> Vec<CellSummary> {
    summarize_with(trials, &Policy::default())
}

/// As `summarize`, judging each cell against the run's policy: with a precision target, a cell
/// whose primary interval is wider is flagged (instead of the cruder trials-disagree spread).
pub fn summarize_with(trials: &[TrialRecord], policy: &Policy) -> Vec<CellSummary> {
    let mut groups: BTreeMap<(CellKey, usize), Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials {
        for step in 0..t.load.steps.len() {
            groups.entry((t.cell.clone(), step)).or_default().push(t);
        }
    }
    groups.into_iter().map(|((cell, step), ts)| summarize_group(cell, step, &ts, policy)).collect()
}

fn summarize_group(cell: CellKey, step: usize, trials: &[&TrialRecord], policy: &Policy) -> CellSummary {
    let metrics: BTreeMap<Metric, Estimate> =
        Metric::ALL.iter().map(|&m| (m, Estimate::from_values(&trials.iter().map(|t| m.of(t, step)).collect::<Vec<_>>()))).collect();
    let rps: Vec<f64> = trials.iter().map(|t| Metric::RequestsPerSec.of(t, step)).collect();
    let median = metrics[&Metric::RequestsPerSec].median;
    let (lo, hi) = rps.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let rps_spread = if median > 0.0 && rps.len() > 1 { (hi - lo) / median } else { 0.0 };
    let mut warnings = finding::merge(trials.iter().map(|t| trial_warnings(t, step)));
    let client_bound = 2 * trials.iter().filter(|t| saturated_client(t)).count() > trials.len();
    let (mut disagree, spread) = disagreement(&metrics[&policy.primary.metric()], rps_spread, policy);
    // A lower bound cannot miss a precision target: more trials would not tighten it.
    disagree &= !(client_bound && policy.primary.metric() == Metric::RequestsPerSec);
    // Measured block by block, a cell's precision is that of its paired ratios, which the report's
    // precision section judges; its own interval also holds the machine's drift between blocks.
    disagree &= !(policy.paired && policy.precision.is_some() && trials.iter().all(|t| t.launch.is_some()));
    if disagree {
        warnings.push(Finding::of_cell(spread));
    }
    let s = &trials[0].load.steps[step];
    let unrankable = unrankable(trials, step);
    CellSummary {
        rps_spread,
        disagree,
        warnings,
        unrankable,
        client_bound,
        ..CellSummary::plain(cell, step, &s.label, s.target_rate, metrics)
    }
}

/// The load generator flagged itself as the bottleneck of this trial.
fn saturated_client(t: &TrialRecord) -> bool {
    t.load.warnings.iter().any(|w| matches!(w, Warning::ClientSaturated { .. }))
}

/// Whether the trials disagree, and the finding that says how: with a precision target, the primary
/// metric's interval against it; without, the spread of requests/s against `DISAGREEMENT_TOLERANCE`.
fn disagreement(primary: &Estimate, rps_spread: f64, policy: &Policy) -> (bool, FindingKind) {
    match policy.precision {
        Some(target) => {
            let missed = FindingKind::PrecisionMissed {
                metric: policy.primary,
                achieved_percent: 100.0 * primary.relative_half_width(),
                target_percent: 100.0 * target,
                trials: primary.trials,
                confidence_percent: 100.0 * primary.confidence,
            };
            (!primary.meets(target), missed)
        }
        None => (rps_spread > DISAGREEMENT_TOLERANCE, FindingKind::TrialsDisagree { spread_percent: rps_spread * 100.0 }),
    }
}

/// What one trial warned of in this step: the load generator's run-wide warnings and the step's own,
/// then the lab's. The run-wide list also repeats every step's warnings: only its run-wide ones are
/// taken, so a ramp's later step cannot lend its warnings (or a worse instance) to this one.
fn trial_warnings(t: &TrialRecord, step: usize) -> Vec<FindingKind> {
    let run_wide = t.load.warnings.iter().filter(|w| w.step().is_none());
    let load = run_wide.chain(&t.load.steps[step].warnings).cloned().map(FindingKind::Load);
    load.chain(t.warnings.iter().cloned().map(FindingKind::Lab)).collect()
}

/// The reasons, one per kind, that any trial of this step disqualifies the cell: a lab warning
/// that says so, a server that stopped answering or answered nothing, requests left unanswered,
/// errors over `UNRANKABLE_ERROR_PERCENT`, or connections of a closed-model step never answered
/// (the server did not serve the load it was given: the rest of its numbers measure less).
fn unrankable(trials: &[&TrialRecord], step: usize) -> Vec<Finding> {
    // The block schedules lengthen a cell's slices after one starved: a shorter slice's starved
    // connections measured its edge, and the longer slices judge the server (`outgrown`).
    let longest = trials.iter().filter_map(|t| t.load.plan.duration_s).fold(0.0, f64::max);
    let mut reasons = finding::merge(trials.iter().map(|t| trial_disqualifiers(t, step, outgrown(t, longest))));
    let failing: Vec<(u32, f64)> =
        trials.iter().map(|t| (t.trial, Metric::ErrorPercent.of(t, step))).filter(|(_, e)| *e > UNRANKABLE_ERROR_PERCENT).collect();
    if let Some((trial, worst)) = failing.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
        reasons.push(Finding::of_cell(FindingKind::Errors {
            worst_percent: worst,
            worst_trial: trial,
            failing_trials: failing.len() as u32,
            trials: trials.len() as u32,
            limit_percent: UNRANKABLE_ERROR_PERCENT,
        }));
    }
    reasons
}

/// Whether `t` was a slice shorter than its cell's `longest`: the lab lengthened the cell's slices
/// after slices like it left connections unanswered, so their starving is the slice's, not the
/// server's (its warning stays on the trial; a longest slice that starved still disqualifies).
fn outgrown(t: &TrialRecord, longest: f64) -> bool {
    t.load.plan.duration_s.is_some_and(|d| d < longest)
}

/// What in one trial's step disqualifies the cell. The load generator flags starved connections
/// only in a closed model, where every connection should be answered (an open model's idle
/// connection was merely not needed), and they count only in the cell's longest slices.
fn trial_disqualifiers(t: &TrialRecord, step: usize, outgrown: bool) -> Vec<FindingKind> {
    let s = &t.load.steps[step];
    let lab = t.warnings.iter().filter(|w| w.disqualifies()).cloned().map(FindingKind::Lab);
    let broken = |w: &&Warning| matches!(w, Warning::StoppedAnswering { .. } | Warning::NoResponses { .. });
    let load = s.warnings.iter().filter(broken).cloned().map(FindingKind::Load);
    let unanswered = (s.errors.unanswered > 0).then_some(FindingKind::Unanswered { requests: s.errors.unanswered });
    let starved =
        s.warnings.iter().filter(|w| !outgrown && matches!(w, Warning::StarvedConnections { .. })).cloned().map(FindingKind::Load);
    lab.chain(load).chain(unanswered).chain(starved).collect()
}

/// An open-model step holds its target rate when its median achieved requests/s reach this share of
/// it; below, requests queued in the client and the latencies measure the queue, not the server.
pub const RATE_HELD: f64 = 0.95;

impl CellSummary {
    /// The step had a target rate and its median achieved rate fell short of it (`RATE_HELD`).
    pub fn fell_short(&self) -> bool {
        self.target_rate.is_some_and(|t| self.get(Metric::RequestsPerSec).median < RATE_HELD * t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_interval_of_three_trials() {
        let e = Estimate::from_values(&[100.0, 110.0, 90.0]);
        assert_eq!((e.median, e.ci_low, e.ci_high, e.trials), (100.0, 90.0, 110.0, 3));
        assert!((e.confidence - 0.75).abs() < 1e-12, "three trials' range covers the median 75% of the time");
        assert!(!e.meets(0.5), "no 95% interval from three trials");
    }

    #[test]
    fn one_outlying_trial_moves_neither_the_median_nor_the_interval_of_nine() {
        let clean = Estimate::from_values(&[100.0, 101.0, 99.0, 102.0, 98.0, 100.5, 99.5, 101.5, 98.5]);
        let outlier = Estimate::from_values(&[100.0, 101.0, 99.0, 102.0, 98.0, 100.5, 99.5, 101.5, 10.0]);
        assert_eq!(clean.median, 100.0);
        assert_eq!(outlier.median, 100.0);
        assert!(outlier.meets(0.05) && clean.meets(0.05), "{outlier:?}");
        assert!(outlier.ci_low >= 98.0, "the outlier is not an end of the interval: {outlier:?}");
    }

    #[test]
    fn single_trial_has_degenerate_interval_and_even_counts_average_the_middle() {
        let e = Estimate::from_values(&[42.0]);
        assert_eq!((e.median, e.ci_low, e.ci_high, e.trials, e.confidence), (42.0, 42.0, 42.0, 1, 0.0));
        assert_eq!(Estimate::from_values(&[1.0, 4.0, 2.0, 3.0]).median, 2.5);
    }
}
