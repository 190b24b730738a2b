//! CSV: one row per cell-step, every metric as three columns (median, 95% CI low, high), raw numbers
//! in the metric's unit (ids end in _us, _mib, _percent). Wide rather than one row per metric so a
//! spreadsheet or pandas reads a cell as one record; the column set is fixed by `Metric::ALL`. After
//! the cells, store ceilings, then soak series and latency-under-load points (one row per point).

use crate::view::ReportView;
use bakeoff_model::records::results::{CeilingRecord, CellKey};
use bakeoff_model::statistics::summary::{CellSummary, Metric};

/// The CSV report: cell rows, ceiling rows, then soak series rows.
pub(crate) fn render(view: &ReportView) -> String {
    let mut out = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let mut line = |cells: &[String]| out.write_record(cells).expect("writing CSV to memory cannot fail");
    line(&header());
    let cost = crate::sections::cost::rows(view);
    for c in &view.cells {
        line(&cell_row(view, c, &cost));
    }
    // Store ceilings: one row each after the cells, stack `ceiling:<store>`, variant = the native
    // client, step_label "store ceiling, N conns"; only requests_per_sec (= queries/s, no interval),
    // mean_us and p99_us are filled.
    for c in &view.data.ceilings {
        line(&ceiling_row(view, c));
    }
    // Soaks: one row per point of each trial's series, the cell's key filled, `step_label`
    // "soak", the `series*` columns set and every metric column empty.
    for row in soak_rows(view) {
        line(&row);
    }
    // Latency under load: one row per point of each cell's curve, `step_label` "under load 25%"
    // ("... (knee)" on the median curve's knee), `target_rate` the offered rate, `trials` the
    // launches behind it, requests_per_sec the rate served and CPU per request their medians (no
    // interval), p50/p99/p99.9 their medians over launches with their order-statistic intervals.
    for row in under_load_rows(view) {
        line(&row);
    }
    // Request kinds: one row per kind of each scenario file's cell-step, `step` and `step_label`
    // the cell's, `trials` those behind the medians, p50_us and p99_us the kind's medians (no
    // interval), and the `kind*` columns set; every other metric column empty.
    for row in kind_rows(view) {
        line(&row);
    }
    String::from_utf8(out.into_inner().expect("an in-memory CSV writer flushes")).expect("every field is UTF-8")
}

