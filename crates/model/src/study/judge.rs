//! Judging claims on a run's summaries: each kind measures one value with a 95% interval and compares
//! the interval with what the claim allows. Held when the whole interval agrees, failed when none of
//! it does, inconclusive otherwise, and always inconclusive when a cell lacks the trials for an
//! interval: a single trial never decides.

use super::cells::CellRef;
use super::claims::{Check, Claim, SpreadMeasure, Trend};
use crate::growth::{GROWTH_MIB_PER_MIN, GROWTH_MIN_TOTAL_MIB};
use crate::results::DELIBERATE_BUG;
use crate::summary::{CellSummary, Estimate, Metric};
use serde::Serialize;

/// A memory trend is decided only over at least this long a measurement (minutes).
pub const TREND_MIN_MINUTES: f64 = 1.0;

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    Held,
    /// Contradicted: the whole interval lies outside what the claim allows.
    Failed,
    /// The interval straddles the claim's bound, or there were too few trials for an interval.
    Inconclusive,
    /// A cell it needs was not measured.
    NotMeasured,
    /// The study marks the finding as not testable on this lab (its `why` says why).
    NotTestable,
}

impl ClaimVerdict {
    pub fn label(self) -> &'static str {
        match self {
            ClaimVerdict::Held => "held",
            ClaimVerdict::Failed => "failed",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::NotMeasured => "not measured",
            ClaimVerdict::NotTestable => "not testable here",
        }
    }
}

/// The value a claim measured: a ratio, an efficiency or a slope, with its 95% interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Measured {
    /// What the value is, e.g. "ratio of requests_per_sec", "MiB/min".
    pub quantity: String,
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// What the claim allows, e.g. "1.5 to 3", "below 1".
    pub expected: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClaimResult {
    pub claim: Claim,
    pub verdict: ClaimVerdict,
    pub measured: Option<Measured>,
    /// The cells compared and why the verdict is what it is.
    pub detail: String,
}

/// A cell's series over time: one (minutes, value) series per trial, warm-up excluded.
pub type TrialSeries<'a> = &'a dyn Fn(&crate::results::CellKey) -> Vec<Vec<(f64, f64)>>;
/// A cell's memory series: (minutes, RSS MiB) per trial.
pub type MemorySeries<'a> = TrialSeries<'a>;

/// The rule that decides a verdict from a measured interval (low, high).
type Decide = Box<dyn Fn(f64, f64) -> ClaimVerdict>;

/// What claims are judged on: the run's summaries, the memory series of its cells and the number of
/// server CPUs (which "all" workers resolved to).
pub struct Evidence<'a> {
    pub summaries: &'a [CellSummary],
    pub memory: MemorySeries<'a>,
    /// (minutes, requests/s) per trial: `crate::timeline::rps_points`.
    pub throughput: TrialSeries<'a>,
    pub server_cpus: u32,
}

pub fn judge(claims: &[Claim], evidence: &Evidence<'_>) -> Vec<ClaimResult> {
    claims.iter().map(|c| judge_one(c, evidence)).collect()
}

