//! Two runs side by side: per cell, the change of each primary metric and of p99 as a ratio with
//! a 95% distribution-free interval, and a verdict (faster / slower / no detectable change). One
//! typed result that every output format of `bakeoff compare` renders.

use crate::plan::goal::PrimaryMetric;
use crate::records::metric::Metric;
use crate::records::results::{CellKey, TrialRecord, PROC_TICK_S};
use crate::statistics::robust::{median_interval, ratio_interval};
use serde::Serialize;
use std::collections::BTreeMap;

mod launches;
mod relative;
mod side_by_side;
use launches::InLaunch;
pub use relative::{relative_change, RelativeChange};
pub use side_by_side::{side_by_side, Gate, SideBySide, GATED_BY_DEFAULT, SIDE_BY_SIDE};

/// The metrics every comparison shows, in this order.
pub const COMPARED: [Metric; 3] = [Metric::RequestsPerSec, Metric::CpuUsPerRequest, Metric::P99Us];

/// A verdict on one metric of one cell, from the ratio's interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// B is better than A: the whole interval is on the better side of 1.
    Faster,
    /// B is worse than A: the whole interval is on the worse side of 1.
    Slower,
    /// The interval holds 1, or there is none.
    NoDetectableChange,
}

impl Change {
    /// As printed: `faster`, `slower`, `no detectable change`.
    pub fn name(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::NoDetectableChange => "no detectable change",
        }
    }
}

/// One metric of one cell: B's median over A's, as a Hodges-Lehmann ratio with its interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MetricChange {
    /// The metric compared.
    pub metric: Metric,
    /// Its median over run A's trials.
    pub median_a: f64,
    /// Its median over run B's trials.
    pub median_b: f64,
    /// B / A (1.10 = B is 10% higher).
    pub ratio: f64,
    /// 95% interval of the ratio; None with fewer than four trials a side (no 95% interval exists).
    pub low: Option<f64>,
    /// Upper end of that interval.
    pub high: Option<f64>,
    /// What the interval says.
    pub verdict: Change,
}

impl MetricChange {
    /// How far B is worse than A at the least (0.07 = at least 7% worse), judged on the interval
    /// bound nearest to no change; 0 when the interval allows no regression.
    pub fn proven_regression(&self) -> f64 {
        match (self.low, self.high, self.metric.higher_is_better()) {
            (_, Some(h), true) => (1.0 - h).max(0.0),
            (Some(l), _, false) => (l - 1.0).max(0.0),
            _ => 0.0,
        }
    }
}

/// One cell measured in both runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CellChange {
    /// The cell.
    pub cell: CellKey,
    /// Its trials in run A.
    pub trials_a: usize,
    /// Its trials in run B.
    pub trials_b: usize,
    /// One per metric of `COMPARED`, in that order.
    pub changes: Vec<MetricChange>,
    /// The verdict on the primary metric: the change of its own medians, held only where its
    /// ratio to a peer measured in the same blocks (`relative`, where there is one) says the same.
    /// A move of every cell alike, such as the machine's drift between the runs, is then no
    /// change of the cell: it shows in `changes` only.
    pub verdict: Change,
    /// The primary metric regressed beyond noise by more than the threshold.
    pub regressed: bool,
    /// Whether the two runs' medians of the primary metric agree within the cells' stated precision.
    pub precision: Agreement,
    /// The primary metric's change against a peer measured in the same blocks of both runs (block
    /// schedule), where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative: Option<RelativeChange>,
}

/// Two medians of the same cell against the precision each run states for it.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Agreement {
    /// |median B / median A - 1|.
    pub difference: f64,
    /// The wider of the two runs' relative half-widths of the median's interval.
    pub stated: f64,
    /// `difference` is within `stated`.
    pub agrees: bool,
}

fn agreement(a: &[f64], b: &[f64]) -> Agreement {
    let (Some(ma), Some(mb)) = (median_interval(a), median_interval(b)) else {
        return Agreement { difference: f64::NAN, stated: f64::NAN, agrees: false };
    };
    let half = |m: &crate::statistics::robust::MedianInterval| (m.high - m.low) / 2.0 / m.median.abs();
    let difference = (mb.median / ma.median - 1.0).abs();
    let stated = half(&ma).max(half(&mb));
    Agreement { difference, stated, agrees: difference <= stated }
}

/// Run B against run A, cell by cell: what `bakeoff compare` prints in every format.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Comparison {
    /// The baseline run's id.
    pub run_a: String,
    /// The run compared with it.
    pub run_b: String,
    /// The metric the verdicts and regressions are on.
    pub primary: PrimaryMetric,
    /// `--fail-if-slower` as a fraction (0.05), if given.
    pub threshold: Option<f64>,
    /// The cells both runs measured, in cell order.
    pub cells: Vec<CellChange>,
    /// Cells that only run A measured.
    pub only_in_a: Vec<CellKey>,
    /// Cells that only run B measured.
    pub only_in_b: Vec<CellKey>,
    /// Both runs loaded their cells at once: each verdict is the cell's change against its peer
    /// alone (`judged_on_ratios`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub on_ratios: bool,
}

