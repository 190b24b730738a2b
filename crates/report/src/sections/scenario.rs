//! A scenario's ranking: its rows and headline rows, and each closed-model cell's speed against
//! the best, paired block by block where the two shared blocks. Built by the view; the precision
//! section, the tables and the summary read it.

use bakeoff_model::plan::goal::PrimaryMetric;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::forecast::MeasuredParts;
use bakeoff_model::statistics::paired::{paired_ratio, Components, PairedRatio};
use bakeoff_model::statistics::pairing::{pair_choice_between, PairSource};
use bakeoff_model::statistics::summary::{CellSummary, Metric};

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
    /// Which slices the paired ratio rests on: the blocks' joint slices (the cells loaded at
    /// once) or their solo ones; solo for a quotient of medians.
    pub source: PairSource,
    /// When the joint slices' ratio (a speed: ratio, low, high) lay outside the solo slices'
    /// interval: the cells use a share of the server unlike the whole of it, and the ratio shown
    /// rests on the solo slices.
    pub joint_disagreed: Option<(f64, f64, f64)>,
    /// The paired ratio's variance parts (block to block, launch to launch); None unpaired.
    pub components: Option<Components>,
    /// Why the ratio rests on the solo slices where the cells had joint slices (the joint/solo
    /// rule, decided on their CPU use before any ratio), in words.
    pub solo_because: Option<String>,
}

impl Relative {
    /// Half the interval's width relative to the ratio, a fraction (the "±x%" a report states).
    pub fn relative_half_width(&self) -> f64 {
        (self.high - self.low) / 2.0 / self.ratio
    }

    /// How it was paired, as a report says it after the interval: "paired", "paired at once"
    /// (on the blocks' joint slices), or nothing for a quotient of medians.
    pub fn pairing(&self) -> &'static str {
        match (self.paired, self.source) {
            (None, _) => "",
            (Some(_), PairSource::Joint) => "paired at once",
            (Some(_), PairSource::Solo) => "paired",
        }
    }

    /// The note a row carries when its joint slices' ratio contradicted its solo one.
    pub fn disagreement_note(&self) -> Option<(String, &'static str)> {
        let (ratio, low, high) = self.joint_disagreed?;
        let why = self.solo_because.as_deref().unwrap_or("the joint/solo rule chose them");
        let message = format!(
            "loaded at once with the best, its ratio was {ratio:.2} ({low:.2}–{high:.2}), outside the {:.2} ({:.2}–{:.2}) its solo \
             slices give: sharing the machine cost the two unequally; the ratio shown rests on the solo slices, as the rule \
             decided before any ratio ({why})",
            self.ratio, self.low, self.high
        );
        Some((message, "read the solo ratio; to narrow it, run more blocks (--precision) or on a quieter machine"))
    }

    /// The interval holds 1: this cell cannot be told from the best.
    pub fn within_noise(&self) -> bool {
        !self.fastest && self.low <= 1.0 && 1.0 <= self.high
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
    let speed = |e: &bakeoff_model::statistics::summary::Estimate| if metric.higher_is_better() { e.median } else { 1.0 / e.median };
    let capped = |c: &CellSummary| c.client_bound && metric == Metric::RequestsPerSec;
    // A server whose CPU was not measured (unmanaged, no pid) has no efficiency to rank.
    let unmeasured = |c: &CellSummary| metric == Metric::CpuUsPerRequest && cpu_unmeasured(trials, c);
    let closed: Vec<&CellSummary> =
        rows.iter().filter(|c| c.target_rate.is_none() && !c.cell.twin && c.rankable() && !capped(c) && !unmeasured(c)).collect();
    let Some(mut best) = closed.iter().max_by(|a, b| speed(&a.get(metric)).total_cmp(&speed(&b.get(metric)))) else {
        return Vec::new();
    };
    // The leader is chosen on the same paired estimates its ratios print: a cell whose paired
    // ratio to the median's leader is above 1 leads instead, so no ratio "vs best" exceeds 1
    // (unpaired medians are far wider than paired ratios). At most once per cell: a cycle of
    // intransitive pairs stops at the last.
    let mut out: Vec<Relative> = closed.iter().map(|c| relative_to(c, best, metric, trials)).collect();
    for _ in 0..closed.len() {
        let Some(ahead) =
            out.iter().filter(|r| !r.fastest && r.paired.is_some() && r.ratio > 1.0).max_by(|a, b| a.ratio.total_cmp(&b.ratio))
        else {
            break;
        };
        let Some(next) = closed.iter().find(|c| c.cell == ahead.cell) else { break };
        best = next;
        out = closed.iter().map(|c| relative_to(c, best, metric, trials)).collect();
    }
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
    let choice = (!fastest && c.step == best.step).then(|| pair_choice_between(trials, &c.cell, &best.cell, metric, c.step));
    let pairs = choice.as_ref().map_or(&[][..], |ch| &ch.pairs[..]);
    let paired = (pairs.len() >= 2).then(|| paired_ratio(pairs)).flatten();
    // CPU per request is lower-is-better: the speed is the inverse ratio.
    let as_speed =
        |p: &PairedRatio| if metric.higher_is_better() { (p.ratio, p.low, p.high) } else { (1.0 / p.ratio, 1.0 / p.high, 1.0 / p.low) };
    let (ratio, low, high) = match &paired {
        Some(p) => as_speed(p),
        None => {
            let (e, b) = (c.get(metric), best.get(metric));
            let speed =
                |e: &bakeoff_model::statistics::summary::Estimate| if metric.higher_is_better() { e.median } else { 1.0 / e.median };
            let ratio = speed(&e) / speed(&b);
            let rel = if fastest { 0.0 } else { e.relative_half_width().hypot(b.relative_half_width()) };
            (ratio, ratio * (1.0 - rel), ratio * (1.0 + rel))
        }
    };
    let short_coverage = paired.map(|p| p.confidence).filter(|&c| c < bakeoff_model::statistics::paired::PAIRED_CONFIDENCE);
    let source = choice.as_ref().filter(|_| paired.is_some()).map_or(PairSource::Solo, |ch| ch.source);
    let joint_disagreed = choice.as_ref().and_then(|ch| ch.disagreement).map(|(_, together)| as_speed(&together));
    let components = paired.map(|p| p.components);
    let names = (c.cell.label(), best.cell.label());
    let solo_because = choice.as_ref().and_then(|ch| ch.solo_because).map(|why| why.describe((&names.0, &names.1)));
    let paired = paired.map(|p| (p.blocks, p.launches));
    Relative { cell: c.cell.clone(), ratio, low, high, fastest, paired, short_coverage, source, joint_disagreed, components, solo_because }
}

