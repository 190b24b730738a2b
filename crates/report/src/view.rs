//! The derived view every format renders: trial summaries per cell-step, scenarios with their
//! headline rows and relative speeds, memory lines, and the proxy study. Built once per report,
//! first: the tables and every format read it, and it reads none of them.

use crate::memory::{memory_series, MemorySeries};
use crate::noise::{noise_view, NoiseView};
use crate::precision::{precision_view, PrecisionView};
use crate::proxy::{self, ProxyView};
use crate::slo::{slo_view, SloView};
use bakeoff_model::finding::Finding;
use bakeoff_model::goal::PrimaryMetric;
use bakeoff_model::paired::{paired_ratio, pairs_between};
use bakeoff_model::peers::CostOutlier;
use bakeoff_model::results::{CellKey, TrialRecord, Verdict};
use bakeoff_model::run_data::RunData;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::{claims_from_stored, compare, judge, Article, ArticleComparison, ClaimResult, Evidence};
use bakeoff_model::summary::{summarize_with, CellSummary, Metric, Policy};

/// A stored run as every format reads it: its summaries, scenarios, claims and studies, derived once.
pub struct ReportView<'a> {
    /// The run as stored.
    pub data: &'a RunData,
    /// Every cell-step, in cell order then step order.
    pub cells: Vec<CellSummary>,
    /// Scenarios other than the proxy study's, sorted by id.
    pub scenarios: Vec<ScenarioView>,
    /// Each cell's server RSS over its measurement, with the fitted growth.
    pub(crate) memory: Vec<MemorySeries>,
    /// Present when the run has proxy cells.
    pub proxy: Option<ProxyView>,
    /// Sorted stack names, so a stack has the same colour in every chart.
    pub stacks: Vec<String>,
    /// The study's claims (stored with the run's settings), judged on this run's summaries.
    pub claims: Vec<ClaimResult>,
    /// The article the study reproduces beside this run's figures, when the study has one.
    pub article: Option<ArticleComparison>,
    /// The primary metric cells are ranked by, and the precision target if any.
    pub policy: Policy,
    /// Cells whose CPU per request over their stack's hello is an outlier among their peers.
    pub(crate) outliers: Vec<CostOutlier>,
    pub(crate) noise: NoiseView,
    pub(crate) precision: Option<PrecisionView>,
    /// Each cell's SLO capacity, when the run searched for it.
    pub(crate) slo: Option<SloView>,
    /// Each cell's latency at fractions of its capacity, when the run measured it.
    pub(crate) under_load: Option<crate::under_load::UnderLoadView>,
    /// Cells measured for minutes, over time.
    pub(crate) soaks: Vec<crate::soak::SoakCell>,
    /// Cells measured at rising connection counts, per scenario.
    pub(crate) sweeps: Vec<crate::sweep::SweepView>,
}

/// A warning a report shows beside a cell's numbers: one of the summary's findings, or the peer
/// cost lint's (which compares cells, so the report adds it).
#[derive(Debug, Clone, Copy)]
pub(crate) enum CellWarning<'a> {
    Finding(&'a Finding),
    CostOutlier(&'a CostOutlier),
}

impl CellWarning<'_> {
    /// The kind's name, as JSON prints it.
    pub fn kind(&self) -> &'static str {
        match self {
            CellWarning::Finding(f) => f.id(),
            CellWarning::CostOutlier(_) => "cost_outlier",
        }
    }

    pub fn message(&self) -> String {
        match self {
            CellWarning::Finding(f) => f.message(),
            CellWarning::CostOutlier(o) => o.message(),
        }
    }

    pub fn advice(&self) -> &'static str {
        match self {
            CellWarning::Finding(f) => f.advice(),
            CellWarning::CostOutlier(o) => o.advice(),
        }
    }
}

/// The run's ranking, precision and schedule, from its stored settings (capacity, no target and
/// the trial schedule when absent).
pub fn policy(settings: &serde_json::Value) -> Policy {
    let primary = settings.pointer("/load/rank_by").and_then(|v| serde_json::from_value(v.clone()).ok()).unwrap_or_default();
    // Runs stored before the block schedule existed measured trial by trial.
    let schedule = settings.pointer("/load/schedule").and_then(|v| serde_json::from_value(v.clone()).ok());
    Policy {
        primary,
        precision: settings.pointer("/load/precision").and_then(|v| v.as_f64()),
        paired: schedule == Some(bakeoff_model::schedule::Schedule::Blocks),
    }
}