fn judge_one(claim: &Claim, ev: &Evidence<'_>) -> ClaimResult {
    let result = |verdict, measured, detail: String| ClaimResult { claim: claim.clone(), verdict, measured, detail };
    if !claim.testable {
        return result(ClaimVerdict::NotTestable, None, claim.why.clone().unwrap_or_default());
    }
    let refs = claim.check.cells();
    let mut found = Vec::new();
    for r in &refs {
        match r.find(ev.summaries, ev.server_cpus) {
            Some(s) => found.push(s),
            None => return result(ClaimVerdict::NotMeasured, None, format!("{} was not measured", r.describe())),
        }
    }
    // A deliberate reproduction of a bug is compared with its own stack only: what the bug costs.
    let one_stack = found.iter().all(|c| c.cell.stack == found[0].cell.stack);
    let excused = |c: &CellSummary| c.rankable() || (one_stack && only_a_reproduction(c));
    if let Some(broken) = found.iter().find(|c| !excused(c)) {
        let why = format!("{} is not ranked ({}), so nothing is claimed about it", broken.cell.label(), broken.unrankable.join("; "));
        return result(ClaimVerdict::Inconclusive, None, why);
    }
    match &claim.check {
        Check::Scaling { from, to, .. } if from.resolve(ev.server_cpus) == to.resolve(ev.server_cpus) => {
            let n = to.resolve(ev.server_cpus);
            result(ClaimVerdict::Inconclusive, None, format!("{from} and {to} workers are both {n} on this machine: nothing to scale"))
        }
        Check::MemoryTrend { trend, .. } => judge_trend(*trend, &refs[0], found[0], ev, result),
        Check::ThroughputTrend { late_over_early, .. } => judge_throughput(*late_over_early, &refs[0], found[0], ev, result),
        check => {
            let (measured, detail, decide) = measure(check, &refs, &found);
            // A step that did not hold its rate measured a queue: nothing is claimed from it.
            if let Some((r, s)) = refs.iter().zip(&found).find(|(_, s)| s.fell_short()) {
                let (got, want) = (s.get(Metric::RequestsPerSec).median, s.target_rate.unwrap_or_default());
                let why = format!(
                    "{detail}; {} achieved {got:.0} of its target {want:.0} req/s: a step that fell short is left out",
                    r.describe()
                );
                return result(ClaimVerdict::Inconclusive, Some(measured), why);
            }
            let short: Vec<u32> = found.iter().map(|s| s.get(metric_of(check)).trials).filter(|&t| t < 2).collect();
            let verdict = if !short.is_empty() || measured.low.is_nan() || measured.high.is_nan() {
                ClaimVerdict::Inconclusive
            } else {
                decide(measured.low, measured.high)
            };
            let detail = if short.is_empty() { detail } else { format!("{detail}; a cell has 1 trial: an interval needs 2 or more") };
            result(verdict, Some(measured), detail)
        }
    }
}

/// The cell is unranked only because its variant reproduces a bug on purpose.
fn only_a_reproduction(c: &CellSummary) -> bool {
    !c.unrankable.is_empty() && c.unrankable.iter().all(|r| r.starts_with(DELIBERATE_BUG))
}

fn metric_of(check: &Check) -> Metric {
    match check {
        Check::Faster { metric, .. } | Check::Ratio { metric, .. } | Check::Geomean { metric, .. } | Check::Scaling { metric, .. } => {
            metric.unwrap_or(Metric::RequestsPerSec)
        }
        Check::Memory { metric, .. } => metric.unwrap_or(Metric::PeakRssMib),
        Check::Spread { measure: SpreadMeasure::Stddev, .. } => Metric::StddevUs,
        Check::Spread { measure: SpreadMeasure::TailRatio, .. } => Metric::P9999Us,
        Check::MemoryTrend { .. } | Check::Qualitative {} => Metric::PeakRssMib,
        Check::ThroughputTrend { .. } => Metric::RequestsPerSec,
    }
}

