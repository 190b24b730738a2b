//! The JSON report document, version `JSON_VERSION`: run provenance, verifications, and one summary
//! per cell-step (every metric as median and 95% interval), relative speeds, memory fits and the proxy
//! study. Documented field by field in docs/reports.md; fields are only ever added within a version.

use crate::sections::overhead::Source;
use crate::view::ReportView;
use bakeoff_model::records::results::{CellKey, RunInfo, VerifyReport};
use bakeoff_model::statistics::summary::Estimate;
use bakeoff_model::RunStatus;
use serde::Serialize;
use std::collections::BTreeMap;

/// The document's version: fields are only ever added within one.
const JSON_VERSION: u32 = 2;

#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    version: u32,
    run: &'a RunInfo,
    status: &'a RunStatus,
    finished: bool,
    finished_at: Option<&'a str>,
    verifications: &'a [VerifyReport],
    /// The study's claims, each with verdict held / failed / inconclusive / not measured and the value
    /// measured with its interval and that interval's coverage (`confidence`).
    claims: &'a [bakeoff_model::study::ClaimResult],
    /// The article's tables beside this run's, normalised to its reference stack (studies of an article).
    #[serde(skip_serializing_if = "Option::is_none")]
    article: Option<&'a bakeoff_model::study::ArticleComparison>,
    cells: Vec<Cell<'a>>,
    relative: BTreeMap<&'a str, Vec<Relative<'a>>>,
    proxy: Option<Proxy<'a>>,
    /// Store ceilings, each with the headline cells above 70% of it.
    ceilings: Vec<Ceiling<'a>>,
    /// The metric cells are ranked by ("capacity" or "efficiency").
    rank_by: bakeoff_model::plan::goal::PrimaryMetric,
    /// The precision goal's outcome; null when the run set no target.
    precision: Option<&'a crate::sections::precision::PrecisionView>,
    /// Steal and other processes' CPU per CPU set, the busiest other process, the A/A floor.
    noise: &'a crate::sections::noise::NoiseView,
    /// Per stack variant: server model, workers, pool, libraries, installed versions.
    what_ran: &'a [bakeoff_model::records::profile::WhatRan],
    /// Soaked cells (measured a minute or more): `[{stack, scenario, variant, workers, trials: [{trial,
    /// rss_mib: [[minute, MiB]...], requests_per_sec: [[minute, req/s]...]}]}]`, warm-up excluded.
    soaks: &'a [crate::sections::soak::SoakCell],
    /// Concurrency sweeps per scenario: `[{scenario, series: [{stack, scenario, variant, workers,
    /// levels: [{connections, requests_per_sec, best_requests_per_sec, mean_us, p99_us, stddev_us,
    /// rankable}]}]}]`, each estimate a median with its interval.
    sweeps: &'a [crate::sections::sweep::SweepView],
    /// SLO capacity per cell (the objective, the search budget, each cell's capacity over trials and
    /// the steps of its median trial); null when the run set no objective.
    slo: Option<&'a crate::sections::slo::SloView>,
    /// Latency under load per cell: `{knee_factor, cells: [{stack, scenario, variant, workers,
    /// twin, trials, launches, capacity_rps, points: [{fraction, offered_rps, achieved_rps, p50_us,
    /// p99_us, p999_us, errors, cpu_cores, p50, p99, p999}], knee, knee_range}]}`: medians over
    /// launches, `p50`/`p99`/`p999` each `{median, ci_low, ci_high, trials (launches), confidence}`,
    /// `knee_range` `{low, high}` or null when not determined; null when the run did not measure it.
    under_load: Option<&'a crate::sections::under_load::UnderLoadView>,
    /// B against A per scenario when the run measured two ad-hoc servers side by side (`bench --cmd
    /// A --cmd B`): `[{a, b, changes: [{metric, median_a, median_b, ratio, low, high, verdict}],
    /// blocks, launches}]`, `ratio` B / A paired block by block, `low`/`high` its 95% interval (null
    /// without one), `verdict` `faster`, `slower` or `no_detectable_change`; empty otherwise.
    side_by_side: &'a [bakeoff_model::statistics::comparison::SideBySide],
    /// What a request costs per measured cell: `[{cell, cpu_us, per_core_second, per_million}]`,
    /// each an estimate `{median, ci_low, ci_high, trials, confidence}`, `per_core_second` the
    /// requests one core serves per second, `per_million` the price of a million requests at
    /// `price` (null without one).
    cost: Vec<crate::sections::cost::CostRow>,
    /// What a core costs (`core-hour=P`), from the study's `price` or `--price`; null when not set.
    price: Option<bakeoff_model::plan::price::CorePrice>,
}