/// One scenario's cells: every step, the headline row of each cell and their relative speeds.
pub struct ScenarioView {
    /// The scenario.
    pub scenario: Scenario,
    /// Every step of every cell of the scenario.
    pub rows: Vec<CellSummary>,
    /// One row per cell: its last step (the top of a ramp or sweep; the only step of a plain run).
    pub headline: Vec<CellSummary>,
    /// Closed-model headline rows relative to the fastest, fastest first.
    pub relative: Vec<Relative>,
    /// What the relative speeds rank by: the run's primary metric, or CPU µs per request when
    /// the run ranks capacity and a cell's requests/s is the load generator's ceiling.
    pub ranked_by: PrimaryMetric,
}

/// A cell's throughput relative to the scenario's fastest cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Relative {
    /// The cell compared.
    pub cell: CellKey,
    /// Its speed over the fastest's (1 for the fastest).
    pub ratio: f64,
    /// 95% interval of the ratio: both cells' relative half-widths added in quadrature (first-order
    /// propagation for a quotient). The fastest cell is the reference: ratio 1, no interval.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
    /// Whether this is the fastest cell (the reference).
    pub fastest: bool,
    /// Blocks and launches the ratio was paired over (cells measured in the same block or round);
    /// None when it is the two medians' quotient (too few common blocks).
    pub paired: Option<(u32, u32)>,
    /// The paired interval's coverage where too few blocks allow no 95% one (e.g. 0.75 from 3).
    pub short_coverage: Option<f64>,
}

impl Relative {
    /// The interval holds 1: this cell cannot be told from the best.
    pub fn within_noise(&self) -> bool {
        !self.fastest && self.low <= 1.0 && 1.0 <= self.high
    }
}

