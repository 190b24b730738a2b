//! The proxy study view (seed 004): for cells of scenario "proxy", latency percentiles against the
//! target rate of each ramp step, each proxy's overhead over the baseline (stack "c/baseline": nginx
//! served directly) at the same step, and maximum throughput from the closed-model steps.
//!
//! Max throughput rule: a proxy cell's steps without a target rate (closed model) measure how much it
//! can serve; its maximum is the best median req/s among them. The lab has one "proxy" scenario, and
//! a variant names a stack's build, so neither a "proxy-max" scenario nor a "max" variant is needed.

use crate::sections::overhead::{overhead, pooled, Overhead, Percentiles, TrialPairs};
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::summary::{CellSummary, Estimate, Metric, RATE_HELD};
use bakeoff_model::study::ProxyPlacement;
use std::collections::BTreeMap;

/// The stack every proxy is compared with: nginx served directly.
pub const BASELINE_STACK: &str = "c/baseline";

/// The proxy study of a run: each cell's latencies by rate, the overheads and maximum throughputs.
pub struct ProxyView {
    /// Baseline first, then proxies by name.
    pub lines: Vec<RampLine>,
    /// One row per proxy cell and ramp step that the baseline also ran, where both held the rate.
    pub overheads: Vec<OverheadRow>,
    /// Steps left out of `overheads` because the proxy or the baseline fell short of the target rate
    /// (their latencies measure the client's queue, not the proxy).
    pub fell_short: Vec<ShortStep>,
    /// Baseline first, then by throughput.
    pub max: Vec<MaxThroughput>,
    /// Where the proxy, nginx and the load generator ran; None for a run that recorded no CPU sets.
    pub placement: Option<Placement>,
}

/// The run's proxy placement and the CPU sets it resolved to.
#[derive(serde::Serialize)]
pub struct Placement {
    /// Whether the proxy shared nginx's CPU or had one of its own.
    pub placement: ProxyPlacement,
    /// The CPUs the server side (proxy and nginx) ran on.
    pub server_cpus: Vec<usize>,
    /// The CPUs the load generator ran on.
    pub client_cpus: Vec<usize>,
}

impl Placement {
    /// From the run's settings; a run recorded before the setting existed placed nginx beside the proxy.
    pub fn of(settings: &serde_json::Value) -> Option<Placement> {
        let load = settings.get("load")?;
        let cpus = |key: &str| -> Option<Vec<usize>> { serde_json::from_value(load.get(key)?.clone()).ok() };
        let placement = load.get("proxy_placement").and_then(|p| serde_json::from_value(p.clone()).ok()).unwrap_or_default();
        Some(Placement { placement, server_cpus: cpus("server_cpus")?, client_cpus: cpus("client_cpus")? })
    }

    /// Where each process ran, as a sentence under the proxy tables.
    pub fn sentence(&self) -> String {
        let list = |c: &[usize]| c.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        self.placement.sentence(&list(&self.server_cpus), &list(&self.client_cpus))
    }
}

/// The advice beside the placement sentence: the other placement and what it trades.
pub fn placement_advice(p: ProxyPlacement) -> &'static str {
    match p {
        ProxyPlacement::Shared => "`--proxy-placement own-cpu` gives the proxy a CPU of its own (nginx then shares the load generator's)",
        ProxyPlacement::OwnCpu => "`--proxy-placement shared` keeps the load generator alone (the proxy then shares its CPU with nginx)",
    }
}

/// Pooled percentiles of one cell at each open-model step.
pub struct RampLine {
    /// The proxy (or baseline) cell.
    pub cell: CellKey,
    /// One point per open-model step.
    pub points: Vec<RampPoint>,
}

/// One open-model step of a cell: its rate and its pooled percentiles.
pub struct RampPoint {
    /// The step's index.
    pub step: usize,
    /// The rate the step offered, req/s.
    pub target_rate: f64,
    /// The rate it achieved, mean over trials.
    pub achieved_rps: f64,
    /// Latency percentiles pooled over the trials.
    pub percentiles: Percentiles,
}

/// A proxy's overhead over the baseline at one rate both held.
pub struct OverheadRow {
    /// The proxy cell.
    pub cell: CellKey,
    /// The proxy's step.
    pub step: usize,
    /// The rate both ran, req/s.
    pub target_rate: f64,
    /// The overhead of each statistic, in `STATS` order.
    pub overheads: Vec<Overhead>,
}

/// A ramp step whose achieved rate fell short of its target (`RATE_HELD`).
pub struct ShortStep {
    /// The cell that fell short.
    pub cell: CellKey,
    /// The rate it was offered, req/s.
    pub target_rate: f64,
    /// The rate it achieved, req/s.
    pub achieved_rps: f64,
}

impl ShortStep {
    /// What fell short, as a note under the overheads.
    pub fn sentence(&self) -> String {
        format!("{} achieved {:.0} of {:.0} req/s: left out of the overheads", self.cell.label(), self.achieved_rps, self.target_rate)
    }
}

impl RampPoint {
    fn held(&self) -> bool {
        self.achieved_rps >= RATE_HELD * self.target_rate
    }
}

/// A cell's maximum throughput: its best closed-model step.
pub struct MaxThroughput {
    /// The proxy (or baseline) cell.
    pub cell: CellKey,
    /// Requests/s of that step, median and interval.
    pub rps: Estimate,
    /// 100 * rps / baseline rps.
    pub percent_of_baseline: Option<f64>,
}

/// Rates match when they differ by less than 0.5% (they come from the same study file, so they are
/// equal in practice; the slack only absorbs float printing).
fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.005 * a.abs().max(b.abs())
}