impl Comparison {
    /// For two runs (`a`, `b`: their trials) that loaded their cells at once (`--schedule
    /// at-once`): a cell's own medians are its rate on a share of a machine its peers loaded too,
    /// which moves with them and with the machine from run to run, so each cell's verdict (and
    /// `--fail-if-slower`) comes from its ratios to its peers measured in the same blocks. A ratio
    /// that moved says two cells moved apart, not which one did: a cell is called faster or slower
    /// only when its ratio to most of its peers (two at least) moved that way, each with its
    /// interval; else no change is attributed (two cells alone never are).
    pub fn judged_on_ratios(mut self, a: &[TrialRecord], b: &[TrialRecord]) -> Comparison {
        let metric = self.primary.metric();
        let higher = metric.higher_is_better();
        let keys: Vec<CellKey> = self.cells.iter().map(|c| c.cell.clone()).collect();
        for c in &mut self.cells {
            let peers: Vec<&CellKey> =
                keys.iter().filter(|k| **k != c.cell && k.scenario == c.cell.scenario && k.workers == c.cell.workers).collect();
            let moves: Vec<RelativeChange> =
                peers.iter().filter_map(|p| relative_change(&c.cell, &[(p, 1.0)], a, b, metric)).filter(|r| r.low.is_some()).collect();
            let agreeing = |v: Change| moves.iter().filter(|r| r.verdict == v).count();
            let verdict = [Change::Slower, Change::Faster]
                .into_iter()
                .find(|&v| agreeing(v) >= 2 && 2 * agreeing(v) > peers.len())
                .unwrap_or(Change::NoDetectableChange);
            // The gate counts the least slowdown its agreeing ratios prove.
            let proven = moves
                .iter()
                .filter(|r| r.verdict == verdict)
                .map(|r| match (r.low, r.high, higher) {
                    (_, Some(h), true) => (1.0 - h).max(0.0),
                    (Some(l), _, false) => (l - 1.0).max(0.0),
                    _ => 0.0,
                })
                .fold(f64::INFINITY, f64::min);
            c.verdict = verdict;
            c.regressed = verdict == Change::Slower && proven > self.threshold.unwrap_or(f64::INFINITY);
        }
        self.on_ratios = true;
        self
    }

    /// The cells whose primary metric regressed beyond the threshold.
    pub fn regressions(&self) -> impl Iterator<Item = &CellChange> {
        self.cells.iter().filter(|c| c.regressed)
    }
}

/// Per cell, the values of `metric` in the last step of each trial (the headline of a plain run),
/// each with the launch it was measured in.
fn values(trials: &[&TrialRecord], metric: Metric) -> Vec<InLaunch> {
    trials
        .iter()
        .filter(|t| !t.load.steps.is_empty())
        .map(|t| InLaunch { launch: t.launch.unwrap_or(t.trial), value: metric.of(t, t.load.steps.len() - 1) })
        .collect()
}

fn plain(values: &[InLaunch]) -> Vec<f64> {
    values.iter().map(|v| v.value).collect()
}

fn by_cell(trials: &[TrialRecord]) -> BTreeMap<CellKey, Vec<&TrialRecord>> {
    let mut m: BTreeMap<CellKey, Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials {
        m.entry(t.cell.clone()).or_default().push(t);
    }
    m
}

/// How far, relative to the value, the CPU meter itself may be off in one trial. /proc counts
/// each process's user and system time in whole ticks, so a trial's CPU (a difference of two
/// readings) may be off by two ticks per process; over many processes the errors are independent
/// and grow with the square root of their number. A cell of a few hundred requests per trial is
/// measured in a handful of ticks: two runs that differ by one tick are not a change.
fn cpu_resolution(t: &TrialRecord) -> f64 {
    let server = &t.server;
    if server.cpu_s <= 0.0 || server.cpu_us_per_request <= 0.0 {
        return 0.0;
    }
    let processes = t.samples.iter().filter(|s| s.is_measured()).map(|s| s.processes).max().unwrap_or(1).max(1);
    2.0 * PROC_TICK_S * (processes as f64).sqrt() / server.cpu_s
}

/// The median meter resolution of a cell's trials, for `metric` (only CPU is counted in ticks).
fn resolution(trials: &[&TrialRecord], metric: Metric) -> f64 {
    if metric != Metric::CpuUsPerRequest {
        return 0.0;
    }
    let r: Vec<f64> = trials.iter().map(|t| cpu_resolution(t)).collect();
    median_interval(&r).map_or(0.0, |m| m.median)
}