#[derive(Serialize)]
struct Ceiling<'a> {
    #[serde(flatten)]
    record: &'a bakeoff_model::records::results::CeilingRecord,
    /// Closed-model headline cells above `ceiling::LIMIT_SHARE` of this ceiling.
    limited_by_store: Vec<Limited<'a>>,
}

#[derive(Serialize)]
struct Limited<'a> {
    #[serde(flatten)]
    cell: &'a CellKey,
    percent_of_ceiling: f64,
}

#[derive(Serialize)]
struct Cell<'a> {
    #[serde(flatten)]
    cell: &'a CellKey,
    step: usize,
    step_label: &'a str,
    target_rate: Option<f64>,
    metrics: BTreeMap<&'static str, &'a Estimate>,
    rps_spread: f64,
    disagree: bool,
    /// Empty when the cell may be ranked; else why it is shown but not ranked or claimed about,
    /// each "kind: message".
    unrankable: Vec<String>,
    /// The load generator was the ceiling in most trials: requests/s is a lower bound, not ranked.
    client_bound: bool,
    warnings: Vec<Warning>,
    memory: Option<Memory>,
    /// A scenario file's cell-step: per request kind `{name, requests, share_percent, asked_percent,
    /// p50_us, p99_us, errors, mix_drift}`, medians over trials; absent for every other cell.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    kinds: &'a [crate::sections::kinds::KindRow],
}

#[derive(Serialize)]
struct Warning {
    /// The warning's kind: the load generator's or the lab's `kind` tag, `trials_disagree`,
    /// `precision_missed` or `cost_outlier`.
    kind: &'static str,
    message: String,
    advice: &'static str,
}

#[derive(Serialize)]
struct Memory {
    trial: u32,
    slope_mib_per_min: f64,
    r2: f64,
    growing: bool,
}

#[derive(Serialize)]
struct Relative<'a> {
    #[serde(flatten)]
    cell: &'a CellKey,
    ratio: f64,
    low: f64,
    high: f64,
    fastest: bool,
    /// Blocks and launches the ratio was paired over; null for a quotient of medians.
    paired: Option<Paired>,
    within_noise: bool,
}

#[derive(Serialize)]
struct Paired {
    blocks: u32,
    launches: u32,
    /// The slices the ratio rests on: "joint" (the cells loaded at once) or "solo".
    slices: bakeoff_model::statistics::pairing::PairSource,
    /// The joint slices' ratio where it contradicted the solo one shown: [ratio, low, high].
    #[serde(skip_serializing_if = "Option::is_none")]
    joint_disagreed: Option<(f64, f64, f64)>,
}

#[derive(Serialize)]
struct Proxy<'a> {
    baseline_stack: &'static str,
    overhead: Vec<OverheadRow<'a>>,
    max_throughput: Vec<MaxRow<'a>>,
    /// Where the proxy, nginx and the load generator ran: `{placement, server_cpus, client_cpus}`.
    placement: Option<&'a crate::sections::proxy::Placement>,
}

#[derive(Serialize)]
struct OverheadRow<'a> {
    #[serde(flatten)]
    cell: &'a CellKey,
    step: usize,
    target_rate: f64,
    /// stat label -> (delta µs, delta %)
    delta_us: BTreeMap<&'static str, f64>,
    delta_percent: BTreeMap<&'static str, f64>,
    /// stat label -> the paired interval of delta µs, absent from fewer than two paired rounds
    delta_interval_us: BTreeMap<&'static str, DeltaInterval>,
    /// the stats whose interval holds zero (or that have none): no overhead told from noise
    within_noise: Vec<&'static str>,
    from_histograms: bool,
}

#[derive(Serialize)]
struct DeltaInterval {
    low: f64,
    high: f64,
    confidence: f64,
    pairs: u32,
}

#[derive(Serialize)]
struct MaxRow<'a> {
    #[serde(flatten)]
    cell: &'a CellKey,
    requests_per_sec: &'a Estimate,
    percent_of_baseline: Option<f64>,
}

fn ceilings<'a>(view: &'a ReportView) -> Vec<Ceiling<'a>> {
    let limited: Vec<crate::sections::ceiling::Limited> =
        view.scenarios.iter().flat_map(|sv| crate::sections::ceiling::limited(view, sv)).collect();
    view.data
        .ceilings
        .iter()
        .map(|c| Ceiling {
            record: c,
            limited_by_store: limited
                .iter()
                .filter(|l| std::ptr::eq(l.ceiling, c))
                .map(|l| Limited { cell: &l.cell.cell, percent_of_ceiling: l.percent })
                .collect(),
        })
        .collect()
}

