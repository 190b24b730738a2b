//! What a run has measured so far, for deciding what to measure next: each cell's values of the
//! primary metric (with the block and launch each came from), the cells that failed and those whose
//! load generator was the bottleneck; and whether a cell, or a scenario's paired ratios, still
//! miss the precision target.

use bakeoff_model::paired::{paired_ratio, Pair};
use bakeoff_model::results::{CellKey, TrialRecord};
use bakeoff_model::summary::{Estimate, Metric};
use std::collections::{BTreeMap, BTreeSet};

/// One measured value of a cell: the block (trial number) and launch it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measured {
    pub(crate) block: u32,
    pub(crate) launch: u32,
    pub(crate) value: f64,
}

/// The primary metric's values of every cell so far, and the cells that failed (never retried).
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) values: BTreeMap<CellKey, Vec<Measured>>,
    pub(crate) failed: BTreeSet<CellKey>,
    /// Cells whose load generator ran at its ceiling: their requests/s is a lower bound that more
    /// trials cannot tighten, so precision rounds do not chase them.
    pub(crate) client_bound: BTreeSet<CellKey>,
    /// Cells that used CPU while idle beside the others in a block schedule: measured alone, a
    /// launch of their own, from their next launch on.
    pub(crate) alone: BTreeSet<CellKey>,
    pub(crate) trials_done: u32,
}

impl Tally {
    fn estimate(&self, key: &CellKey) -> Option<Estimate> {
        self.values.get(key).map(|v| Estimate::from_values(&v.iter().map(|m| m.value).collect::<Vec<_>>()))
    }

    pub(crate) fn meets(&self, key: &CellKey, target: f64) -> bool {
        self.estimate(key).is_some_and(|e| e.meets(target))
    }

    /// Whether the cell's values can still be chased: it has not failed, and its throughput is not
    /// the client's ceiling (when that is what is ranked).
    fn chased(&self, key: &CellKey, metric: Metric) -> bool {
        let capped = metric == Metric::RequestsPerSec && self.client_bound.contains(key);
        !self.failed.contains(key) && !capped
    }

    /// Whether another trial of the cell could help it reach `target`: it is chased and has not
    /// met it.
    pub(crate) fn pending(&self, key: &CellKey, target: f64, metric: Metric) -> bool {
        self.chased(key, metric) && !self.meets(key, target)
    }

    /// The widest relative half-width among the ratios a scenario ranks, which a scenario
    /// measured block by block must bring within the precision target: each chased cell against
    /// the best of them (and an A/A twin against its original), paired by block. A scenario of a
    /// single chased cell is judged on that cell's own interval, as there is no ratio.
    /// Infinite while a ratio has fewer than two pairs (or a lone cell no real 95% interval); None
    /// when no cell is chased.
    pub(crate) fn widest_ratio(&self, keys: &[CellKey], metric: Metric) -> Option<f64> {
        let chased: Vec<&CellKey> = keys.iter().filter(|k| self.chased(k, metric)).collect();
        let speed = |k: &CellKey| {
            let m = self.estimate(k).map_or(f64::NAN, |e| e.median);
            if metric.higher_is_better() {
                m
            } else {
                1.0 / m
            }
        };
        let originals: Vec<&CellKey> = chased.iter().copied().filter(|k| !k.twin).collect();
        let best = originals.iter().copied().max_by(|a, b| speed(a).total_cmp(&speed(b)))?;
        if chased.len() == 1 {
            let own = self.estimate(best)?;
            return Some(if own.confidence >= bakeoff_model::robust::CONFIDENCE { own.relative_half_width() } else { f64::INFINITY });
        }
        let widths = chased.iter().filter(|k| *k != &best).map(|k| {
            let reference = if k.twin { CellKey { twin: false, ..(*k).clone() } } else { best.clone() };
            let pairs = self.pairs(k, &reference);
            if pairs.len() < 2 {
                return f64::INFINITY;
            }
            paired_ratio(&pairs).map_or(f64::INFINITY, |r| r.relative_half_width())
        });
        Some(widths.fold(0.0, f64::max))
    }

    /// The blocks both cells were measured in, as pairs of their values.
    fn pairs(&self, cell: &CellKey, reference: &CellKey) -> Vec<Pair> {
        let (Some(a), Some(b)) = (self.values.get(cell), self.values.get(reference)) else { return Vec::new() };
        a.iter().filter_map(|m| Pair::of(m.launch, m.value, b.iter().find(|r| r.block == m.block)?.value)).collect()
    }

