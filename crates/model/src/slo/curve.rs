//! A cell's latency-under-load curve over the launches that measured it: per fraction each
//! value's median over launches, every percentile with its order-statistic interval, and the knee
//! (the highest fraction at which p99 stays within `KNEE_FACTOR` times its lowest-load value) with
//! the range those intervals leave it, or none where too few launches measured it.

use super::{LoadCurve, LoadPoint};
use crate::records::results::{CellKey, TrialRecord};
use crate::statistics::robust::{median_of, CONFIDENCE};
use crate::statistics::summary::Estimate;
use serde::Serialize;
use std::collections::BTreeMap;

/// How far p99 may rise over its value at the lowest fraction before the load is past the knee:
/// three times, so a doubling from ordinary queueing is not yet a knee but a tail that explodes is.
pub const KNEE_FACTOR: f64 = 3.0;

/// One fraction of a cell's curve: every value's median over launches, and each percentile's
/// interval. A launch is the unit: the steps of one launch share its server's start, so they are
/// one value (their median) however many slices of it measured a curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    /// The medians over launches.
    #[serde(flatten)]
    pub median: LoadPoint,
    /// p50 over launches: the median with the order statistics that cover it (see `Estimate`).
    pub p50: Estimate,
    /// p99 over launches.
    pub p99: Estimate,
    /// p99.9 over launches.
    pub p999: Estimate,
}

/// Where the knee may lie given every p99 interval: from the highest fraction up to which every
/// p99 is surely within `KNEE_FACTOR` of the lowest fraction's, to the highest up to which it may
/// be. The two agree when the intervals settle it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KneeRange {
    /// The knee is at least this fraction.
    pub low: f64,
    /// The knee is at most this fraction.
    pub high: f64,
}

/// A cell's curve over the launches that measured it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellCurve {
    /// The cell.
    #[serde(flatten)]
    pub cell: CellKey,
    /// Slices (or trials) that measured a curve.
    pub trials: u32,
    /// Launches among them: the sample size of every interval.
    pub launches: u32,
    /// The median capacity the fractions are of, req/s.
    pub capacity_rps: f64,
    /// One point per fraction, rising.
    pub points: Vec<CurvePoint>,
    /// The knee of the median curve; None when not even the lowest fraction has a p99.
    pub knee: Option<f64>,
    /// Its range from the p99 intervals; None ("not determined here") when some p99 interval
    /// covers less than 95% (fewer than six launches) or the lowest fraction has none.
    pub knee_range: Option<KneeRange>,
}

impl CellCurve {
    /// The knee for a reader: "75%", "50–75%", "≥90%" (p99 held at every fraction), or None when
    /// it is not determined here; with whether it is settled at the top fraction.
    pub fn knee_text(&self, percent: impl Fn(f64) -> String) -> Option<(String, bool)> {
        let r = self.knee_range?;
        let top = self.points.last().map(|p| p.median.fraction);
        Some(match (r.low == r.high, Some(r.high) == top) {
            (true, true) => (format!("≥{}", percent(r.high)), true),
            (false, true) => (format!("≥{}", percent(r.low)), false),
            (true, false) => (percent(r.high), false),
            (false, false) => (format!("{}–{}", percent(r.low), percent(r.high)), false),
        })
    }
}

/// The highest fraction up to which every p99 is within `KNEE_FACTOR` of the first point's.
pub fn knee(points: &[LoadPoint]) -> Option<f64> {
    let base = points.first().map(|p| p.p99_us).filter(|b| b.is_finite() && *b > 0.0)?;
    points.iter().take_while(|p| p.p99_us.is_finite() && p.p99_us <= KNEE_FACTOR * base).last().map(|p| p.fraction)
}

/// The knee's range from the p99 intervals (see `KneeRange`); None when an interval covers less
/// than 95%. Where both intervals cover, the knee of the true curve lies in the range.
pub fn knee_range(points: &[CurvePoint]) -> Option<KneeRange> {
    let first = points.first()?;
    if points.iter().any(|p| p.p99.confidence < CONFIDENCE) || first.p99.ci_low.is_nan() || first.p99.ci_low <= 0.0 {
        return None;
    }
    let (base_low, base_high) = (first.p99.ci_low, first.p99.ci_high);
    let last_while = |within: &dyn Fn(&Estimate) -> bool| {
        points.iter().skip(1).take_while(|p| within(&p.p99)).last().map_or(first.median.fraction, |p| p.median.fraction)
    };
    Some(KneeRange {
        low: last_while(&|e| e.ci_high <= KNEE_FACTOR * base_low),
        high: last_while(&|e| e.ci_low <= KNEE_FACTOR * base_high),
    })
}

