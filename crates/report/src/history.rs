//! `bakeoff history`: the A/B verdicts of a results file's successive runs (`bench --cmd A --cmd
//! B`), per scenario and metric, oldest first, and their chained product. Where each run's A is
//! the build the run before measured as B (the last accepted build against the change), the product
//! of the B / A ratios is the change since the first run, so a creep of many steps, each within
//! noise, shows. Its interval adds the steps' log variances (each step's 95% interval read as a
//! normal one), as independent runs' do. Rendered as text, Markdown, JSON, or HTML with a chart per
//! trend.

use crate::formats::Format;
use crate::numbers::metric_value;
use crate::sections::side_by_side::verdict_word;
use crate::table::Table;
use bakeoff_model::records::metric::Metric;
use bakeoff_model::records::run_data::RunData;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::comparison::{Change, MetricChange, SideBySide};
use serde::Serialize;
use std::fmt::Write;

/// z(0.975): a 95% interval's half-width in standard errors.
const Z95: f64 = 1.959_964;

/// One run's B / A on one metric, and the chain up to it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Step {
    /// The run.
    pub run: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// A's name (its stack, `adhoc/NAME`).
    pub a: String,
    /// B's name.
    pub b: String,
    /// A's and B's medians, in the metric's unit.
    pub median_a: f64,
    /// B's median.
    pub median_b: f64,
    /// B / A, paired block by block.
    pub ratio: f64,
    /// Its 95% interval's ends; None where the run had none (too few shared blocks).
    pub low: Option<f64>,
    /// The upper end.
    pub high: Option<f64>,
    /// What the run called it.
    pub verdict: Change,
    /// The product of the ratios from the first run to this one.
    pub chained: f64,
    /// Its 95% interval's ends; None once a step had no interval.
    pub chained_low: Option<f64>,
    /// The upper end.
    pub chained_high: Option<f64>,
}

/// One scenario's metric over the runs, oldest first.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Trend {
    /// The scenario.
    pub scenario: Scenario,
    /// The metric.
    pub metric: Metric,
    /// One per run that measured it.
    pub steps: Vec<Step>,
}

/// The log ratio's standard error a 95% interval implies.
fn log_se(low: f64, high: f64) -> f64 {
    (high / low).ln() / (2.0 * Z95)
}

/// The step of `c` in `data`'s A/B `pair`, chained onto `before`.
fn step(data: &RunData, pair: &SideBySide, c: &MetricChange, before: Option<&Step>) -> Step {
    let chained = before.map_or(1.0, |s| s.chained) * c.ratio;
    let before_var = match before {
        None => Some(0.0),
        Some(s) => s.chained_low.zip(s.chained_high).map(|(l, h)| log_se(l, h).powi(2)),
    };
    let own_var = c.low.zip(c.high).filter(|(l, h)| *l > 0.0 && *h > 0.0).map(|(l, h)| log_se(l, h).powi(2));
    let half = before_var.zip(own_var).map(|(a, b)| Z95 * (a + b).sqrt());
    Step {
        run: data.run.id.clone(),
        started_at: data.run.started_at.clone(),
        a: pair.a.stack.clone(),
        b: pair.b.stack.clone(),
        median_a: c.median_a,
        median_b: c.median_b,
        ratio: c.ratio,
        low: c.low,
        high: c.high,
        verdict: c.verdict,
        chained,
        chained_low: half.map(|h| chained * (-h).exp()),
        chained_high: half.map(|h| chained * h.exp()),
    }
}