    /// Counts a stored trial and keeps its value of `metric` (its last step's).
    pub(crate) fn record(&mut self, key: &CellKey, record: &TrialRecord, metric: Metric) {
        self.trials_done += 1;
        if record.load.warnings.iter().any(|w| matches!(w, bakeoff_load::Warning::ClientSaturated { .. })) {
            self.client_bound.insert(key.clone());
        }
        if let Some(step) = record.load.steps.len().checked_sub(1) {
            let m = Measured { block: record.trial, launch: record.launch.unwrap_or(record.trial), value: metric.of(record, step) };
            self.values.entry(key.clone()).or_default().push(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::scenario::Scenario;

    fn key(stack: &str, twin: bool) -> CellKey {
        CellKey { stack: stack.into(), scenario: Scenario::Hello, variant: "default".into(), workers: 1, twin }
    }

    /// Whether the scenario of `keys` still misses ±5%.
    fn misses_5_percent(t: &Tally, keys: &[CellKey], metric: Metric) -> bool {
        t.widest_ratio(keys, metric).is_some_and(|w| w > 0.05)
    }

    /// A tally of cells measured in the same blocks, each block's values given per cell.
    fn tally(cells: &[(&CellKey, &[f64])]) -> Tally {
        let mut t = Tally::default();
        for (k, values) in cells {
            let m = values.iter().enumerate().map(|(i, &v)| Measured { block: i as u32 + 1, launch: i as u32 / 3, value: v });
            t.values.insert((*k).clone(), m.collect());
        }
        t
    }

    #[test]
    fn a_ratio_steady_block_by_block_meets_a_target_its_cells_alone_miss() {
        let (a, b) = (key("a", false), key("b", false));
        // The machine swings 30% from block to block; b is always 0.8 of a in the same block.
        let swing = [100.0, 130.0, 90.0, 125.0, 95.0, 120.0];
        let steady: Vec<f64> = swing.iter().map(|v| 0.8 * v).collect();
        let t = tally(&[(&a, &swing), (&b, &steady)]);
        assert!(!t.meets(&a, 0.05) && !t.meets(&b, 0.05), "each cell's own interval is wide");
        assert!(!misses_5_percent(&t, &[a.clone(), b.clone()], Metric::RequestsPerSec));
        // The same values in a shuffled order pair badly: the ratio misses the target.
        let shuffled = [0.8 * 130.0, 0.8 * 90.0, 0.8 * 125.0, 0.8 * 100.0, 0.8 * 120.0, 0.8 * 95.0];
        let t = tally(&[(&a, &swing), (&b, &shuffled)]);
        assert!(misses_5_percent(&t, &[a, b], Metric::RequestsPerSec));
    }

    #[test]
    fn a_twin_pairs_with_its_original_and_a_capped_or_failed_cell_is_not_chased() {
        let (a, twin, c) = (key("a", false), key("a", true), key("c", false));
        let swing = [100.0, 130.0, 90.0, 125.0, 95.0, 120.0];
        let wild = [50.0, 200.0, 60.0, 180.0, 40.0, 150.0];
        let mut t = tally(&[(&a, &swing), (&twin, &swing), (&c, &wild)]);
        assert!(misses_5_percent(&t, &[a.clone(), twin.clone(), c.clone()], Metric::RequestsPerSec));
        t.client_bound.insert(c.clone());
        assert!(!misses_5_percent(&t, &[a.clone(), twin.clone(), c.clone()], Metric::RequestsPerSec), "capped: not chased");
        // Its CPU per request is still chased: the ceiling caps requests/s only.
        assert!(misses_5_percent(&t, &[a.clone(), twin.clone(), c.clone()], Metric::CpuUsPerRequest));
        t.failed.insert(c.clone());
        assert!(!misses_5_percent(&t, &[a, twin, c], Metric::CpuUsPerRequest));
    }

    #[test]
    fn a_lone_cell_is_judged_on_its_own_interval() {
        let a = key("a", false);
        assert!(misses_5_percent(
            &tally(&[(&a, &[100.0, 130.0, 90.0, 125.0, 95.0, 120.0])]),
            std::slice::from_ref(&a),
            Metric::RequestsPerSec
        ));
        assert!(!misses_5_percent(&tally(&[(&a, &[100.0, 100.5, 99.8, 100.2, 99.9, 100.1])]), &[a], Metric::RequestsPerSec));
    }
}
