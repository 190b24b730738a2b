//! Concurrency sweeps: a cell measured at rising connection counts (a study's `conn_ladder`, as ab
//! runs at rising `-c`) read as one series per cell: throughput, mean latency and its spread per
//! level, each level's median with its interval beside the best trial (articles that ran "best of
//! 3" published that figure). Decided here once; every format lays it out.

use crate::numbers::{estimate, grouped, latency};
use crate::table::Table;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::summary::{CellSummary, Estimate, Metric};
use serde::Serialize;

/// The sweeps of one scenario: every cell of it measured at two or more connection counts.
#[derive(Debug, Clone, Serialize)]
pub struct SweepView {
    pub scenario: Scenario,
    pub series: Vec<SweepSeries>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepSeries {
    #[serde(flatten)]
    pub cell: CellKey,
    pub levels: Vec<SweepLevel>,
}

/// One level of a sweep: its connections, the medians over trials with their intervals, and the
/// best trial's requests/s.
#[derive(Debug, Clone, Serialize)]
pub struct SweepLevel {
    pub connections: u32,
    pub requests_per_sec: Estimate,
    pub best_requests_per_sec: f64,
    pub mean_us: Estimate,
    pub p99_us: Estimate,
    /// The latency's standard deviation: the article's "stability" of a level.
    pub stddev_us: Estimate,
    /// The level may be ranked (no errors beyond the limit, nothing unanswered, ...).
    pub rankable: bool,
}

/// Reads one metric's estimate from a level.
pub type LevelEstimate = fn(&SweepLevel) -> &Estimate;

/// The metrics a sweep is drawn with, in the order HTML charts them: each with its name and the
/// level's estimate of it.
pub const CHARTED: [(Metric, &str, LevelEstimate); 3] = [
    (Metric::RequestsPerSec, "requests/s", |l| &l.requests_per_sec),
    (Metric::MeanUs, "mean latency", |l| &l.mean_us),
    (Metric::StddevUs, "latency spread (stddev)", |l| &l.stddev_us),
];

/// Every scenario's sweeps, in the order of `scenarios`; scenarios without one are left out.
pub fn sweeps(scenarios: &[Scenario], cells: &[CellSummary], trials: &[TrialRecord]) -> Vec<SweepView> {
    scenarios
        .iter()
        .filter_map(|&scenario| {
            let mut keys: Vec<&CellKey> = cells.iter().filter(|c| c.cell.scenario == scenario).map(|c| &c.cell).collect();
            keys.dedup();
            let series: Vec<SweepSeries> = keys.into_iter().filter_map(|k| series(k, cells, trials)).collect();
            (!series.is_empty()).then_some(SweepView { scenario, series })
        })
        .collect()
}

/// A cell's closed-model steps as levels, when they are two or more distinct connection counts.
fn series(cell: &CellKey, cells: &[CellSummary], trials: &[TrialRecord]) -> Option<SweepSeries> {
    let of_cell: Vec<&TrialRecord> = trials.iter().filter(|t| &t.cell == cell).collect();
    let connections = |step: usize| of_cell.iter().find_map(|t| t.load.steps.get(step)).map(|s| s.connections);
    let mut levels: Vec<SweepLevel> = cells
        .iter()
        .filter(|c| &c.cell == cell && c.target_rate.is_none())
        .filter_map(|c| {
            let best = of_cell.iter().filter_map(|t| t.load.steps.get(c.step)).map(|s| s.requests_per_sec).fold(f64::NAN, f64::max);
            Some(SweepLevel {
                connections: connections(c.step)?,
                requests_per_sec: c.get(Metric::RequestsPerSec),
                best_requests_per_sec: best,
                mean_us: c.get(Metric::MeanUs),
                p99_us: c.get(Metric::P99Us),
                stddev_us: c.get(Metric::StddevUs),
                rankable: c.rankable(),
            })
        })
        .collect();
    levels.sort_by_key(|l| l.connections);
    levels.dedup_by_key(|l| l.connections);
    (levels.len() >= 2).then(|| SweepSeries { cell: cell.clone(), levels })
}

/// One row per cell and level: the medians with their intervals, the best trial, and whether the
/// level is ranked.
pub fn table(s: &SweepView) -> Table {
    let mut t =
        Table::new(&["stack", "variant", "workers", "connections", "req/s (median, interval)", "best trial", "mean", "p99", "stddev"]);
    for series in &s.series {
        for l in &series.levels {
            let mut rps = estimate(Metric::RequestsPerSec, &l.requests_per_sec);
            if !l.rankable {
                rps.push_str(" (not ranked)");
            }
            t.push(vec![
                series.cell.stack.clone(),
                series.cell.variant.clone(),
                series.cell.workers.to_string(),
                l.connections.to_string(),
                rps,
                grouped(l.best_requests_per_sec),
                latency(l.mean_us.median),
                latency(l.p99_us.median),
                latency(l.stddev_us.median),
            ]);
        }
    }
    t
}

/// The sweep's heading in every format.
pub fn title(s: &SweepView) -> String {
    format!("{}: concurrency sweep (each level's median over trials, and the best trial)", s.scenario)
}
