//! Judging claims on a run's trials: each kind measures one value with an interval and the interval's
//! real coverage, and compares the interval with what the claim allows. Held when the whole interval
//! agrees, failed when none of it does, inconclusive otherwise, and always inconclusive when the
//! coverage is under `VERDICT_CONFIDENCE` or a cell has a single trial: a single trial never decides.
//!
//! A claim comparing two cells of one scenario measured side by side in five or more blocks is
//! judged on their paired per-block ratios (`judge_paired.rs`). Otherwise it takes the ratio over
//! their trials as `bakeoff compare` does: the Hodges-Lehmann ratio (median of all pairwise trial
//! ratios) with the exact Mann-Whitney interval, 95% where the trials allow, else the widest they
//! do, whose coverage is said (3 v 3 trials: 90%).
//! Why 90% decides: it is the most the seed studies' 3 trials a cell can give within their 20 minutes,
//! and a verdict needs the *whole* interval on one side of a bound, so a two-sided 90% interval says
//! held or failed wrongly at most 5% of the time (one tail): a one-sided test at 5%. Below it (2 v 2
//! trials: 67%, 3 v 2: 80%) the claim is inconclusive and says so.

use super::cells::CellRef;
use super::claims::{Check, Claim, SpreadMeasure, Trend};
use super::judge_paired::PairedValues;
use crate::records::finding::Finding;
use crate::records::results::CellKey;
use crate::statistics::growth::{GROWTH_MIB_PER_MIN, GROWTH_MIN_TOTAL_MIB};
use crate::statistics::robust::covered_ratio;
use crate::statistics::summary::{CellSummary, Estimate, Metric};
use serde::Serialize;

/// A memory trend is decided only over at least this long a measurement (minutes).
pub const TREND_MIN_MINUTES: f64 = 1.0;

/// The least coverage an interval needs to decide held or failed (see the header for why 90%).
pub const VERDICT_CONFIDENCE: f64 = 0.90;

/// What a claim came to on this run.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    /// The whole interval lies where the claim allows.
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
    /// The verdict as reports print it: "held", "not measured", ...
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

/// The value a claim measured: a ratio, an efficiency or a slope, with its interval and the
/// interval's coverage.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Measured {
    /// What the value is, e.g. "ratio of requests_per_sec", "MiB/min".
    pub quantity: String,
    /// The measured value.
    pub value: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// The probability that [low, high] covers the true value (0.9 for 3 v 3 trials): a verdict
    /// needs `VERDICT_CONFIDENCE`. For a memory trend the fit's nominal 95%, optimistic.
    pub confidence: f64,
    /// What the claim allows, e.g. "1.5 to 3", "below 1".
    pub expected: String,
}

impl Measured {
    /// The coverage as a report prints it: "90%", "97.1%", "66.7%".
    pub fn coverage(&self) -> String {
        percent(self.confidence)
    }
}

fn percent(c: f64) -> String {
    let p = 100.0 * c;
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// A claim judged: its verdict, what was measured for it, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClaimResult {
    /// The study's claim.
    pub claim: Claim,
    /// What it came to on its own interval.
    pub verdict: ClaimVerdict,
    /// What it comes to as one of the study's claims, under Holm's step-down at
    /// `FAMILY_ERROR`: a held or failed verdict stands only where its interval still decides at
    /// the stricter level its rank among the study's decided claims asks; else inconclusive.
    pub family: ClaimVerdict,
    /// The value measured, when cells were found to measure it on.
    pub measured: Option<Measured>,
    /// The cells compared and why the verdict is what it is.
    pub detail: String,
}

/// A cell's series over time: one (minutes, value) series per trial, warm-up excluded.
pub type TrialSeries<'a> = &'a dyn Fn(&crate::records::results::CellKey) -> Vec<Vec<(f64, f64)>>;
/// A cell's memory series: (minutes, RSS MiB) per trial.
pub type MemorySeries<'a> = TrialSeries<'a>;
/// The value of a metric in one step of each of a cell's trials, in trial order.
pub type TrialValues<'a> = &'a dyn Fn(&CellKey, usize, Metric) -> Vec<f64>;

/// The rule that decides a verdict from a measured interval (low, high).
type Decide = Box<dyn Fn(f64, f64) -> ClaimVerdict>;