impl<'a> ReportView<'a> {
    /// Derives everything the formats print from the stored run.
    pub fn new(data: &'a RunData) -> ReportView<'a> {
        let policy = policy(&data.run.settings);
        let cells = summarize_with(&data.trials, &policy);
        let min_trials = data.run.settings.pointer("/load/trials").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
        // Scenarios in the order of their ids as text, as reports have always listed them.
        let mut names: Vec<Scenario> = cells.iter().map(|c| c.cell.scenario).collect();
        names.sort_by_key(|s| s.id());
        names.dedup();
        let sweeps = crate::sweep::sweeps(&names, &cells, &data.trials);
        let scenarios: Vec<ScenarioView> =
            names.into_iter().filter(|&s| s != Scenario::Proxy).map(|s| scenario_view(s, &cells, policy.primary, &data.trials)).collect();
        let mut stacks: Vec<String> = data.trials.iter().map(|t| t.cell.stack.clone()).collect();
        stacks.sort();
        stacks.dedup();
        let settings = &data.run.settings;
        let claims = settings.pointer("/study/claims").map(claims_from_stored).unwrap_or_default();
        // "all" workers resolved to the run's server CPUs.
        let server_cpus = settings.pointer("/load/server_cpus").and_then(|c| c.as_array()).map_or(1, |c| c.len().max(1) as u32);
        let memory = |cell: &CellKey| data.trials.iter().filter(|t| &t.cell == cell).map(crate::memory::rss_points).collect();
        let throughput = |cell: &CellKey| data.trials.iter().filter(|t| &t.cell == cell).map(bakeoff_model::timeline::rps_points).collect();
        let trials = |cell: &CellKey, step: usize, m: bakeoff_model::summary::Metric| {
            data.trials.iter().filter(|t| &t.cell == cell && step < t.load.steps.len()).map(|t| m.of(t, step)).collect()
        };
        let pairs = |a: &CellKey, b: &CellKey, step: usize, m: bakeoff_model::summary::Metric| pairs_between(&data.trials, a, b, m, step);
        let evidence =
            Evidence { summaries: &cells, trials: &trials, pairs: &pairs, memory: &memory, throughput: &throughput, server_cpus };
        let claims = judge(&claims, &evidence);
        let article: Option<Article> = settings.pointer("/study/article").and_then(|a| serde_json::from_value(a.clone()).ok());
        let article = article.map(|a| compare(&a, &cells, server_cpus, claims.clone()));
        ReportView {
            outliers: bakeoff_model::peers::cost_outliers(&cells),
            noise: noise_view(&data.trials),
            precision: precision_view(&policy, min_trials, &cells, &scenarios, &data.trials),
            slo: slo_view(settings, &data.trials),
            under_load: crate::under_load::under_load_view(&data.trials),
            policy,
            claims,
            article,
            memory: memory_series(&data.trials),
            soaks: crate::soak::soak_cells(&data.trials),
            sweeps,
            proxy: proxy::proxy_view(&data.trials, &cells, settings),
            cells,
            scenarios,
            stacks,
            data,
        }
    }

    /// A cell's warnings: the summary's findings, then the peer cost lint's.
    pub(crate) fn warnings_of<'v>(&'v self, c: &'v CellSummary) -> impl Iterator<Item = CellWarning<'v>> {
        let outliers = self.outliers.iter().filter(move |o| o.cell == c.cell).map(CellWarning::CostOutlier);
        c.warnings.iter().map(CellWarning::Finding).chain(outliers)
    }

    /// Index of a stack in the sorted list (the colour index of charts).
    pub(crate) fn stack_index(&self, stack: &str) -> usize {
        self.stacks.iter().position(|s| s == stack).unwrap_or(0)
    }

    /// The memory series of a cell, when its samples were kept.
    pub(crate) fn memory_of(&self, cell: &CellKey) -> Option<&MemorySeries> {
        self.memory.iter().find(|m| &m.cell == cell)
    }

    /// "complete", or a warning that the run never finished.
    pub(crate) fn status_line(&self) -> String {
        if self.data.is_finished() {
            self.data.status.to_string()
        } else {
            "never finished (killed, or still running): the cells shown are those saved so far".into()
        }
    }

    /// Number of failing checks, and of warning ones.
    pub(crate) fn verification_counts(&self) -> (usize, usize) {
        let all = self.data.verifications.iter().flat_map(|v| &v.checks);
        let fails = all.clone().filter(|c| c.verdict == Verdict::Fail).count();
        (fails, all.filter(|c| c.verdict == Verdict::Warn).count())
    }
}

/// A scenario's rows, headline rows and relative speeds, ranked by `primary` unless the client's
/// ceiling capped a cell's requests/s: then by CPU µs per request, which the client cannot bias.
pub(crate) fn scenario_view(scenario: Scenario, cells: &[CellSummary], primary: PrimaryMetric, trials: &[TrialRecord]) -> ScenarioView {
    let rows: Vec<CellSummary> = cells.iter().filter(|c| c.cell.scenario == scenario).cloned().collect();
    let headline: Vec<CellSummary> = rows.iter().filter(|c| !rows.iter().any(|d| d.cell == c.cell && d.step > c.step)).cloned().collect();
    let capped = headline.iter().any(|c| c.client_bound && c.target_rate.is_none() && c.rankable());
    let ranked_by = if capped && primary == PrimaryMetric::Capacity { PrimaryMetric::Efficiency } else { primary };
    let relative = relative_speeds(&headline, ranked_by, trials);
    ScenarioView { scenario, rows, headline, relative, ranked_by }
}

/// Each closed-model row against the scenario's best on the primary metric, as a "speed" where
/// higher is better: requests/s over the best's, or the best's CPU per request over the row's
/// (0.5 = twice the CPU per request). Open-model rows run at a set rate, so their throughput says
/// nothing about speed; A/A twins are the same cell again, not a competitor; a broken or unfair
/// cell is shown, but never compared or called best.
pub fn relative_speeds(rows: &[CellSummary], primary: PrimaryMetric, trials: &[TrialRecord]) -> Vec<Relative> {
    let metric = primary.metric();
    let speed = |e: &bakeoff_model::summary::Estimate| if metric.higher_is_better() { e.median } else { 1.0 / e.median };
    let capped = |c: &CellSummary| c.client_bound && metric == Metric::RequestsPerSec;
    // A server whose CPU was not measured (unmanaged, no pid) has no efficiency to rank.
    let unmeasured = |c: &CellSummary| metric == Metric::CpuUsPerRequest && cpu_unmeasured(trials, c);
    let closed: Vec<&CellSummary> =
        rows.iter().filter(|c| c.target_rate.is_none() && !c.cell.twin && c.rankable() && !capped(c) && !unmeasured(c)).collect();
    let Some(best) = closed.iter().max_by(|a, b| speed(&a.get(metric)).total_cmp(&speed(&b.get(metric)))) else {
        return Vec::new();
    };
    let mut out: Vec<Relative> = closed.iter().map(|c| relative_to(c, best, metric, trials)).collect();
    out.sort_by(|x, y| y.ratio.total_cmp(&x.ratio).then(x.cell.cmp(&y.cell)));
    out
}

/// The cell's server CPU and memory were not measured (an unmanaged server without its pid): its
/// zeros are no figures, to show or to rank by.
pub(crate) fn cpu_unmeasured(trials: &[TrialRecord], c: &CellSummary) -> bool {
    trials.iter().any(|t| t.cell == c.cell && t.warnings.iter().any(|w| w.cpu_unmeasured()))
}

/// One cell against the best as a speed (higher is better). Paired where the two share two or
/// more blocks: the Hodges-Lehmann ratio of their per-block values with its signed-rank interval
/// (widened over launches); else the medians' quotient with both relative half-widths added in
/// quadrature (first-order propagation for a quotient).
fn relative_to(c: &CellSummary, best: &CellSummary, metric: Metric, trials: &[TrialRecord]) -> Relative {
    let fastest = c.cell == best.cell;
    let pairs = if fastest || c.step != best.step { Vec::new() } else { pairs_between(trials, &c.cell, &best.cell, metric, c.step) };
    let paired = (pairs.len() >= 2).then(|| paired_ratio(&pairs)).flatten();
    let (ratio, low, high) = match paired {
        // CPU per request is lower-is-better: the speed is the inverse ratio.
        Some(p) if metric.higher_is_better() => (p.ratio, p.low, p.high),
        Some(p) => (1.0 / p.ratio, 1.0 / p.high, 1.0 / p.low),
        None => {
            let (e, b) = (c.get(metric), best.get(metric));
            let speed = |e: &bakeoff_model::summary::Estimate| if metric.higher_is_better() { e.median } else { 1.0 / e.median };
            let ratio = speed(&e) / speed(&b);
            let rel = if fastest { 0.0 } else { e.relative_half_width().hypot(b.relative_half_width()) };
            (ratio, ratio * (1.0 - rel), ratio * (1.0 + rel))
        }
    };
    let short_coverage = paired.map(|p| p.confidence).filter(|&c| c < bakeoff_model::paired::PAIRED_CONFIDENCE);
    Relative { cell: c.cell.clone(), ratio, low, high, fastest, paired: paired.map(|p| (p.blocks, p.launches)), short_coverage }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::run_data;

    #[test]
    fn a_ladder_is_a_sweep_series_per_cell_and_a_single_step_is_none() {
        let data = run_data();
        let view = ReportView::new(&data);
        let laddered: Vec<&crate::sweep::SweepSeries> = view.sweeps.iter().flat_map(|s| &s.series).collect();
        assert!(!laddered.is_empty(), "the demo run has a concurrency ladder");
        for s in &laddered {
            assert!(s.levels.len() >= 2);
            assert!(s.levels.windows(2).all(|w| w[0].connections < w[1].connections), "levels rise: {:?}", s.cell);
            for l in &s.levels {
                assert!(l.best_requests_per_sec >= l.requests_per_sec.median, "the best trial is at least the median");
            }
        }
        // A cell measured at one connection count only is no sweep.
        let single = view.scenarios.iter().flat_map(|s| &s.headline).find(|c| view.cells.iter().filter(|d| d.cell == c.cell).count() == 1);
        let single = single.expect("the demo run has single-step cells");
        assert!(!laddered.iter().any(|s| s.cell == single.cell));
    }
}
