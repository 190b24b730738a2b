//! The derived view every format renders: trial summaries per cell-step, scenarios with their
//! headline rows and relative speeds, memory lines, and the proxy study. Built once per report,
//! first: the tables and every format read it, and it reads none of them.

use crate::sections::memory::{memory_series, MemorySeries};
use crate::sections::noise::{noise_view, NoiseView};
use crate::sections::precision::{precision_view, PrecisionView};
use crate::sections::proxy::{self, ProxyView};
use crate::sections::scenario::{scenario_view, ScenarioView};
use crate::sections::slo::{slo_view, SloView};
use bakeoff_model::peers::CostOutlier;
use bakeoff_model::records::finding::Finding;
use bakeoff_model::records::results::{CellKey, Verdict};
use bakeoff_model::records::run_data::RunData;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::pairing::pairs_between;
use bakeoff_model::statistics::summary::{summarize_with, CellSummary, Policy};
use bakeoff_model::study::{claims_from_stored, compare, judge, Article, ArticleComparison, ClaimResult, Evidence};

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
    pub(crate) under_load: Option<crate::sections::under_load::UnderLoadView>,
    /// Each cell-step of a scenario file with its request kinds, in cell order.
    pub(crate) kinds: Vec<crate::sections::kinds::CellKinds>,
    /// Cells measured for minutes, over time.
    pub(crate) soaks: Vec<crate::sections::soak::SoakCell>,
    /// Cells measured at rising connection counts, per scenario.
    pub(crate) sweeps: Vec<crate::sections::sweep::SweepView>,
    /// B against A per scenario, when the run measured two ad-hoc servers (`bench --cmd A --cmd B`).
    pub side_by_side: Vec<bakeoff_model::statistics::comparison::SideBySide>,
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

/// Whether `run` loaded its cells at the same time (`--schedule at-once`, or the block schedule's
/// joint slices): its ratios to its peers, measured within the same seconds, are then what
/// `compare` judges a cell on, not its own medians, which move with the machine from run to run.
pub fn loaded_together(run: &bakeoff_model::records::run_data::RunData) -> bool {
    use bakeoff_model::plan::schedule::Schedule;
    let schedule = run.run.settings.pointer("/load/schedule").and_then(|v| serde_json::from_value::<Schedule>(v.clone()).ok());
    match schedule {
        Some(Schedule::AtOnce) => true,
        Some(Schedule::Blocks) => run.trials.iter().any(|t| t.joint.is_some()),
        _ => false,
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
        paired: schedule.is_some_and(bakeoff_model::plan::schedule::Schedule::pairs_blocks),
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
        let sweeps = crate::sections::sweep::sweeps(&names, &cells, &data.trials);
        let scenarios: Vec<ScenarioView> =
            names.into_iter().filter(|&s| s != Scenario::Proxy).map(|s| scenario_view(s, &cells, policy.primary, &data.trials)).collect();
        let mut stacks: Vec<String> = data.trials.iter().map(|t| t.cell.stack.clone()).collect();
        stacks.sort();
        stacks.dedup();
        let settings = &data.run.settings;
        let claims = settings.pointer("/study/claims").map(claims_from_stored).unwrap_or_default();
        // "all" workers resolved to the run's server CPUs.
        let server_cpus = settings.pointer("/load/server_cpus").and_then(|c| c.as_array()).map_or(1, |c| c.len().max(1) as u32);
        let memory = |cell: &CellKey| data.trials.iter().filter(|t| &t.cell == cell).map(crate::sections::memory::rss_points).collect();
        let throughput =
            |cell: &CellKey| data.trials.iter().filter(|t| &t.cell == cell).map(bakeoff_model::records::timeline::rps_points).collect();
        let trials = |cell: &CellKey, step: usize, m: bakeoff_model::statistics::summary::Metric| {
            data.trials.iter().filter(|t| &t.cell == cell && step < t.load.steps.len()).map(|t| m.of(t, step)).collect()
        };
        let pairs = |a: &CellKey, b: &CellKey, step: usize, m: bakeoff_model::statistics::summary::Metric| {
            pairs_between(&data.trials, a, b, m, step)
        };
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
            under_load: crate::sections::under_load::under_load_view(&data.trials),
            kinds: crate::sections::kinds::kinds_view(&cells, &data.trials, settings),
            policy,
            claims,
            article,
            memory: memory_series(&data.trials),
            soaks: crate::sections::soak::soak_cells(&data.trials),
            sweeps,
            proxy: proxy::proxy_view(&data.trials, &cells, settings),
            side_by_side: crate::sections::side_by_side::side_by_side_view(data, &scenarios),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::run_data;

    #[test]
    fn a_run_is_judged_on_ratios_when_it_loaded_its_cells_together() {
        let mut d = run_data();
        let schedule =
            |d: &mut bakeoff_model::records::run_data::RunData, s: &str| d.run.settings["load"]["schedule"] = serde_json::json!(s);
        schedule(&mut d, "blocks");
        assert!(!loaded_together(&d), "blocks of solo slices only");
        d.trials[0].joint = Some(bakeoff_model::records::joint::JointSlice {
            cells: 2,
            requests_per_sec: 1000.0,
            mib_per_sec: 1.0,
            cpu_us_per_request: 10.0,
            cpu_share: None,
            server_cpus: None,
        });
        assert!(loaded_together(&d), "blocks with joint slices");
        schedule(&mut d, "trials");
        assert!(!loaded_together(&d));
        schedule(&mut d, "at-once");
        assert!(loaded_together(&d));
    }

    #[test]
    fn a_ladder_is_a_sweep_series_per_cell_and_a_single_step_is_none() {
        let data = run_data();
        let view = ReportView::new(&data);
        let laddered: Vec<&crate::sections::sweep::SweepSeries> = view.sweeps.iter().flat_map(|s| &s.series).collect();
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