fn header() -> Vec<String> {
    let mut header: Vec<String> =
        ["run_id", "stack", "scenario", "variant", "workers", "aa_twin", "step", "step_label", "target_rate", "trials"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    for m in Metric::ALL {
        header.extend([m.id().to_string(), format!("{}_ci_low", m.id()), format!("{}_ci_high", m.id())]);
    }
    header.extend(["rss_slope_mib_per_min", "memory_growth", "trials_disagree", "rankable", "client_bound", "warnings"].map(String::from));
    header.extend(WHAT_RAN_COLUMNS.map(String::from));
    header.extend(SLO_COLUMNS.map(String::from));
    header.extend(COST_COLUMNS.map(String::from));
    header.extend(SERIES_COLUMNS.map(String::from));
    header.extend(KIND_COLUMNS.map(String::from));
    header
}

/// A request kind of a scenario file's cell-step (empty on every other row): its name, responses,
/// percent of the cell-step's responses, percent the file's weights ask for, and failed requests.
const KIND_COLUMNS: [&str; 5] = ["kind", "kind_requests", "kind_share_percent", "kind_asked_percent", "kind_errors"];

fn kind_rows(view: &ReportView) -> Vec<Vec<String>> {
    let rest = header().len() - 10 - 3 * Metric::ALL.len() - KIND_COLUMNS.len();
    let mut rows = Vec::new();
    for c in &view.kinds {
        let summary = view.cells.iter().find(|s| s.cell == c.cell && s.step == c.step);
        for k in &c.kinds {
            let mut row = key_fields(view, &c.cell);
            row.extend([c.step.to_string(), summary.map_or(String::new(), |s| s.step_label.clone())]);
            row.push(summary.and_then(|s| s.target_rate).map(num).unwrap_or_default());
            row.push(c.trials.to_string());
            for m in Metric::ALL {
                let v = match m {
                    Metric::P50Us => k.p50_us,
                    Metric::P99Us => k.p99_us,
                    _ => None,
                };
                row.extend([v.map(num).unwrap_or_default(), String::new(), String::new()]);
            }
            row.extend(std::iter::repeat_n(String::new(), rest));
            let asked = k.asked_percent.map(num).unwrap_or_default();
            row.extend([k.name.clone(), num(k.requests), num(k.share_percent), asked, num(k.errors)]);
            rows.push(row);
        }
    }
    rows
}

/// A soak's series, one point per row (empty on cell and ceiling rows): `series` is `rss_mib` or
/// `requests_per_sec`, `series_minute` minutes into the measurement, `series_value` in that unit.
const SERIES_COLUMNS: [&str; 4] = ["series", "series_trial", "series_minute", "series_value"];

/// Every point of every soaked cell's series, trial by trial, RSS before requests/s.
fn soak_rows(view: &ReportView) -> Vec<Vec<String>> {
    let blank = header().len() - 8 - SERIES_COLUMNS.len() - KIND_COLUMNS.len();
    let mut rows = Vec::new();
    for s in &view.soaks {
        for t in &s.trials {
            for series in crate::sections::soak::Series::ALL {
                for &(minute, value) in series.of(t) {
                    let mut row = key_fields(view, &s.cell);
                    row.extend([String::new(), "soak".into()]);
                    row.extend(std::iter::repeat_n(String::new(), blank));
                    row.extend([series.id().to_string(), t.trial.to_string(), num(minute), num(value)]);
                    row.extend(KIND_COLUMNS.map(|_| String::new()));
                    rows.push(row);
                }
            }
        }
    }
    rows
}

fn under_load_rows(view: &ReportView) -> Vec<Vec<String>> {
    let Some(u) = &view.under_load else { return Vec::new() };
    let rest = header().len() - 10 - 3 * Metric::ALL.len();
    let mut rows = Vec::new();
    for c in &u.cells {
        for point in &c.points {
            let p = &point.median;
            let mut row = key_fields(view, &c.cell);
            let knee = if c.knee == Some(p.fraction) { " (knee)" } else { "" };
            row.extend([
                String::new(),
                format!("under load {}{knee}", crate::sections::under_load::percent(p.fraction)),
                num(p.offered_rps),
            ]);
            row.push(c.launches.to_string());
            for m in Metric::ALL {
                let median = |v: f64| [num(v), String::new(), String::new()];
                let interval = |e: &bakeoff_model::statistics::summary::Estimate| [num(e.median), num(e.ci_low), num(e.ci_high)];
                row.extend(match m {
                    Metric::RequestsPerSec => median(p.achieved_rps),
                    Metric::P50Us => interval(&point.p50),
                    Metric::P99Us => interval(&point.p99),
                    Metric::P999Us => interval(&point.p999),
                    Metric::CpuUsPerRequest => median(p.cpu_us_per_request().unwrap_or(f64::NAN)),
                    _ => median(f64::NAN),
                });
            }
            row.extend(std::iter::repeat_n(String::new(), rest));
            rows.push(row);
        }
    }
    rows
}

/// The first columns of a cell's rows (measured or soak): the run and the cell's key.
fn key_fields(view: &ReportView, cell: &CellKey) -> Vec<String> {
    let CellKey { stack, scenario, variant, workers, twin } = cell;
    vec![view.data.run.id.clone(), stack.clone(), scenario.to_string(), variant.clone(), workers.to_string(), twin.to_string()]
}

fn cell_row(view: &ReportView, c: &CellSummary, cost: &[crate::sections::cost::CostRow]) -> Vec<String> {
    let mem = view.memory_of(&c.cell);
    let mut row = key_fields(view, &c.cell);
    row.extend([
        c.step.to_string(),
        c.step_label.clone(),
        c.target_rate.map(num).unwrap_or_default(),
        c.get(Metric::RequestsPerSec).trials.to_string(),
    ]);
    for m in Metric::ALL {
        let e = c.get(m);
        row.extend([num(e.median), num(e.ci_low), num(e.ci_high)]);
    }
    row.push(mem.and_then(|m| m.fit).map(|f| num(f.slope)).unwrap_or_default());
    row.push(mem.is_some_and(|m| m.growing()).to_string());
    row.push(c.disagree.to_string());
    row.push(c.rankable().to_string());
    row.push(c.client_bound.to_string());
    row.push(view.warnings_of(c).map(|w| w.message()).collect::<Vec<_>>().join("; "));
    row.extend(what_ran_fields(view, &c.cell.stack, &c.cell.variant));
    row.extend(slo_fields(view, c));
    row.extend(cost_fields(view, c, cost));
    row.extend(SERIES_COLUMNS.map(|_| String::new()));
    row.extend(KIND_COLUMNS.map(|_| String::new()));
    row
}

fn ceiling_row(view: &ReportView, c: &CeilingRecord) -> Vec<String> {
    let mut row = vec![
        view.data.run.id.clone(),
        format!("ceiling:{}", c.store),
        c.scenario.to_string(),
        c.client.clone(),
        String::new(),
        "false".into(),
        "0".into(),
        format!("store ceiling, {} conns", c.connections),
        String::new(),
        "1".into(),
    ];
    for m in Metric::ALL {
        let v = match m {
            Metric::RequestsPerSec => c.queries_per_sec,
            Metric::MeanUs => c.mean_latency_us,
            Metric::P99Us => c.p99_latency_us.unwrap_or(f64::NAN),
            _ => f64::NAN,
        };
        row.extend([num(v), num(v), num(v)]);
    }
    // slope, growth, disagree, rankable, client_bound, warnings: a store is no cell.
    row.extend([String::new(), "false".into(), "false".into(), String::new(), String::new(), String::new()]);
    row.extend(WHAT_RAN_COLUMNS.map(|_| String::new()));
    row.extend(SLO_COLUMNS.map(|_| String::new()));
    row.extend(COST_COLUMNS.map(|_| String::new()));
    row.extend(SERIES_COLUMNS.map(|_| String::new()));
    row.extend(KIND_COLUMNS.map(|_| String::new()));
    row
}

/// What ran for the row's stack variant (empty for runs recorded before it was kept).
const WHAT_RAN_COLUMNS: [&str; 8] =
    ["server_model", "pool_size", "json_library", "msgpack_library", "database_library", "versions", "protocol", "tls"];

fn what_ran_fields(view: &ReportView, stack: &str, variant: &str) -> [String; 8] {
    let Some(w) = view.data.what_ran.iter().find(|w| w.stack == stack && w.variant == variant) else { return Default::default() };
    let p = w.profile.as_ref();
    let text = |f: fn(&bakeoff_model::records::profile::StackProfile) -> &str| p.map(f).unwrap_or_default().to_string();
    [
        p.map(|p| p.server_model.id().to_string()).unwrap_or_default(),
        w.pool_size.to_string(),
        text(|p| &p.json),
        text(|p| &p.msgpack),
        text(|p| &p.database),
        w.versions_line(),
        w.protocol.to_string(),
        w.tls.clone().unwrap_or_default(),
    ]
}

/// SLO capacity (offered req/s meeting the objective, median and interval over trials, 0 when no
/// rate met it), on each cell's headline row (its last step); empty without an objective.
/// What a request costs, on a cell's headline row whose server CPU was measured (sections/cost.rs):
/// requests one core serves per second, and the price of a million requests at the run's `price`.
const COST_COLUMNS: [&str; 9] = [
    "requests_per_core_second",
    "requests_per_core_second_low",
    "requests_per_core_second_high",
    "price_per_million",
    "price_per_million_low",
    "price_per_million_high",
    "joules_per_request",
    "joules_per_request_low",
    "joules_per_request_high",
];

fn cost_fields(view: &ReportView, c: &CellSummary, cost: &[crate::sections::cost::CostRow]) -> [String; 9] {
    let headline = view.scenarios.iter().flat_map(|s| &s.headline).any(|h| h.cell == c.cell && h.step == c.step);
    let Some(r) = cost.iter().find(|r| headline && r.cell == c.cell) else { return Default::default() };
    let e = |e: Option<&bakeoff_model::statistics::summary::Estimate>| {
        e.map_or([String::new(), String::new(), String::new()], |e| [num(e.median), num(e.ci_low), num(e.ci_high)])
    };
    let ([a, b, c2], [d, e2, f], [g, h, i]) = (e(Some(&r.per_core_second)), e(r.per_million.as_ref()), e(r.joules.as_ref()));
    [a, b, c2, d, e2, f, g, h, i]
}

const SLO_COLUMNS: [&str; 5] = ["slo", "slo_capacity_rps", "slo_capacity_rps_low", "slo_capacity_rps_high", "slo_trials_without"];

fn slo_fields(view: &ReportView, c: &CellSummary) -> [String; 5] {
    let headline = !view.cells.iter().any(|d| d.cell == c.cell && d.step > c.step);
    let Some((slo, s)) = view.slo.as_ref().and_then(|v| v.of(&c.cell).map(|s| (v, s))).filter(|_| headline) else {
        return Default::default();
    };
    let e = &s.capacity;
    [slo.objective.to_string(), num(e.median), num(e.ci_low), num(e.ci_high), s.trials_without.to_string()]
}

/// Shortest round-trip decimal; empty for NaN so spreadsheets see a blank, not text.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}