/// The measured value of a comparison and the rule that decides it from its interval.
fn measure(check: &Check, refs: &[CellRef], found: &[&CellSummary]) -> (Measured, String, Decide) {
    let metric = metric_of(check);
    let names = |i: usize, j: usize| format!("{} vs {}", refs[i].describe(), refs[j].describe());
    match check {
        Check::Faster { by_percent, .. } => {
            let r = if metric.higher_is_better() {
                ratio(found[0].get(metric), found[1].get(metric))
            } else {
                ratio(found[1].get(metric), found[0].get(metric))
            };
            let bound = 1.0 + by_percent / 100.0;
            let m = measured(format!("advantage in {}", metric.id()), r, format!("above {bound}"));
            (m, names(0, 1), Box::new(move |lo, hi| above(bound, lo, hi)))
        }
        Check::Ratio { range, .. } => {
            let r = ratio(found[0].get(metric), found[1].get(metric));
            let [lo, hi] = *range;
            (
                measured(format!("ratio of {}", metric.id()), r, format!("{lo} to {hi}")),
                names(0, 1),
                Box::new(move |a, b| within(lo, hi, a, b)),
            )
        }
        Check::Geomean { range, scenarios, .. } => {
            let pairs: Vec<(f64, f64, f64)> = found.chunks(2).map(|p| ratio(p[0].get(metric), p[1].get(metric))).collect();
            let [lo, hi] = *range;
            let m = measured(
                format!("geometric mean ratio of {} over {}", metric.id(), scenarios.iter().map(|s| s.id()).collect::<Vec<_>>().join(", ")),
                geomean(&pairs),
                format!("{lo} to {hi}"),
            );
            let detail = format!("{} vs {} over {} scenarios", refs[0].stack, refs[1].stack, scenarios.len());
            (m, detail, Box::new(move |a, b| within(lo, hi, a, b)))
        }
        Check::Memory { .. } => {
            let r = ratio(found[0].get(metric), found[1].get(metric));
            (measured(format!("ratio of {}", metric.id()), r, "below 1".into()), names(0, 1), Box::new(|lo, hi| below(1.0, lo, hi)))
        }
        Check::Scaling { efficiency, .. } => {
            let (a, b) = (found[1], found[0]);
            let per = a.cell.workers as f64 / b.cell.workers as f64;
            let (v, lo, hi) = ratio(a.get(metric), b.get(metric));
            let [elo, ehi] = *efficiency;
            let detail = format!("{} workers vs {}: speedup {v:.2}x over {per}x the workers", a.cell.workers, b.cell.workers);
            let m = measured(format!("scaling efficiency of {}", metric.id()), (v / per, lo / per, hi / per), format!("{elo} to {ehi}"));
            (m, detail, Box::new(move |x, y| within(elo, ehi, x, y)))
        }
        Check::Spread { measure: m, .. } => {
            let spread = |s: &CellSummary| match m {
                SpreadMeasure::Stddev => {
                    let e = s.get(Metric::StddevUs);
                    (e.median, e.ci_low, e.ci_high)
                }
                SpreadMeasure::TailRatio => ratio(s.get(Metric::P9999Us), s.get(Metric::P50Us)),
            };
            let (a, b) = (spread(found[0]), spread(found[1]));
            let r = ratio_of(a, b);
            let what = match m {
                SpreadMeasure::Stddev => "ratio of latency stddev",
                SpreadMeasure::TailRatio => "ratio of p99.99/p50",
            };
            (measured(what.into(), r, "below 1".into()), names(0, 1), Box::new(|lo, hi| below(1.0, lo, hi)))
        }
        Check::MemoryTrend { .. } | Check::ThroughputTrend { .. } | Check::Qualitative {} => unreachable!("judged elsewhere"),
    }
}

/// A memory trend: the least-squares slope of RSS over each trial with its 95% interval (from the
/// fit's standard error; memory samples are autocorrelated, so the interval is optimistic and the
/// threshold, GROWTH_MIB_PER_MIN, carries the margin). Decided only over a soak-length measurement.
fn judge_trend(
    trend: Trend,
    cell: &CellRef,
    summary: &CellSummary,
    ev: &Evidence<'_>,
    result: impl Fn(ClaimVerdict, Option<Measured>, String) -> ClaimResult,
) -> ClaimResult {
    let fits: Vec<crate::growth::SlopeInterval> =
        (ev.memory)(&summary.cell).iter().filter_map(|p| crate::growth::slope_interval(p)).collect();
    if fits.is_empty() {
        return result(ClaimVerdict::NotMeasured, None, format!("{} has no memory samples", cell.describe()));
    }
    let mut slopes: Vec<f64> = fits.iter().map(|f| f.slope).collect();
    slopes.sort_by(f64::total_cmp);
    let value = slopes[(slopes.len() - 1) / 2];
    let low = fits.iter().map(|f| f.low).fold(f64::INFINITY, f64::min);
    let high = fits.iter().map(|f| f.high).fold(f64::NEG_INFINITY, f64::max);
    let span = fits.iter().map(|f| f.span).fold(f64::INFINITY, f64::min);
    let t = GROWTH_MIB_PER_MIN;
    let expected = match trend {
        Trend::Grows => format!("above {t} MiB/min"),
        Trend::Bounded => format!("below {t} MiB/min"),
    };
    let m = Measured { quantity: "RSS slope, MiB/min".into(), value, low, high, expected };
    let detail = format!("{} over {:.1} min", cell.describe(), span);
    if span < TREND_MIN_MINUTES {
        let why = format!("{detail}: a trend needs {TREND_MIN_MINUTES} min or more of load (e.g. --duration 5m)");
        return result(ClaimVerdict::Inconclusive, Some(m), why);
    }
    if fits.len() < 2 {
        return result(ClaimVerdict::Inconclusive, Some(m), format!("{detail}; a cell has 1 trial: a trend needs 2 or more"));
    }
    let verdict = match trend {
        Trend::Grows if low > t && value * span >= GROWTH_MIN_TOTAL_MIB => ClaimVerdict::Held,
        Trend::Grows if high < t => ClaimVerdict::Failed,
        Trend::Grows => ClaimVerdict::Inconclusive,
        Trend::Bounded => below(t, low, high),
    };
    result(verdict, Some(m), detail)
}