/// The largest of each variance part over `scenarios`' paired rankings: what the precision
/// section prints of the run's noise. None where no ratio was paired over two launches or more.
pub fn ranked_components(scenarios: &[ScenarioView]) -> Option<Components> {
    let all = scenarios.iter().flat_map(|sv| sv.relative.iter()).filter(|r| !r.fastest && r.paired.is_some_and(|p| p.1 >= 2));
    all.filter_map(|r| r.components).reduce(|a, b| Components {
        block_sd: a.block_sd.max(b.block_sd),
        launch_sd: a.launch_sd.max(b.launch_sd),
        block_df: a.block_df.min(b.block_df),
    })
}

/// Each ratio of `scenarios`' rankings paired over two launches or more, keyed by its scenario and
/// cell, with its variance parts and launches: what later runs of the same study pool pair by pair
/// to allocate their launches by and forecast their widest ratio from.
pub fn ranked_parts(scenarios: &[ScenarioView]) -> Vec<(String, MeasuredParts)> {
    let ranked = scenarios.iter().flat_map(|sv| sv.relative.iter().map(move |r| (sv.scenario, r)));
    ranked
        .filter_map(|(scenario, r)| {
            let (_, launches) = r.paired.filter(|p| p.1 >= 2 && !r.fastest)?;
            Some((format!("{} on {scenario}", r.cell.label()), MeasuredParts { components: r.components?, launches }))
        })
        .collect()
}

/// The widest paired ratio of `scenarios`' rankings (a cell against its scenario's best), with its
/// scenario: what a later run of the same study can expect of its ratios. None where no ratio
/// was paired.
pub fn widest_paired(scenarios: &[ScenarioView]) -> Option<(Scenario, &Relative)> {
    let paired =
        scenarios.iter().flat_map(|sv| sv.relative.iter().filter(|r| r.paired.is_some() && !r.fastest).map(move |r| (sv.scenario, r)));
    paired.max_by(|a, b| a.1.relative_half_width().total_cmp(&b.1.relative_half_width()))
}