/// One curve per cell whose trials carry one, in cell order.
pub fn summarize_curves(trials: &[TrialRecord]) -> Vec<CellCurve> {
    // Cell, then launch: a slice's launch, or a trial's own (it started its server).
    let mut groups: BTreeMap<&CellKey, BTreeMap<(bool, u32), Vec<&LoadCurve>>> = BTreeMap::new();
    for t in trials {
        if let Some(c) = &t.under_load {
            let launch = (t.launch.is_some(), t.launch.unwrap_or(t.trial));
            groups.entry(&t.cell).or_default().entry(launch).or_default().push(c);
        }
    }
    groups.into_iter().map(|(cell, launches)| summarize_cell(cell, &launches.into_values().collect::<Vec<_>>())).collect()
}

/// A launch's one curve: per fraction the median of its curves' values.
fn launch_curve(curves: &[&LoadCurve]) -> LoadCurve {
    let points = fractions(curves.iter().copied()).into_iter().map(|f| median_point(f, &at(curves.iter().copied(), f))).collect();
    LoadCurve { capacity_rps: median_of(&curves.iter().map(|c| c.capacity_rps).collect::<Vec<_>>()), points }
}

fn summarize_cell(cell: &CellKey, launches: &[Vec<&LoadCurve>]) -> CellCurve {
    let per_launch: Vec<LoadCurve> = launches.iter().map(|curves| launch_curve(curves)).collect();
    let points: Vec<CurvePoint> = fractions(per_launch.iter())
        .into_iter()
        .map(|f| {
            let at = at(per_launch.iter(), f);
            let over = |v: fn(&LoadPoint) -> f64| Estimate::from_values(&at.iter().map(|p| v(p)).collect::<Vec<_>>());
            CurvePoint { median: median_point(f, &at), p50: over(|p| p.p50_us), p99: over(|p| p.p99_us), p999: over(|p| p.p999_us) }
        })
        .collect();
    let medians: Vec<LoadPoint> = points.iter().map(|p| p.median).collect();
    CellCurve {
        cell: cell.clone(),
        trials: launches.iter().map(|l| l.len() as u32).sum(),
        launches: launches.len() as u32,
        capacity_rps: median_of(&per_launch.iter().map(|c| c.capacity_rps).collect::<Vec<_>>()),
        knee: knee(&medians),
        knee_range: knee_range(&points),
        points,
    }
}

/// Every fraction the curves measured, rising.
fn fractions<'c>(curves: impl Iterator<Item = &'c LoadCurve>) -> Vec<f64> {
    let mut f: Vec<f64> = curves.flat_map(|c| c.points.iter().map(|p| p.fraction)).collect();
    f.sort_by(f64::total_cmp);
    f.dedup();
    f
}

/// Each curve's point at fraction `f`, where it has one.
fn at<'c>(curves: impl Iterator<Item = &'c LoadCurve>, f: f64) -> Vec<&'c LoadPoint> {
    curves.filter_map(|c| c.points.iter().find(|p| p.fraction == f)).collect()
}

/// The point of medians at fraction `f` (errors summed).
fn median_point(fraction: f64, at: &[&LoadPoint]) -> LoadPoint {
    let of = |v: fn(&LoadPoint) -> f64| median_of(&at.iter().map(|p| v(p)).collect::<Vec<_>>());
    let cpu: Vec<f64> = at.iter().filter_map(|p| p.cpu_cores).collect();
    LoadPoint {
        fraction,
        offered_rps: of(|p| p.offered_rps),
        achieved_rps: of(|p| p.achieved_rps),
        p50_us: of(|p| p.p50_us),
        p99_us: of(|p| p.p99_us),
        p999_us: of(|p| p.p999_us),
        errors: at.iter().map(|p| p.errors).sum(),
        cpu_cores: (!cpu.is_empty()).then(|| median_of(&cpu)),
    }
}

#[cfg(test)]
#[path = "curve_tests.rs"]
mod tests;
