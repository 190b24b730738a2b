//! The variance components of a block-scheduled run, from its own slices: how much a cell's
//! requests/s moves from slice to slice within a launch, from launch to launch, and how much of
//! that survives pairing (the A/A twin against its original, block by block). They say where the
//! run's noise lives and so what more of it would buy: more blocks narrow the first, more launches
//! the second, and only the third limits a paired ratio.

use bakeoff_model::metric::Metric;
use bakeoff_model::results::{CellKey, TrialRecord};
use serde::Serialize;
use std::collections::BTreeMap;

/// The run's components, each the median over its cells of a standard deviation of ln(requests/s),
/// as a fraction (0.03 = 3%).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Components {
    /// Cells that had at least two launches of at least two slices each.
    pub cells: usize,
    /// Slice to slice within a launch (pooled over the launches).
    pub within_launch: f64,
    /// Between the launches' means.
    pub between_launches: f64,
    /// The twin against its original, block by block; None without an A/A twin.
    pub paired: Option<f64>,
}

impl Components {
    /// The sentence every human-facing format prints.
    pub fn sentence(&self) -> String {
        let paired =
            self.paired.map_or(String::new(), |p| format!("; the A/A twin against its original, block by block: {:.1}%", 100.0 * p));
        format!(
            "variance components of requests/s (sd, median over {} cells): slice to slice within a launch {:.1}%, launch to launch {:.1}%{paired}",
            self.cells,
            100.0 * self.within_launch,
            100.0 * self.between_launches
        )
    }
}

/// None unless some cell was measured in blocks over two or more launches.
pub fn components(trials: &[TrialRecord]) -> Option<Components> {
    let mut by_cell: BTreeMap<&CellKey, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.load.steps.len() == 1) {
        let (Some(launch), v) = (t.launch, Metric::RequestsPerSec.of(t, 0)) else { continue };
        if v > 0.0 && v.is_finite() {
            by_cell.entry(&t.cell).or_default().entry(launch).or_default().push(v.ln());
        }
    }
    let mut within = Vec::new();
    let mut between = Vec::new();
    for launches in by_cell.values() {
        let usable: Vec<&Vec<f64>> = launches.values().filter(|v| v.len() >= 2).collect();
        if usable.len() < 2 {
            continue;
        }
        let pooled: f64 = usable.iter().map(|v| sum_of_squares(v)).sum::<f64>();
        let dof: usize = usable.iter().map(|v| v.len() - 1).sum();
        within.push((pooled / dof as f64).sqrt());
        let means: Vec<f64> = usable.iter().map(|v| mean(v)).collect();
        between.push((sum_of_squares(&means) / (means.len() - 1) as f64).sqrt());
    }
    let cells = within.len();
    (cells > 0).then(|| Components { cells, within_launch: median(within), between_launches: median(between), paired: twin_spread(trials) })
}

/// The standard deviation of ln(twin / original) over the blocks both ran in.
fn twin_spread(trials: &[TrialRecord]) -> Option<f64> {
    let twin = trials.iter().find(|t| t.cell.twin && t.launch.is_some())?.cell.clone();
    let original = CellKey { twin: false, ..twin.clone() };
    let pairs = bakeoff_model::paired::pairs_between(trials, &twin, &original, Metric::RequestsPerSec, 0);
    let logs: Vec<f64> = pairs.iter().map(|p| p.log_ratio).collect();
    (logs.len() >= 2).then(|| (sum_of_squares(&logs) / (logs.len() - 1) as f64).sqrt())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The sum of squared deviations from the mean.
fn sum_of_squares(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic;
    use hdrhistogram::Histogram;

    fn slice(stack: &str, twin: bool, block: u32, launch: u32, rps: f64) -> TrialRecord {
        let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
        h.record_n(500, 100).unwrap();
        let mut t = synthetic::trial(stack, "hello", block, &[(None, h)]);
        t.cell.twin = twin;
        t.load.steps[0].requests_per_sec = rps;
        t.launch = Some(launch);
        t
    }

    #[test]
    fn slices_launches_and_pairs_are_told_apart() {
        // Two launches of three blocks: launch 1 runs 10% slower; within a launch the slices swing
        // ±2%; the twin follows its original exactly (up to 0.1%) in every block.
        let mut trials = Vec::new();
        for (launch, level) in [(0, 100_000.0), (1, 90_000.0)] {
            for (i, swing) in [1.02, 0.98, 1.0].iter().enumerate() {
                let block = launch * 3 + i as u32 + 1;
                trials.push(slice("a", false, block, launch, level * swing));
                trials.push(slice("a", true, block, launch, level * swing * if i % 2 == 0 { 1.001 } else { 0.999 }));
            }
        }
        let c = components(&trials).unwrap();
        assert_eq!(c.cells, 2);
        assert!((0.015..0.025).contains(&c.within_launch), "{c:?}");
        assert!((0.06..0.09).contains(&c.between_launches), "ln(100/90)/√2 = 0.074: {c:?}");
        assert!(c.paired.unwrap() < 0.0015, "{c:?}");
        assert!(c.sentence().contains("within a launch 2.") && c.sentence().contains("block by block: 0.1%"), "{}", c.sentence());
        // Trials that started their own servers carry no launch: nothing to split.
        let plain: Vec<TrialRecord> = trials.into_iter().map(|mut t| (t.launch = None, t).1).collect();
        assert!(components(&plain).is_none());
    }
}