/// A throughput trend: per trial, the last quarter's requests/s over the first quarter's; their
/// median and order-statistic interval, decided over a soak-length measurement of 2 trials or more.
fn judge_throughput(
    range: [f64; 2],
    cell: &CellRef,
    summary: &CellSummary,
    ev: &Evidence<'_>,
    result: impl Fn(ClaimVerdict, Option<Measured>, String) -> ClaimResult,
) -> ClaimResult {
    let series = (ev.throughput)(&summary.cell);
    let ratios: Vec<f64> = series.iter().filter_map(|p| crate::timeline::late_over_early(p)).collect();
    let span = series.iter().map(|p| crate::timeline::span(p)).fold(f64::INFINITY, f64::min);
    let Some(e) = (!ratios.is_empty()).then(|| Estimate::from_values(&ratios)) else {
        return result(ClaimVerdict::NotMeasured, None, format!("{} has no requests/s over time", cell.describe()));
    };
    let [lo, hi] = range;
    let quantity = "requests/s, last quarter over first".to_string();
    let m = Measured { quantity, value: e.median, low: e.ci_low, high: e.ci_high, expected: format!("{lo} to {hi}") };
    let detail = format!("{} over {:.1} min", cell.describe(), span);
    if span < TREND_MIN_MINUTES {
        let why = format!("{detail}: a trend needs {TREND_MIN_MINUTES} min or more of load (a study's [soak])");
        return result(ClaimVerdict::Inconclusive, Some(m), why);
    }
    if ratios.len() < 2 {
        return result(ClaimVerdict::Inconclusive, Some(m), format!("{detail}; a cell has 1 trial: an interval needs 2 or more"));
    }
    result(within(lo, hi, e.ci_low, e.ci_high), Some(m), detail)
}

/// The quotient of two estimates: the ratio of medians, and an interval from the two intervals'
/// extremes (low over high, high over low), wider than either cell's own and so never overclaiming.
fn ratio(a: Estimate, b: Estimate) -> (f64, f64, f64) {
    ratio_of((a.median, a.ci_low, a.ci_high), (b.median, b.ci_low, b.ci_high))
}

fn ratio_of(a: (f64, f64, f64), b: (f64, f64, f64)) -> (f64, f64, f64) {
    // The metrics compared are positive: an interval reaching below zero (two noisy trials) bounds
    // the ratio by 0 below and leaves it unbounded above.
    let high = if b.1 > 0.0 { a.2 / b.1 } else { f64::INFINITY };
    (a.0 / b.0, (a.1 / b.2).max(0.0), high)
}

/// The geometric mean of ratios, its interval the geometric means of their bounds.
fn geomean(ratios: &[(f64, f64, f64)]) -> (f64, f64, f64) {
    let g = |f: fn(&(f64, f64, f64)) -> f64| (ratios.iter().map(|r| f(r).ln()).sum::<f64>() / ratios.len() as f64).exp();
    (g(|r| r.0), g(|r| r.1), g(|r| r.2))
}

fn measured(quantity: String, (value, low, high): (f64, f64, f64), expected: String) -> Measured {
    Measured { quantity, value, low, high, expected }
}

fn within(lo: f64, hi: f64, low: f64, high: f64) -> ClaimVerdict {
    if low >= lo && high <= hi {
        ClaimVerdict::Held
    } else if high < lo || low > hi {
        ClaimVerdict::Failed
    } else {
        ClaimVerdict::Inconclusive
    }
}

fn above(bound: f64, low: f64, high: f64) -> ClaimVerdict {
    within(bound, f64::INFINITY, low, high)
}

fn below(bound: f64, low: f64, high: f64) -> ClaimVerdict {
    if high < bound {
        ClaimVerdict::Held
    } else if low > bound {
        ClaimVerdict::Failed
    } else {
        ClaimVerdict::Inconclusive
    }
}