/// The ratio interval widened by both sides' meter resolution: the bounds move as far as B could
/// be higher and A lower (and the reverse) within what the meter can tell apart. None when the
/// meter's step is as large as the value: no interval then.
fn widen((low, high): (f64, f64), res_a: f64, res_b: f64) -> Option<(f64, f64)> {
    (res_a < 1.0 && res_b < 1.0).then(|| (low * (1.0 - res_b) / (1.0 + res_a), high * (1.0 + res_b) / (1.0 - res_a)))
}

/// Faster where the whole interval of B / A is on the better side of 1, slower where it is all on
/// the worse side, else (or without an interval) no detectable change.
fn verdict_of(metric: Metric, bounds: Option<(f64, f64)>) -> Change {
    let (up, down) = bounds.map_or((false, false), |(l, h)| (l > 1.0, h < 1.0));
    let (better, worse) = if metric.higher_is_better() { (up, down) } else { (down, up) };
    if better {
        Change::Faster
    } else if worse {
        Change::Slower
    } else {
        Change::NoDetectableChange
    }
}

/// B / A on `metric`: the pooled interval, widened to the launch-level one and by the meters'
/// resolution.
fn metric_change(metric: Metric, a: &[InLaunch], b: &[InLaunch], res: (f64, f64)) -> Option<MetricChange> {
    let (pa, pb) = (plain(a), plain(b));
    let mut r = ratio_interval(&pa, &pb)?;
    let by_launch = launches::launch_interval(a, b);
    r.bounds = r.bounds.map(|pooled| launches::wider(pooled, by_launch)).and_then(|bounds| widen(bounds, res.0, res.1));
    let median = |v: &[f64]| median_interval(v).map_or(f64::NAN, |m| m.median);
    let (low, high) = (r.bounds.map(|b| b.0), r.bounds.map(|b| b.1));
    let verdict = verdict_of(metric, r.bounds);
    Some(MetricChange { metric, median_a: median(&pa), median_b: median(&pb), ratio: r.ratio, low, high, verdict })
}

/// Compares the cells the two runs share; `threshold` is `--fail-if-slower` as a fraction.
pub fn compare(run_a: (&str, &[TrialRecord]), run_b: (&str, &[TrialRecord]), primary: PrimaryMetric, threshold: Option<f64>) -> Comparison {
    let (a, b) = (by_cell(run_a.1), by_cell(run_b.1));
    let mut cells = Vec::new();
    for (key, ta) in &a {
        let Some(tb) = b.get(key) else { continue };
        let changes: Vec<MetricChange> = COMPARED
            .iter()
            .filter_map(|&m| metric_change(m, &values(ta, m), &values(tb, m), (resolution(ta, m), resolution(tb, m))))
            .collect();
        let main = changes.iter().find(|c| c.metric == primary.metric());
        let verdict = main.map_or(Change::NoDetectableChange, |c| c.verdict);
        let regressed = main.is_some_and(|c| c.verdict == Change::Slower && c.proven_regression() > threshold.unwrap_or(f64::INFINITY));
        let m = primary.metric();
        let precision = agreement(&plain(&values(ta, m)), &plain(&values(tb, m)));
        let relative = None;
        cells.push(CellChange {
            cell: key.clone(),
            trials_a: ta.len(),
            trials_b: tb.len(),
            changes,
            verdict,
            regressed,
            precision,
            relative,
        });
    }
    add_relative(&mut cells, run_a.1, run_b.1, primary.metric());
    Comparison {
        run_a: run_a.0.to_string(),
        run_b: run_b.0.to_string(),
        primary,
        threshold,
        cells,
        only_in_a: a.keys().filter(|k| !b.contains_key(*k)).cloned().collect(),
        only_in_b: b.keys().filter(|k| !a.contains_key(*k)).cloned().collect(),
        on_ratios: false,
    }
}

/// Each cell's change against its steadiest peer, from the absolute changes just found.
fn add_relative(cells: &mut [CellChange], a: &[TrialRecord], b: &[TrialRecord], metric: Metric) {
    let moved: Vec<(CellKey, f64)> =
        cells.iter().filter_map(|c| Some((c.cell.clone(), c.changes.iter().find(|m| m.metric == metric)?.ratio))).collect();
    let peers: Vec<(&CellKey, f64)> = moved.iter().map(|(k, r)| (k, *r)).collect();
    for c in cells.iter_mut() {
        c.relative = relative_change(&c.cell, &peers, a, b, metric);
        if c.relative.as_ref().is_some_and(|r| r.low.is_some() && r.verdict != c.verdict) {
            c.verdict = Change::NoDetectableChange;
        }
    }
}
