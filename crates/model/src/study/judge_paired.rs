//! A claim on two cells of one scenario that the block schedule measured side by side: judged on
//! their per-block ratios (paired, as the report's "vs best"), where that reaches the coverage a
//! verdict needs. Five or more blocks do (93.75%); fewer, or trials that share no blocks, leave the
//! claim to the unpaired ratio of their trials, which 3 v 3 trials already take to 90%.

use super::claims::Check;
use crate::records::results::CellKey;
use crate::statistics::paired::{paired_ratio_at, Pair, PairedRatio};
use crate::statistics::summary::{CellSummary, Metric};

/// The blocks in which two cells were measured side by side, as pairs of a metric in one step
/// (`crate::statistics::pairing::pairs_between`): none for trials that started their own servers apart.
pub type PairedValues<'a> = &'a dyn Fn(&CellKey, &CellKey, usize, Metric) -> Vec<Pair>;

/// The paired ratio first cell / second cell of a two-cell comparison, with its interval at
/// `confidence`, when the check compares two cells of one scenario and step on `metric` and their
/// shared blocks reach `min_coverage`.
pub(super) fn paired_claim_ratio(
    check: &Check,
    found: &[&CellSummary],
    metric: Metric,
    pairs: PairedValues<'_>,
    (min_coverage, confidence): (f64, f64),
) -> Option<PairedRatio> {
    if !matches!(check, Check::Faster { .. } | Check::Ratio { .. } | Check::Memory { .. }) || found.len() != 2 {
        return None;
    }
    let (a, b) = (found[0], found[1]);
    if a.cell.scenario != b.cell.scenario || a.step != b.step {
        return None;
    }
    let pairs = pairs(&a.cell, &b.cell, a.step, metric);
    let r = (pairs.len() >= 2).then(|| paired_ratio_at(&pairs, confidence)).flatten()?;
    (r.confidence >= min_coverage - 1e-9 && r.low.is_finite() && r.high.is_finite()).then_some(r)
}

/// (ratio, low, high, coverage) of num / den from the paired ratio of cell 0 / cell 1.
pub(super) fn oriented(r: &PairedRatio, num: usize) -> (f64, f64, f64, f64) {
    if num == 0 {
        (r.ratio, r.low, r.high, r.confidence)
    } else {
        (1.0 / r.ratio, 1.0 / r.high, 1.0 / r.low, r.confidence)
    }
}

/// "6 blocks paired over 3 launches".
pub(super) fn describe(r: &PairedRatio) -> String {
    let launches = if r.launches == 1 { "1 launch".to_string() } else { format!("{} launches", r.launches) };
    format!("{} blocks paired over {launches}", r.blocks)
}