/// What claims are judged on: the run's summaries (which cells, rankable or not), each cell's trial
/// values, memory and requests/s series, and the number of server CPUs ("all" workers).
pub struct Evidence<'a> {
    /// Every cell-step's summary.
    pub summaries: &'a [CellSummary],
    /// Per cell and step, a metric's value in each trial: what comparisons are measured on.
    pub trials: TrialValues<'a>,
    /// Per pair of cells of one scenario, the blocks they shared: what two-cell claims are paired on.
    pub pairs: PairedValues<'a>,
    /// (minutes, RSS MiB) per trial of a cell.
    pub memory: MemorySeries<'a>,
    /// (minutes, requests/s) per trial: `crate::records::timeline::rps_points`.
    pub throughput: TrialSeries<'a>,
    /// The run's server CPUs: what "all" workers means.
    pub server_cpus: u32,
}

/// The chance, over a whole study, that any held or failed verdict of its family is wrong (one
/// side of each claim's interval, as a single claim's 90% two-sided interval has 5%).
pub const FAMILY_ERROR: f64 = 0.05;

/// Each claim judged on the evidence, in the claims' order: on its own interval, and as one of the
/// study's family of claims (Holm's step-down: with k decided claims not yet confirmed, those
/// whose interval at 1 - 2·FAMILY_ERROR/k still decides the same way are confirmed, and the step
/// repeats with the rest; the first step that confirms none ends it).
pub fn judge(claims: &[Claim], evidence: &Evidence<'_>) -> Vec<ClaimResult> {
    let mut results: Vec<ClaimResult> = claims.iter().map(|c| judge_one(c, evidence, VERDICT_CONFIDENCE)).collect();
    let decided = |v: ClaimVerdict| matches!(v, ClaimVerdict::Held | ClaimVerdict::Failed);
    let mut open: Vec<usize> = (0..results.len()).filter(|&i| decided(results[i].verdict)).collect();
    while !open.is_empty() {
        let level = 1.0 - 2.0 * FAMILY_ERROR / open.len() as f64;
        let (confirmed, rest): (Vec<usize>, Vec<usize>) = open.iter().partition(|&&i| {
            // A kind whose interval has a fixed coverage (a memory trend's fit) decides only
            // at levels it reaches.
            let strict = judge_one(&claims[i], evidence, level);
            strict.verdict == results[i].verdict && strict.measured.is_some_and(|m| m.confidence >= level - 1e-9)
        });
        if confirmed.is_empty() {
            break;
        }
        for i in confirmed {
            results[i].family = results[i].verdict;
        }
        open = rest;
    }
    results
}

/// One claim judged with intervals that decide at `level` (two-sided coverage): the study's own
/// `VERDICT_CONFIDENCE`, or a stricter one of the family's steps.
fn judge_one(claim: &Claim, ev: &Evidence<'_>, level: f64) -> ClaimResult {
    let result = |verdict: ClaimVerdict, measured, detail: String| {
        // Undecided verdicts are the family's too; a decided one waits for the family's steps.
        let family = if matches!(verdict, ClaimVerdict::Held | ClaimVerdict::Failed) { ClaimVerdict::Inconclusive } else { verdict };
        ClaimResult { claim: claim.clone(), verdict, family, measured, detail }
    };
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
        let reasons: Vec<String> = broken.unrankable.iter().map(Finding::tagged).collect();
        let why = format!("{} is not ranked ({}), so nothing is claimed about it", broken.cell.label(), reasons.join("; "));
        return result(ClaimVerdict::Inconclusive, None, why);
    }
    // Answers checked but work not proven: a cache would measure the same, so nothing is held.
    if let Some(unproven) = found.iter().find(|c| c.warnings.iter().any(Finding::is_work_not_proven)) {
        let why = format!(
            "{}'s work is not proven (no live-data probe, cost pair or statement count): nothing is claimed about it",
            unproven.cell.label()
        );
        return result(ClaimVerdict::Inconclusive, None, why);
    }
    // A client-bound cell's requests/s is the load generator's ceiling, a lower bound.
    if let Some(bound) = found.iter().find(|c| c.client_bound && metric_of(&claim.check) == Metric::RequestsPerSec) {
        let why = format!(
            "{}'s requests/s ({:.0}) is the load generator's ceiling, a lower bound on the server's: nothing is claimed from it \
             (compare CPU µs per request, or give the client more CPUs)",
            bound.cell.label(),
            bound.get(Metric::RequestsPerSec).median
        );
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
            let Measurement { measured, detail, decide, trials, fewest } = measure(check, &refs, &found, ev, level);
            // A step that did not hold its rate measured a queue: nothing is claimed from it.
            if let Some((r, s)) = refs.iter().zip(&found).find(|(_, s)| s.fell_short()) {
                let (got, want) = (s.get(Metric::RequestsPerSec).median, s.target_rate.unwrap_or_default());
                let why = format!(
                    "{detail}; {} achieved {got:.0} of its target {want:.0} req/s: a step that fell short is left out",
                    r.describe()
                );
                return result(ClaimVerdict::Inconclusive, Some(measured), why);
            }
            if fewest < 2 {
                return result(
                    ClaimVerdict::Inconclusive,
                    Some(measured),
                    format!("{detail}; a cell has {} trial: an interval needs 2 or more", if fewest == 0 { "no" } else { "1" }),
                );
            }
            if measured.value.is_nan() || measured.low.is_nan() || measured.high.is_nan() {
                return result(ClaimVerdict::Inconclusive, Some(measured), format!("{detail}; a trial's value is not positive: no ratio"));
            }
            if measured.confidence < level - 1e-9 {
                let why = format!("{detail}; {trials}: {} coverage, under the {} a verdict needs", measured.coverage(), percent(level));
                return result(ClaimVerdict::Inconclusive, Some(measured), why);
            }
            let verdict = decide(measured.low, measured.high);
            result(verdict, Some(measured), format!("{detail}; {trials}"))
        }
    }
}

