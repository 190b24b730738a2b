//! Peer cost lint: each cell's CPU per request relative to the same stack's `hello` (the cost of
//! its framework alone), set beside the median of that ratio over its peers in the run. A stack
//! whose ratio is an outlier by a large factor does different work than its peers (a pattern
//! compiled per request makes `greeting` far costlier than `hello` while its peers' ratio is ~1),
//! or skips work they do. Warns; it does not disqualify: the verifier's cost check does that.

use crate::records::metric::Metric;
use crate::records::results::CellKey;
use crate::scenario::Scenario;
use crate::statistics::summary::CellSummary;
use serde::{Deserialize, Serialize};

/// The baseline scenario every ratio is taken against.
pub const BASELINE: Scenario = Scenario::Hello;
/// A ratio this many times its peers' median (or this many times below it) is flagged.
pub const OUTLIER_FACTOR: f64 = 3.0;
/// Fewer peers than this make no median worth comparing with (with two, the outlier itself would
/// pull its peers' median up to half its own ratio).
pub const MIN_PEERS: usize = 3;

/// One flagged cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostOutlier {
    /// The cell flagged.
    pub cell: CellKey,
    /// CPU per request of this cell over that of the same stack's `hello`.
    pub ratio: f64,
    /// The median of that ratio over the other stacks that ran both scenarios.
    pub peer_median: f64,
    /// How many peers that median is over.
    pub peers: usize,
}

impl CostOutlier {
    /// One line saying how far the cell is from its peers.
    pub fn message(&self) -> String {
        let more = if self.ratio > self.peer_median { "costlier" } else { "cheaper" };
        format!(
            "{} costs {:.1}x its hello in server CPU per request; the median of {} peers is {:.1}x: {:.1}x {more} than its peers",
            self.cell.scenario,
            self.ratio,
            self.peers,
            self.peer_median,
            (self.ratio / self.peer_median).max(self.peer_median / self.ratio)
        )
    }

    /// What to look at in the stack.
    pub fn advice(&self) -> &'static str {
        if self.ratio > self.peer_median {
            "the stack does more work per request than its peers for this scenario (a pattern compiled or a file read per request?): compare its code with theirs"
        } else {
            "the stack does less work per request than its peers for this scenario (a cached or skipped step?): check it against the contract"
        }
    }
}

/// The outliers among closed-model first steps of rankable cells (one per stack, variant,
/// scenario and worker count).
pub fn cost_outliers(cells: &[CellSummary]) -> Vec<CostOutlier> {
    let ratios: Vec<(&CellKey, f64)> = cells.iter().filter_map(|c| Some((&c.cell, ratio_to_baseline(c, cells)?))).collect();
    ratios
        .iter()
        .filter_map(|&(cell, ratio)| {
            let mut peers: Vec<f64> = ratios
                .iter()
                .filter(|(o, _)| o.scenario == cell.scenario && o.stack != cell.stack && o.workers == cell.workers)
                .map(|&(_, r)| r)
                .collect();
            if peers.len() < MIN_PEERS {
                return None;
            }
            peers.sort_by(f64::total_cmp);
            let n = peers.len();
            let peer_median = if n % 2 == 1 { peers[n / 2] } else { (peers[n / 2 - 1] + peers[n / 2]) / 2.0 };
            let off = (ratio / peer_median).max(peer_median / ratio);
            (off >= OUTLIER_FACTOR).then(|| CostOutlier { cell: cell.clone(), ratio, peer_median, peers: n })
        })
        .collect()
}

/// This cell's CPU per request over its stack's `hello` cell (same variant and workers).
fn ratio_to_baseline(c: &CellSummary, cells: &[CellSummary]) -> Option<f64> {
    // An A/A twin is the same cell again, not a peer.
    let usable = |s: &CellSummary| s.step == 0 && s.target_rate.is_none() && s.rankable() && !s.cell.twin;
    if c.cell.scenario == BASELINE || !usable(c) {
        return None;
    }
    let base = cells.iter().find(|b| {
        usable(b)
            && b.cell.scenario == BASELINE
            && b.cell.stack == c.cell.stack
            && b.cell.variant == c.cell.variant
            && b.cell.workers == c.cell.workers
    })?;
    let (cost, base_cost) = (c.get(Metric::CpuUsPerRequest).median, base.get(Metric::CpuUsPerRequest).median);
    (cost > 0.0 && base_cost > 0.0 && cost.is_finite() && base_cost.is_finite()).then(|| cost / base_cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statistics::summary::Estimate;
    use std::collections::BTreeMap;

    fn cell(stack: &str, scenario: &str, cpu_us: f64) -> CellSummary {
        let e = Estimate { median: cpu_us, ci_low: cpu_us, ci_high: cpu_us, trials: 1, confidence: 0.0 };
        let key = CellKey { stack: stack.into(), scenario: scenario.parse().unwrap(), variant: "sqlite".into(), workers: 1, twin: false };
        CellSummary::plain(key, 0, "main", None, BTreeMap::from([(Metric::CpuUsPerRequest, e)]))
    }

    /// Seed 001's case: a regex compiled per request makes greeting 12x hello; peers are ~1.1x.
    #[test]
    fn a_per_request_regex_compile_is_flagged_against_its_peers() {
        let cells = vec![
            cell("rust/actix", "hello", 8.0),
            cell("rust/actix", "greeting", 96.0),
            cell("go/nethttp", "hello", 10.0),
            cell("go/nethttp", "greeting", 11.0),
            cell("python/django", "hello", 300.0),
            cell("python/django", "greeting", 330.0),
            cell("node/cluster-http", "hello", 40.0),
            cell("node/cluster-http", "greeting", 46.0),
        ];
        let out = cost_outliers(&cells);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].cell.stack, "rust/actix");
        assert!((out[0].ratio - 12.0).abs() < 1e-9 && (out[0].peer_median - 1.1).abs() < 1e-9, "{out:?}");
        assert!(
            out[0].message().contains("greeting costs 12.0x its hello") && out[0].message().contains("costlier"),
            "{}",
            out[0].message()
        );
    }

    #[test]
    fn too_few_peers_or_an_unrankable_cell_flag_nothing() {
        let mut cells = vec![cell("a", "hello", 1.0), cell("a", "json", 50.0), cell("b", "hello", 1.0), cell("b", "json", 2.0)];
        cells.extend([cell("c", "hello", 1.0), cell("c", "json", 2.0)]);
        assert!(cost_outliers(&cells).is_empty(), "two peers are no median");
        cells.extend([cell("d", "hello", 1.0), cell("d", "json", 2.5)]);
        let out = cost_outliers(&cells);
        assert_eq!(out.iter().map(|o| o.cell.stack.as_str()).collect::<Vec<_>>(), ["a"]);
        let died = crate::records::results::LabWarning::ServerDied { exit: "signal: 9".into() };
        cells[1].unrankable.push(crate::records::finding::Finding::of_cell(crate::records::finding::FindingKind::Lab(died)));
        assert!(cost_outliers(&cells).is_empty());
    }
}