/// The trends of `runs` (in any order): every run with an A/B, oldest first, each read as its
/// report reads it; the trends in scenario order, then the A/B's metric order.
pub fn history(runs: &[RunData]) -> Vec<Trend> {
    let mut with_ab: Vec<(&RunData, Vec<SideBySide>)> =
        runs.iter().map(|d| (d, crate::ReportView::new(d).side_by_side)).filter(|(_, ab)| !ab.is_empty()).collect();
    with_ab.sort_by(|a, b| a.0.run.started_at.cmp(&b.0.run.started_at).then_with(|| a.0.run.id.cmp(&b.0.run.id)));
    let mut trends: Vec<Trend> = Vec::new();
    for (data, pairs) in &with_ab {
        for pair in pairs {
            for c in &pair.changes {
                let at = match trends.iter().position(|t| t.scenario == pair.a.scenario && t.metric == c.metric) {
                    Some(i) => i,
                    None => {
                        trends.push(Trend { scenario: pair.a.scenario, metric: c.metric, steps: Vec::new() });
                        trends.len() - 1
                    }
                };
                let next = step(data, pair, c, trends[at].steps.last());
                trends[at].steps.push(next);
            }
        }
    }
    let order = |m: Metric| bakeoff_model::statistics::comparison::SIDE_BY_SIDE.iter().position(|&x| x == m);
    trends.sort_by(|a, b| a.scenario.cmp(&b.scenario).then_with(|| order(a.metric).cmp(&order(b.metric))));
    trends
}

/// "0.987x (0.975–0.999)", or the ratio with why it has none.
fn interval(ratio: f64, low: Option<f64>, high: Option<f64>) -> String {
    match low.zip(high) {
        Some((l, h)) => format!("{ratio:.3}x ({l:.3}–{h:.3})"),
        None => format!("{ratio:.3}x (no 95% interval)"),
    }
}

/// One trend as a table: a row per run.
fn table(t: &Trend) -> Table {
    let mut table = Table::new(&["run", "B against A", "A", "B", "B / A (95%)", "verdict", "since the first run (95%)"]);
    for s in &t.steps {
        table.push([
            s.run.clone(),
            format!("{} against {}", s.b, s.a),
            metric_value(t.metric, s.median_a),
            metric_value(t.metric, s.median_b),
            interval(s.ratio, s.low, s.high),
            verdict_word(t.metric, s.verdict).to_string(),
            interval(s.chained, s.chained_low, s.chained_high),
        ]);
    }
    table
}

/// "hello, requests/s".
fn title(t: &Trend) -> String {
    format!("{}, {}", t.scenario, t.metric.heading())
}

/// What the chain assumes, said under every format's tables.
const CHAINED: &str = "\"since the first run\" multiplies the runs' B / A ratios: the change since the first run \
where each run's A is the build the run before measured as B; its interval adds the steps' log variances";

/// `trends` in `format` (CSV is not offered: a history is written as text, Markdown, JSON or HTML).
pub fn render(trends: &[Trend], format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(trends).expect("a history serializes") + "\n",
        Format::Markdown => {
            let mut out = String::from("# bakeoff history\n\n");
            for t in trends {
                let _ = writeln!(out, "## {}\n", title(t));
                crate::formats::markdown::table(&mut out, &table(t));
                out.push('\n');
            }
            let _ = writeln!(out, "{CHAINED}.");
            out
        }
        Format::Html => {
            let mut out = format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>bakeoff history</title><style>{}</style></head><body>\n<h1>bakeoff history</h1>\n",
                crate::formats::html::CSS
            );
            for t in trends {
                let _ = writeln!(out, "<section><h2>{}</h2>", crate::formats::html::esc(&title(t)));
                out.push_str(&crate::formats::html::trend_chart(&title(t), &t.steps));
                crate::formats::html::table(&mut out, &table(t));
                out.push_str("</section>\n");
            }
            let _ = writeln!(out, "<p class=\"how\">{}.</p>\n</body></html>", crate::formats::html::esc(CHAINED));
            out
        }
        Format::Text | Format::Csv => {
            let mut out = String::new();
            for t in trends {
                let _ = writeln!(out, "== {} ==", title(t));
                crate::formats::text::layout(&mut out, &table(t));
                out.push('\n');
            }
            let _ = writeln!(out, "{CHAINED}.");
            out
        }
    }
}