/// The proxy study's overheads and maximum throughputs, when the run has proxies.
fn proxy<'a>(view: &'a ReportView) -> Option<Proxy<'a>> {
    view.proxy.as_ref().map(|p| Proxy {
        baseline_stack: crate::sections::proxy::BASELINE_STACK,
        overhead: p
            .overheads
            .iter()
            .map(|o| OverheadRow {
                cell: &o.cell,
                step: o.step,
                target_rate: o.target_rate,
                delta_us: o.overheads.iter().map(|x| (x.stat.label(), x.delta_us)).collect(),
                delta_percent: o.overheads.iter().map(|x| (x.stat.label(), x.delta_percent)).collect(),
                delta_interval_us: o
                    .overheads
                    .iter()
                    .filter_map(|x| {
                        let i = x.interval?;
                        Some((x.stat.label(), DeltaInterval { low: i.low_us, high: i.high_us, confidence: i.confidence, pairs: i.pairs }))
                    })
                    .collect(),
                within_noise: o.overheads.iter().filter(|x| x.within_noise()).map(|x| x.stat.label()).collect(),
                from_histograms: p
                    .lines
                    .iter()
                    .filter(|l| l.cell == o.cell)
                    .flat_map(|l| &l.points)
                    .any(|pt| pt.step == o.step && pt.percentiles.source == Source::Histograms),
            })
            .collect(),
        max_throughput: p
            .max
            .iter()
            .map(|m| MaxRow { cell: &m.cell, requests_per_sec: &m.rps, percent_of_baseline: m.percent_of_baseline })
            .collect(),
        placement: p.placement.as_ref(),
    })
}

/// Every cell's line: its estimates, findings, memory fit and request kinds.
fn cells<'a>(view: &'a ReportView) -> Vec<Cell<'a>> {
    let cell = |c: &'a bakeoff_model::statistics::summary::CellSummary| Cell {
        cell: &c.cell,
        step: c.step,
        step_label: &c.step_label,
        target_rate: c.target_rate,
        metrics: c.metrics.iter().map(|(m, e)| (m.id(), e)).collect(),
        rps_spread: c.rps_spread,
        disagree: c.disagree,
        unrankable: c.unrankable.iter().map(bakeoff_model::records::finding::Finding::tagged).collect(),
        client_bound: c.client_bound,
        warnings: view.warnings_of(c).map(|w| Warning { kind: w.kind(), message: w.message(), advice: w.advice() }).collect(),
        memory: view
            .memory_of(&c.cell)
            .and_then(|m| m.fit.map(|f| Memory { trial: m.trial, slope_mib_per_min: f.slope, r2: f.r2, growing: m.growing() })),
        kinds: view.kinds.iter().find(|k| k.cell == c.cell && k.step == c.step).map_or(&[], |k| &k.kinds[..]),
    };
    view.cells.iter().map(cell).collect()
}

/// Each scenario's ratios to its fastest cell, keyed by scenario id.
fn relative<'a>(view: &'a ReportView) -> BTreeMap<&'a str, Vec<Relative<'a>>> {
    let row = |r: &'a crate::sections::scenario::Relative| Relative {
        cell: &r.cell,
        ratio: r.ratio,
        low: r.low,
        high: r.high,
        fastest: r.fastest,
        paired: r.paired.map(|(blocks, launches)| Paired { blocks, launches, slices: r.source, joint_disagreed: r.joint_disagreed }),
        within_noise: r.within_noise(),
    };
    view.scenarios.iter().map(|s| (s.scenario.id(), s.relative.iter().map(row).collect())).collect()
}

/// The JSON report document, pretty-printed.
pub(crate) fn render(view: &ReportView) -> String {
    let d = view.data;
    let cells = cells(view);
    let relative = relative(view);
    let proxy = proxy(view);
    let doc = Document {
        format: "bakeoff-report",
        version: JSON_VERSION,
        run: &d.run,
        status: &d.status,
        finished: d.is_finished(),
        finished_at: d.finished_at.as_deref(),
        verifications: &d.verifications,
        claims: &view.claims,
        article: view.article.as_ref(),
        cells,
        relative,
        proxy,
        ceilings: ceilings(view),
        rank_by: view.policy.primary,
        precision: view.precision.as_ref(),
        noise: &view.noise,
        what_ran: &view.data.what_ran,
        slo: view.slo.as_ref(),
        under_load: view.under_load.as_ref(),
        side_by_side: &view.side_by_side,
        cost: crate::sections::cost::rows(view),
        price: crate::sections::cost::price(view),
        soaks: &view.soaks,
        sweeps: &view.sweeps,
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("report document serializes");
    s.push('\n');
    s
}
