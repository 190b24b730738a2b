//! The variance components of a block-scheduled run, from its own slices: how much a cell's
//! requests/s moves from slice to slice within a launch, from launch to launch, and how much of
//! that survives pairing (the A/A twin against its original, block by block). They say where the
//! run's noise lives and so what more of it would buy: more blocks narrow the first, more launches
//! the second, and only the third limits a paired ratio.

use bakeoff_model::plan::schedule::{turns_factor, Lengthening};
use bakeoff_model::records::metric::Metric;
use bakeoff_model::records::results::{CellKey, TrialRecord};
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

/// A block-scheduled cell whose slices the run lengthened: by how much, and what its shorter
/// slices showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lengthened {
    pub cell: CellKey,
    /// Its longest slice over the run's usual one (the median of all slices).
    pub factor: f64,
    pub why: Lengthening,
}

impl Lengthened {
    /// The line every human-facing format prints.
    pub fn sentence(&self) -> String {
        format!(
            "longer slices: {} {}, so it got slices {:.1}x as long from its next launch on",
            self.cell.label(),
            self.why.reason(),
            self.factor
        )
    }
}

/// Block-schedule cells with a slice at least 1.5 times the run's usual slice, with that quotient
/// and why: a cell whose shorter slices left connections unanswered was lengthened for that,
/// any other for varying more on its own than its peers.
pub fn lengthened(trials: &[TrialRecord]) -> Vec<Lengthened> {
    let slices: Vec<&TrialRecord> = trials.iter().filter(|t| t.launch.is_some() && !t.load.steps.is_empty()).collect();
    let length = |t: &TrialRecord| t.load.steps[0].duration_s;
    let mut lengths: Vec<f64> = slices.iter().map(|t| length(t)).collect();
    lengths.sort_by(f64::total_cmp);
    let Some(&usual) = lengths.get(lengths.len() / 2) else { return Vec::new() };
    let mut longest: BTreeMap<&CellKey, f64> = BTreeMap::new();
    for t in &slices {
        let m = longest.entry(&t.cell).or_insert(length(t));
        *m = m.max(length(t));
    }
    // Too short to answer every connection: its short slices starved, or its connections' turns
    // (a closed loop's connections over its rate) need slices this long.
    let starved_short = |cell: &CellKey| {
        slices.iter().filter(|t| t.cell == *cell).any(|t| {
            let starved = t.load.warnings.iter().any(|w| matches!(w, bakeoff_load::Warning::StarvedConnections { .. }));
            let step = &t.load.steps[0];
            let turns = step.target_rate.is_none() && turns_factor(step.connections, step.requests_per_sec, usual) >= 2;
            (starved && length(t) < 1.5 * usual) || turns
        })
    };
    longest
        .into_iter()
        .map(|(c, d)| (c, d / usual))
        .filter(|(_, q)| *q >= 1.5)
        .map(|(c, factor)| {
            let why = if starved_short(c) { Lengthening::StarvedConnections } else { Lengthening::OwnSpread };
            Lengthened { cell: c.clone(), factor, why }
        })
        .collect()
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
    let pairs = bakeoff_model::statistics::pairing::pairs_between(trials, &twin, &original, Metric::RequestsPerSec, 0);
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

    #[test]
    fn a_lengthened_cell_is_listed_with_its_factor_and_why() {
        // Three cells of 1 s slices over two launches; `b` measures 2 s in its second launch after
        // starving in its first, `c` 4 s in its second for its own spread, `a` keeps 1 s.
        let mut trials = Vec::new();
        for launch in 0..2 {
            for (stack, later) in [("a", 1.0), ("b", 2.0), ("c", 4.0)] {
                let mut t = slice(stack, false, launch + 1, launch, 1000.0);
                t.load.steps[0].duration_s = if launch == 0 { 1.0 } else { later };
                if stack == "b" && launch == 0 {
                    t.load.warnings.push(bakeoff_load::Warning::StarvedConnections { step: "s".into(), starved: 2, connections: 8 });
                }
                trials.push(t);
            }
        }
        let found: Vec<(String, f64, Lengthening)> = lengthened(&trials).into_iter().map(|l| (l.cell.stack, l.factor, l.why)).collect();
        assert_eq!(found, [("b".into(), 2.0, Lengthening::StarvedConnections), ("c".into(), 4.0, Lengthening::OwnSpread)]);
        let line = lengthened(&trials)[0].sentence();
        assert!(line.contains("too short to answer every connection") && line.contains("2.0x"), "{line}");
        // `d`, 64 connections answered 22 times a second (a turn of 2.9 s), measured 6 s slices
        // from its first launch on, sized from its warm-up: no short slice of it starved, yet
        // its connections' turns are why.
        let mut trials = Vec::new();
        for launch in 0..2 {
            for (stack, length, rps) in [("a", 1.0, 1000.0), ("e", 1.0, 1000.0), ("d", 6.0, 22.0)] {
                let mut t = slice(stack, false, launch + 1, launch, rps);
                t.load.steps[0].duration_s = length;
                t.load.steps[0].connections = 64;
                trials.push(t);
            }
        }
        let found: Vec<(String, f64, Lengthening)> = lengthened(&trials).into_iter().map(|l| (l.cell.stack, l.factor, l.why)).collect();
        assert_eq!(found, [("d".into(), 6.0, Lengthening::StarvedConnections)]);
    }
}