/// The proxy study of a run's trials and summaries; None when it has no proxy cells.
pub fn proxy_view(trials: &[TrialRecord], cells: &[CellSummary], settings: &serde_json::Value) -> Option<ProxyView> {
    let mut by_cell: BTreeMap<&CellKey, Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.cell.scenario == Scenario::Proxy) {
        by_cell.entry(&t.cell).or_default().push(t);
    }
    if by_cell.is_empty() {
        return None;
    }
    let mut lines: Vec<RampLine> = by_cell.iter().map(|(cell, ts)| ramp_line(cell, ts)).collect();
    lines.sort_by_key(|l| (l.cell.stack != BASELINE_STACK, l.cell.clone()));
    let fell_short = lines
        .iter()
        .flat_map(|l| {
            l.points.iter().filter(|p| !p.held()).map(|p| ShortStep {
                cell: l.cell.clone(),
                target_rate: p.target_rate,
                achieved_rps: p.achieved_rps,
            })
        })
        .collect();
    let baseline = lines.iter().find(|l| l.cell.stack == BASELINE_STACK);
    let overheads = baseline.map(|b| overhead_rows(&lines, b, &by_cell)).unwrap_or_default();
    Some(ProxyView { lines, overheads, fell_short, max: max_throughput(cells), placement: Placement::of(settings) })
}

/// Each proxy's overhead over the baseline at every rate both ran and both held, paired round by
/// round over the cells' trials.
fn overhead_rows(lines: &[RampLine], baseline: &RampLine, trials: &BTreeMap<&CellKey, Vec<&TrialRecord>>) -> Vec<OverheadRow> {
    let of = |cell: &CellKey| trials.get(cell).map(Vec::as_slice).unwrap_or_default();
    let proxies = lines.iter().filter(|l| l.cell.stack != BASELINE_STACK);
    proxies
        .flat_map(|l| {
            l.points.iter().filter(|p| p.held()).filter_map(move |p| {
                let bp = baseline.points.iter().find(|bp| same_rate(bp.target_rate, p.target_rate) && bp.held())?;
                Some(OverheadRow {
                    cell: l.cell.clone(),
                    step: p.step,
                    target_rate: p.target_rate,
                    overheads: overhead(&p.percentiles, &bp.percentiles, &TrialPairs::of(of(&l.cell), p.step, of(&baseline.cell), bp.step)),
                })
            })
        })
        .collect()
}

fn ramp_line(cell: &CellKey, trials: &[&TrialRecord]) -> RampLine {
    let first = trials[0];
    let points = first
        .load
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let rate = s.target_rate?;
            let achieved: Vec<f64> = trials.iter().filter_map(|t| t.load.steps.get(i)).map(|s| s.requests_per_sec).collect();
            Some(RampPoint {
                step: i,
                target_rate: rate,
                achieved_rps: achieved.iter().sum::<f64>() / achieved.len() as f64,
                percentiles: pooled(trials, i),
            })
        })
        .collect();
    RampLine { cell: cell.clone(), points }
}

fn max_throughput(cells: &[CellSummary]) -> Vec<MaxThroughput> {
    let mut best: BTreeMap<&CellKey, Estimate> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.cell.scenario == Scenario::Proxy && c.target_rate.is_none()) {
        let e = c.get(Metric::RequestsPerSec);
        let entry = best.entry(&c.cell).or_insert(e);
        if e.median > entry.median {
            *entry = e;
        }
    }
    let base = best.iter().find(|(k, _)| k.stack == BASELINE_STACK).map(|(_, e)| e.median);
    let mut out: Vec<MaxThroughput> = best
        .into_iter()
        .map(|(cell, rps)| MaxThroughput {
            cell: cell.clone(),
            percent_of_baseline: base.filter(|b| *b > 0.0).map(|b| 100.0 * rps.median / b),
            rps,
        })
        .collect();
    out.sort_by(|a, b| (a.cell.stack != BASELINE_STACK).cmp(&(b.cell.stack != BASELINE_STACK)).then(b.rps.median.total_cmp(&a.rps.median)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sections::overhead::Source;

    fn line(stack: &str, points: &[(f64, f64, f64)]) -> RampLine {
        let cell = CellKey { stack: stack.into(), scenario: Scenario::Proxy, variant: "default".into(), workers: 1, twin: false };
        let points = points
            .iter()
            .enumerate()
            .map(|(step, &(target_rate, achieved_rps, p50))| RampPoint {
                step,
                target_rate,
                achieved_rps,
                percentiles: Percentiles { values_us: [p50; 6], count: 100, source: Source::Histograms },
            })
            .collect();
        RampLine { cell, points }
    }

    #[test]
    fn a_step_that_fell_short_for_the_proxy_or_the_baseline_has_no_overhead_row() {
        let base = line(BASELINE_STACK, &[(1000.0, 1000.0, 100.0), (2000.0, 1999.0, 110.0), (3000.0, 2500.0, 900.0)]);
        let proxy = line("go/iocopy", &[(1000.0, 999.0, 150.0), (2000.0, 1500.0, 5000.0), (3000.0, 2990.0, 200.0)]);
        let rows = overhead_rows(std::slice::from_ref(&proxy), &base, &BTreeMap::new());
        let rates: Vec<f64> = rows.iter().map(|r| r.target_rate).collect();
        // 2000: the proxy reached 75%; 3000: the baseline reached 83%. Only 1000 is compared.
        assert_eq!(rates, [1000.0]);
        assert_eq!(rows[0].overheads[0].delta_us, 50.0);
    }
}