/// The cell is unranked only because its variant reproduces a bug on purpose.
fn only_a_reproduction(c: &CellSummary) -> bool {
    !c.unrankable.is_empty() && c.unrankable.iter().all(Finding::is_deliberate_bug)
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

/// A comparison measured: its value, interval and coverage, the cells compared, the rule that decides
/// it from the interval, the trials it stood on ("3 v 3 trials") and the fewest trials of any cell.
struct Measurement {
    measured: Measured,
    detail: String,
    decide: Decide,
    trials: String,
    fewest: usize,
}

/// A ratio over two cells' trials: `num` over `den`, Hodges-Lehmann with its Mann-Whitney interval
/// at `confidence` or the widest there is; NaN when a value is not positive.
fn pair_ratio(num: &[f64], den: &[f64], confidence: f64) -> (f64, f64, f64, f64) {
    match covered_ratio(den, num, confidence) {
        Some(r) => (r.ratio, r.low, r.high, r.confidence),
        None => (f64::NAN, f64::NAN, f64::NAN, 0.0),
    }
}

/// One side of a geomean claim (`side` 0: its first stack, 1: its second) as one value per trial:
/// the geometric mean over the scenarios of the trials with the same index (trials are in round
/// order), for as many trials as every scenario of that side has. NaN where a value is not positive.
fn composite(values: &[Vec<f64>], side: usize) -> Vec<f64> {
    let cells: Vec<&Vec<f64>> = values.iter().skip(side).step_by(2).collect();
    let rounds = cells.iter().map(|v| v.len()).min().unwrap_or(0);
    (0..rounds)
        .map(|t| {
            let logs: Vec<f64> = cells.iter().map(|v| if v[t] > 0.0 { v[t].ln() } else { f64::NAN }).collect();
            (logs.iter().sum::<f64>() / logs.len() as f64).exp()
        })
        .collect()
}

/// The measured value of a comparison, over the trials of the cells it names.
fn measure(check: &Check, refs: &[CellRef], found: &[&CellSummary], ev: &Evidence<'_>, level: f64) -> Measurement {
    // Intervals at 95%, or at a family step's stricter level.
    let confidence = level.max(crate::statistics::robust::CONFIDENCE);
    let metric = metric_of(check);
    let names = |i: usize, j: usize| format!("{} vs {}", refs[i].describe(), refs[j].describe());
    let values: Vec<Vec<f64>> = found.iter().map(|s| compared_values(check, metric, s, ev)).collect();
    let fewest = values.iter().map(Vec::len).min().unwrap_or(0);
    // num / den of the first two cells: paired block by block where they shared enough blocks,
    // else over their trials, at the confidence a verdict aims for (95%).
    let paired = super::judge_paired::paired_claim_ratio(check, found, metric, ev.pairs, (level, confidence));
    let two = |num: usize, den: usize| match &paired {
        Some(r) => super::judge_paired::oriented(r, num),
        None => pair_ratio(&values[num], &values[den], confidence),
    };
    let of = |quantity: String, (value, low, high, confidence): (f64, f64, f64, f64), expected: String| Measured {
        quantity,
        value,
        low,
        high,
        confidence,
        expected,
    };
    let (measured, detail, decide): (Measured, String, Decide) = match check {
        Check::Faster { by_percent, .. } => {
            let r = if metric.higher_is_better() { two(0, 1) } else { two(1, 0) };
            let bound = 1.0 + by_percent / 100.0;
            let m = of(format!("advantage in {}", metric.id()), r, format!("above {bound}"));
            (m, names(0, 1), Box::new(move |lo, hi| above(bound, lo, hi)))
        }
        Check::Ratio { range, .. } => {
            let [lo, hi] = *range;
            let m = of(format!("ratio of {}", metric.id()), two(0, 1), format!("{lo} to {hi}"));
            (m, names(0, 1), Box::new(move |a, b| within(lo, hi, a, b)))
        }
        Check::Geomean { range, scenarios, .. } => {
            // The geometric mean of the scenarios' ratios is the ratio of each stack's geometric
            // mean over the scenarios, so each trial (round) of a stack becomes one composite value,
            // and the two composites compare as two cells do: 3 v 3 rounds give 90%, as a ratio claim.
            let r = pair_ratio(&composite(&values, 0), &composite(&values, 1), confidence);
            let [lo, hi] = *range;
            let over = scenarios.iter().map(|s| s.id()).collect::<Vec<_>>().join(", ");
            let m = of(format!("geometric mean ratio of {} over {over}", metric.id()), r, format!("{lo} to {hi}"));
            let detail = format!("{} vs {} over {} scenarios", refs[0].stack, refs[1].stack, scenarios.len());
            (m, detail, Box::new(move |a, b| within(lo, hi, a, b)))
        }
        Check::Memory { .. } => {
            let m = of(format!("ratio of {}", metric.id()), two(0, 1), "below 1".into());
            (m, names(0, 1), Box::new(|lo, hi| below(1.0, lo, hi)))
        }
        Check::Scaling { efficiency, .. } => {
            let (a, b) = (found[1], found[0]);
            let per = a.cell.workers as f64 / b.cell.workers as f64;
            let (v, lo, hi, c) = two(1, 0);
            let [elo, ehi] = *efficiency;
            let detail = format!("{} workers vs {}: {v:.2}x the {} over {per}x the workers", a.cell.workers, b.cell.workers, metric.id());
            let m = of(format!("scaling efficiency of {}", metric.id()), (v / per, lo / per, hi / per, c), format!("{elo} to {ehi}"));
            (m, detail, Box::new(move |x, y| within(elo, ehi, x, y)))
        }
        Check::Spread { measure: sm, .. } => {
            let what = match sm {
                SpreadMeasure::Stddev => "ratio of latency stddev",
                SpreadMeasure::TailRatio => "ratio of p99.99/p50",
            };
            (of(what.into(), two(0, 1), "below 1".into()), names(0, 1), Box::new(|lo, hi| below(1.0, lo, hi)))
        }
        Check::MemoryTrend { .. } | Check::ThroughputTrend { .. } | Check::Qualitative {} => unreachable!("judged elsewhere"),
    };
    let trials = paired.as_ref().map_or_else(|| trials_compared(check, &values), super::judge_paired::describe);
    Measurement { measured, detail, decide, trials, fewest }
}

/// One cell's values of the compared quantity, one per trial with a finite value: the metric, or
/// for a tail-ratio spread each trial's p99.99 over its p50.
fn compared_values(check: &Check, metric: Metric, s: &CellSummary, ev: &Evidence<'_>) -> Vec<f64> {
    let of = |m: Metric| (ev.trials)(&s.cell, s.step, m);
    let values = match check {
        Check::Spread { measure: SpreadMeasure::TailRatio, .. } => {
            of(Metric::P9999Us).iter().zip(&of(Metric::P50Us)).map(|(t, m)| t / m).collect()
        }
        _ => of(metric),
    };
    values.into_iter().filter(|v| v.is_finite()).collect()
}

/// The trials a comparison stood on: "3 v 3 trials", or a geomean's rounds.
fn trials_compared(check: &Check, values: &[Vec<f64>]) -> String {
    match check {
        Check::Geomean { scenarios, .. } => {
            let (a, b) = (composite(values, 0).len(), composite(values, 1).len());
            format!("{a} v {b} trials, each the geometric mean of its round over {} scenarios", scenarios.len())
        }
        _ => format!("{} v {} trials", values[0].len(), values[1].len()),
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
    let fits: Vec<crate::statistics::growth::SlopeInterval> =
        (ev.memory)(&summary.cell).iter().filter_map(|p| crate::statistics::growth::slope_interval(p)).collect();
    if fits.is_empty() {
        return result(ClaimVerdict::NotMeasured, None, format!("{} has no memory samples", cell.describe()));
    }
    let mut slopes: Vec<f64> = fits.iter().map(|f| f.slope).collect();
    slopes.sort_by(f64::total_cmp);
    let value = slopes[(slopes.len() - 1) / 2];
    let (low, high) = envelope(fits.iter().map(|f| (f.low, f.high)));
    let span = fits.iter().map(|f| f.span).fold(f64::INFINITY, f64::min);
    let t = GROWTH_MIB_PER_MIN;
    let expected = match trend {
        Trend::Grows => format!("above {t} MiB/min"),
        Trend::Bounded => format!("below {t} MiB/min"),
    };
    // Each trial's fit interval is a nominal 95% (memory samples are autocorrelated: optimistic).
    let m = Measured { quantity: "RSS slope, MiB/min".into(), value, low, high, confidence: 0.95, expected };
    let detail = format!("{} over {:.1} min", cell.describe(), span);
    if let Some(why) = trend_unjudged(&detail, span, fits.len(), ("e.g. --duration 5m", "a trend")) {
        return result(ClaimVerdict::Inconclusive, Some(m), why);
    }
    let verdict = match trend {
        Trend::Grows if low > t && value * span >= GROWTH_MIN_TOTAL_MIB => ClaimVerdict::Held,
        Trend::Grows if high < t => ClaimVerdict::Failed,
        Trend::Grows => ClaimVerdict::Inconclusive,
        Trend::Bounded => below(t, low, high),
    };
    result(verdict, Some(m), detail)
}

/// Every trial's interval at once: the lowest low and the highest high.
fn envelope(intervals: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    intervals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (l, h)| (lo.min(l), hi.max(h)))
}

/// Why a trend cannot be judged: a measurement shorter than `TREND_MIN_MINUTES` (`lengthen` says
/// how to run longer) or a single trial (`needs_two` names what needs a second).
fn trend_unjudged(detail: &str, span: f64, trials: usize, (lengthen, needs_two): (&str, &str)) -> Option<String> {
    if span < TREND_MIN_MINUTES {
        return Some(format!("{detail}: a trend needs {TREND_MIN_MINUTES} min or more of load ({lengthen})"));
    }
    (trials < 2).then(|| format!("{detail}; a cell has 1 trial: {needs_two} needs 2 or more"))
}

/// A throughput trend: per trial, the last quarter's requests/s over the first quarter's with that
/// trial's nominal 95% interval (`timeline::late_over_early`); the claim's value is the trials' median
/// and its interval spans every trial's, as a memory trend's does, so trials that disagree decide
/// nothing. Decided over a soak-length measurement of 2 trials or more.
fn judge_throughput(
    range: [f64; 2],
    cell: &CellRef,
    summary: &CellSummary,
    ev: &Evidence<'_>,
    result: impl Fn(ClaimVerdict, Option<Measured>, String) -> ClaimResult,
) -> ClaimResult {
    let series = (ev.throughput)(&summary.cell);
    let fits: Vec<crate::statistics::robust::CoveredRatio> =
        series.iter().filter_map(|p| crate::records::timeline::late_over_early(p)).collect();
    let span = series.iter().map(|p| crate::records::timeline::span(p)).fold(f64::INFINITY, f64::min);
    if fits.is_empty() {
        return result(ClaimVerdict::NotMeasured, None, format!("{} has no requests/s over time", cell.describe()));
    }
    let value = Estimate::from_values(&fits.iter().map(|f| f.ratio).collect::<Vec<_>>()).median;
    let (low, high) = envelope(fits.iter().map(|f| (f.low, f.high)));
    let confidence = fits.iter().map(|f| f.confidence).fold(1.0, f64::min);
    let [lo, hi] = range;
    let quantity = "requests/s, last quarter over first".to_string();
    let m = Measured { quantity, value, low, high, confidence, expected: format!("{lo} to {hi}") };
    let detail = format!("{} over {:.1} min", cell.describe(), span);
    if let Some(why) = trend_unjudged(&detail, span, fits.len(), ("a study's [soak]", "an interval")) {
        return result(ClaimVerdict::Inconclusive, Some(m), why);
    }
    if m.confidence < VERDICT_CONFIDENCE {
        let why = format!("{detail}: {} coverage, under the {} a verdict needs", m.coverage(), percent(VERDICT_CONFIDENCE));
        return result(ClaimVerdict::Inconclusive, Some(m), why);
    }
    result(within(lo, hi, low, high), Some(m), detail)
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
