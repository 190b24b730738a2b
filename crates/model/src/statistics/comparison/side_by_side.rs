//! Two cells of one run measured side by side (A/B: a base and a head build of one server, or two
//! stacks): each compared metric of B over A, paired block by block, with its interval and its
//! verdict, and the gate `bench --fail-if-slower` reads. Both cells meet the machine's drift in the
//! same blocks, so the pairing cancels what two runs and `compare` cannot.

use super::{verdict_of, Change, MetricChange};
use crate::records::metric::Metric;
use crate::records::results::{CellKey, TrialRecord};
use crate::statistics::paired::{paired_ratio, PAIRED_CONFIDENCE};
use crate::statistics::pairing::pair_choice_between;
use crate::statistics::summary::CellSummary;
use serde::Serialize;

/// What an A/B compares, in this order: throughput, CPU per request, the tail and memory.
pub const SIDE_BY_SIDE: [Metric; 4] = [Metric::RequestsPerSec, Metric::CpuUsPerRequest, Metric::P99Us, Metric::PeakRssMib];

/// The metrics `--fail-if-slower` gates when it names none: the two that say "slower".
pub const GATED_BY_DEFAULT: [Metric; 2] = [Metric::RequestsPerSec, Metric::CpuUsPerRequest];

/// B against A on one scenario of one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SideBySide {
    /// The base (A).
    pub a: CellKey,
    /// The cell compared with it (B).
    pub b: CellKey,
    /// One per metric of [`SIDE_BY_SIDE`], in that order: B / A with its paired interval.
    pub changes: Vec<MetricChange>,
    /// Blocks and launches the throughput's ratio was paired over (0 where none were shared).
    pub blocks: u32,
    /// Launches those blocks came from.
    pub launches: u32,
}

/// A threshold of `--fail-if-slower`: B worse than A on `metric` by more than `fraction`, proven
/// by the interval (its bound nearest to no change lies beyond).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gate {
    /// The metric gated.
    pub metric: Metric,
    /// 0.03 for 3%.
    pub fraction: f64,
}

impl SideBySide {
    /// B over A on `metric`.
    pub fn change(&self, metric: Metric) -> Option<&MetricChange> {
        self.changes.iter().find(|c| c.metric == metric)
    }

    /// The gates B fails: worse than A beyond noise by more than the gate's fraction.
    pub fn failed<'g>(&self, gates: &'g [Gate]) -> Vec<(&'g Gate, &MetricChange)> {
        gates
            .iter()
            .filter_map(|g| self.change(g.metric).map(|c| (g, c)))
            .filter(|(g, c)| c.verdict == Change::Slower && c.proven_regression() > g.fraction)
            .collect()
    }
}

/// B's headline row against A's on every metric of [`SIDE_BY_SIDE`]: the Hodges-Lehmann ratio of
/// their per-block values with its 95% interval (over launches where there are two or more), from
/// the slices the joint/solo rule chooses, as a scenario's ranking pairs them. A metric with fewer
/// than two shared blocks, or too few for a 95% interval, has its medians' quotient and no interval:
/// no verdict; so has one that was not measured (zero on either side).
pub fn side_by_side(trials: &[TrialRecord], a: &CellSummary, b: &CellSummary) -> SideBySide {
    let mut blocks = (0, 0);
    let changes = SIDE_BY_SIDE
        .iter()
        .map(|&metric| {
            let choice = pair_choice_between(trials, &b.cell, &a.cell, metric, b.step);
            let paired = (choice.pairs.len() >= 2).then(|| paired_ratio(&choice.pairs)).flatten();
            if metric == SIDE_BY_SIDE[0] {
                blocks = paired.as_ref().map_or((0, 0), |p| (p.blocks, p.launches));
            }
            let (median_a, median_b) = (a.get(metric).median, b.get(metric).median);
            // A server whose CPU and memory were not measured (`--url` without `--pid`) reads 0.
            let measured = median_a > 0.0 && median_b > 0.0;
            let interval = paired.as_ref().filter(|p| measured && p.confidence >= PAIRED_CONFIDENCE).map(|p| (p.low, p.high));
            let ratio = paired.as_ref().map_or(median_b / median_a, |p| p.ratio);
            let (low, high) = (interval.map(|i| i.0), interval.map(|i| i.1));
            MetricChange { metric, median_a, median_b, ratio, low, high, verdict: verdict_of(metric, interval) }
        })
        .collect();
    SideBySide { a: a.cell.clone(), b: b.cell.clone(), changes, blocks: blocks.0, launches: blocks.1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(metric: Metric, ratio: f64, low: f64, high: f64) -> MetricChange {
        let interval = Some((low, high));
        MetricChange {
            metric,
            median_a: 100.0,
            median_b: 100.0 * ratio,
            ratio,
            low: Some(low),
            high: Some(high),
            verdict: verdict_of(metric, interval),
        }
    }

    fn pair(changes: Vec<MetricChange>) -> SideBySide {
        let key = |stack: &str| CellKey {
            stack: stack.into(),
            scenario: crate::scenario::Scenario::Hello,
            variant: "default".into(),
            workers: 1,
            twin: false,
        };
        SideBySide { a: key("adhoc/base"), b: key("adhoc/head"), changes, blocks: 8, launches: 4 }
    }

    /// A gate fails only where the whole interval is beyond it on the worse side: CPU per request
    /// 1.05 (1.04-1.06) fails 3%; 1.05 (1.02-1.08) does not (it may be 2% worse); requests/s
    /// 0.95 (0.93-0.96) fails 3%; a better B never fails.
    #[test]
    fn a_gate_fails_only_on_an_interval_wholly_beyond_it_on_the_worse_side() {
        let gates = [Gate { metric: Metric::CpuUsPerRequest, fraction: 0.03 }, Gate { metric: Metric::RequestsPerSec, fraction: 0.03 }];
        let worse = pair(vec![change(Metric::CpuUsPerRequest, 1.05, 1.04, 1.06), change(Metric::RequestsPerSec, 0.95, 0.93, 0.96)]);
        assert_eq!(worse.failed(&gates).len(), 2);
        let unsure = pair(vec![change(Metric::CpuUsPerRequest, 1.05, 1.02, 1.08), change(Metric::RequestsPerSec, 0.99, 0.97, 1.01)]);
        assert!(unsure.failed(&gates).is_empty());
        assert_eq!(unsure.change(Metric::CpuUsPerRequest).unwrap().verdict, Change::Slower, "slower, but not by 3% for sure");
        let better = pair(vec![change(Metric::CpuUsPerRequest, 0.90, 0.88, 0.92), change(Metric::RequestsPerSec, 1.10, 1.08, 1.12)]);
        assert!(better.failed(&gates).is_empty());
        assert!(better.changes.iter().all(|c| c.verdict == Change::Faster));
    }
}
