//! The chart-bearing sections of the HTML report: one per scenario (throughput, relative speed,
//! latency percentiles, memory over time, the full table), concurrency sweeps, soaks and the proxy study.

use super::charts::{self, Axes, Bar, Scale, Series};
use super::{esc, open_explained, table};
use crate::numbers::{grouped, latency, sig3};
use crate::sections::overhead::Stat;
use crate::sections::scenario::ScenarioView;
use crate::sections::tables;
use crate::view::ReportView;
use bakeoff_model::statistics::summary::Metric;
use std::fmt::Write;

fn rps_label(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{}k", grouped(v / 1000.0))
    } else {
        grouped(v)
    }
}

fn quantile_label(q: f64) -> String {
    let p = (q * 100.0 * 1000.0).round() / 1000.0;
    format!("p{p}")
}

fn mib_label(v: f64) -> String {
    sig3(v)
}

fn minutes_label(v: f64) -> String {
    format!("{}s", (v * 60.0).round())
}

fn latency_label(v: f64) -> String {
    latency(v).replace(' ', "")
}

pub(super) fn scenario(out: &mut String, view: &ReportView, sv: &ScenarioView) {
    let _ = writeln!(out, "<section class=\"scenario\" id=\"scenario-{0}\"><h2>Scenario <code>{0}</code></h2>", esc(sv.scenario.id()));
    for l in crate::sections::ceiling::limited(view, sv) {
        let _ = writeln!(out, "<p class=\"warn\">{}: {}.</p>", esc(&l.sentence()), crate::sections::ceiling::LIMIT_ADVICE);
    }
    out.push_str("<div class=\"charts\">");
    throughput_charts(out, view, sv);
    latency_chart(out, view, sv);
    slo_chart(out, view, sv);
    memory_chart(out, view, sv);
    out.push_str("</div>\n");
    relative_table(out, sv);
    out.push_str("<h3>All numbers</h3>\n");
    table(out, &tables::scenario(view, sv));
    out.push_str("</section>\n");
}

/// Throughput: the same bars on a linear and a log2 axis, with the store ceilings as dashed lines.
fn throughput_charts(out: &mut String, view: &ReportView, sv: &ScenarioView) {
    // Throughput: the same bars on a linear and a log2 axis (each major tick doubles), as in seed 000.
    let bars: Vec<Bar> = sv
        .headline
        .iter()
        .filter(|c| c.target_rate.is_none())
        .map(|c| {
            let e = c.get(Metric::RequestsPerSec);
            Bar {
                label: c.cell.label().replace(&format!(" {}", sv.scenario), ""),
                value: e.median,
                low: e.ci_low,
                high: e.ci_high,
                colour: view.stack_index(&c.cell.stack),
                note: rps_label(e.median),
            }
        })
        .collect();
    // Store ceilings: dashed lines across the throughput bars, and a sentence per limited stack.
    let ceilings: Vec<charts::RefLine> = crate::sections::ceiling::for_scenario(view, sv.scenario)
        .iter()
        .map(|c| charts::RefLine {
            value: c.queries_per_sec,
            label: format!("{}: {} q/s", crate::sections::ceiling::label(c), rps_label(c.queries_per_sec)),
        })
        .collect();
    if !bars.is_empty() {
        let title = format!("{}: requests/s (median, 95% CI)", sv.scenario);
        out.push_str(&charts::bars_with_lines(&title, "requests/s", &bars, &ceilings, Scale::Linear, &rps_label));
        let title = format!("{}: requests/s, log2 axis (each tick doubles)", sv.scenario);
        out.push_str(&charts::bars_with_lines(&title, "requests/s", &bars, &ceilings, Scale::Log2, &rps_label));
    }
}

/// Latency percentiles of the headline cells, median over trials.
fn latency_chart(out: &mut String, view: &ReportView, sv: &ScenarioView) {
    let pct: Vec<Series> = sv
        .headline
        .iter()
        .map(|c| {
            Series::line(
                c.cell.label(),
                view.stack_index(&c.cell.stack),
                [(0.5, Metric::P50Us), (0.9, Metric::P90Us), (0.99, Metric::P99Us), (0.999, Metric::P999Us), (0.9999, Metric::P9999Us)]
                    .iter()
                    .map(|&(q, m)| (q, c.get(m).median))
                    .collect(),
            )
        })
        .collect();
    let title = format!("{}: latency percentiles (median over trials)", sv.scenario);
    let axes = Axes {
        title: &title,
        x_desc: "percentile",
        y_desc: "latency",
        x: Scale::Percentile,
        y: Scale::Log10,
        x_fmt: &quantile_label,
        y_fmt: &latency_label,
    };
    out.push_str(&charts::lines(&axes, &pct));
}

/// Each headline cell's SLO search (the trial with the median capacity): the objective's percentile
/// against the offered rate, with the objective as a dashed line; a point under it passed.
fn slo_chart(out: &mut String, view: &ReportView, sv: &ScenarioView) {
    let Some(slo) = &view.slo else { return };
    let mut series: Vec<Series> = sv
        .headline
        .iter()
        .filter_map(|c| slo.of(&c.cell).filter(|s| !s.steps.is_empty()).map(|s| (c, s)))
        .map(|(c, s)| {
            Series::line(
                c.cell.label(),
                view.stack_index(&c.cell.stack),
                s.steps.iter().map(|st| (st.offered_rps, st.latency_us)).collect(),
            )
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let rates = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = rates.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let limit = slo.objective.limit_us();
    series.push(Series::line(format!("objective {}", slo.objective), 6, vec![(lo, limit), (hi, limit)]).dashed());
    let p = slo.objective.percentile.id();
    out.push_str(&latency_vs_rate(&format!("{}: {p} vs offered rate (SLO search, median trial)", sv.scenario), &series));
}

/// Server RSS over the measurement with its fitted line, per headline cell.
fn memory_chart(out: &mut String, view: &ReportView, sv: &ScenarioView) {
    let mut mem = Vec::new();
    for c in &sv.headline {
        let Some(m) = view.memory_of(&c.cell) else { continue };
        let colour = view.stack_index(&c.cell.stack);
        let slope = m.fit.map(|f| format!(" {:+.2} MiB/min{}", f.slope, if m.growing() { " ⚠ growing" } else { "" }));
        mem.push(Series::line(format!("{}{}", c.cell.label(), slope.unwrap_or_default()), colour, m.points.clone()));
        if let (Some(f), Some(first), Some(last)) = (m.fit, m.points.first(), m.points.last()) {
            let line = vec![(first.0, f.intercept + f.slope * first.0), (last.0, f.intercept + f.slope * last.0)];
            mem.push(Series { name: String::new(), colour, points: line, dashed: true, in_legend: false, band: Vec::new() });
        }
    }
    if !mem.is_empty() {
        let title = format!("{}: server RSS over the measurement (trial with the median slope)", sv.scenario);
        let axes = Axes {
            title: &title,
            x_desc: "time since measurement start",
            y_desc: "RSS MiB (process tree)",
            x: Scale::Linear,
            y: Scale::Linear,
            x_fmt: &minutes_label,
            y_fmt: &mib_label,
        };
        out.push_str(&charts::lines(&axes, &mem));
    }
}

fn relative_table(out: &mut String, sv: &ScenarioView) {
    if !sv.relative.is_empty() {
        let over = match sv.ranked_by {
            bakeoff_model::plan::goal::PrimaryMetric::Capacity => "requests/s over the fastest's",
            bakeoff_model::plan::goal::PrimaryMetric::Efficiency => "the most efficient's CPU µs per request over the cell's",
        };
        let _ =
            writeln!(out, "<h3>Relative speed ({over}, 95% interval)</h3><table><tr><th>cell</th><th>relative</th><th>interval</th></tr>");
        for r in &sv.relative {
            let (rel, int) = if r.fastest {
                ("1.00 (fastest)".to_string(), "reference".to_string())
            } else {
                let how = if r.paired.is_some() { format!(", {}", r.pairing()) } else { String::new() };
                let noise = if r.within_noise() { " (within noise)" } else { "" };
                (format!("{:.2}{noise}", r.ratio), format!("{:.2}–{:.2}{how}", r.low, r.high))
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&r.cell.label()),
                esc(&rel),
                esc(&int)
            );
        }
        out.push_str("</table>\n");
    }
}

/// A chart of latency (log scale) against the target request rate.
fn latency_vs_rate(title: &str, series: &[Series]) -> String {
    let axes = Axes {
        title,
        x_desc: "target rate (req/s)",
        y_desc: "latency",
        x: Scale::Linear,
        y: Scale::Log10,
        x_fmt: &rps_label,
        y_fmt: &latency_label,
    };
    charts::lines(&axes, series)
}

pub(super) fn proxy(out: &mut String, view: &ReportView) {
    let Some(p) = &view.proxy else { return };
    out.push_str("<section id=\"proxy\"><h2>Proxy study</h2>\n<p class=\"how\">Each proxy relays to nginx; <code>baseline</code> is nginx served directly. \
        Percentiles are pooled over trials from the merged HDR histograms. Overhead is the proxy's percentile minus the baseline's at the same target rate.</p>\n<div class=\"charts\">");
    for l in &p.lines {
        let series: Vec<Series> = [(Stat::P50, 2), (Stat::P90, 1), (Stat::P99, 0)]
            .iter()
            .map(|&(s, colour)| {
                Series::line(s.label().to_string(), colour, l.points.iter().map(|pt| (pt.target_rate, pt.percentiles.get(s))).collect())
            })
            .collect();
        out.push_str(&latency_vs_rate(&format!("{}: latency vs request rate", l.cell.label()), &series));
    }
    for stat in [Stat::P999, Stat::P9999] {
        let series: Vec<Series> = p
            .lines
            .iter()
            .map(|l| {
                Series::line(
                    l.cell.label(),
                    view.stack_index(&l.cell.stack),
                    l.points.iter().map(|pt| (pt.target_rate, pt.percentiles.get(stat))).collect(),
                )
            })
            .collect();
        out.push_str(&latency_vs_rate(&format!("tail: {} vs request rate", stat.label()), &series));
    }
    let bars: Vec<Bar> = p
        .max
        .iter()
        .map(|m| Bar {
            label: m.cell.stack.clone(),
            value: m.rps.median,
            low: m.rps.ci_low,
            high: m.rps.ci_high,
            colour: view.stack_index(&m.cell.stack),
            note: match m.percent_of_baseline {
                Some(pct) => format!("{} ({pct:.0}%)", rps_label(m.rps.median)),
                None => rps_label(m.rps.median),
            },
        })
        .collect();
    if !bars.is_empty() {
        out.push_str(&charts::bars("maximum throughput, closed model (% of baseline)", "requests/s", &bars, Scale::Linear, &rps_label));
    }
    out.push_str("</div>\n<h3>Latency overhead over the baseline, µs (% of the baseline's value)</h3>\n");
    if let Some(t) = tables::proxy_overhead(view) {
        table(out, &t);
    }
    out.push_str("<h3>Maximum throughput</h3>\n");
    if let Some(t) = tables::proxy_max(view) {
        table(out, &t);
    }
    if let Some(t) = tables::proxy_scenario(view) {
        out.push_str("<h3>All numbers</h3>\n");
        table(out, &t);
    }
    out.push_str("</section>\n");
}

/// SLO capacity: what it is, and each cell's beside its closed-model maximum.
pub(super) fn slo(out: &mut String, view: &ReportView) {
    let Some(s) = &view.slo else { return };
    let _ = writeln!(out, "<section id=\"slo\"><h2>{}</h2>\n<ul>", esc(&s.heading()));
    for l in s.lines() {
        let _ = writeln!(out, "<li>{}</li>", esc(&l));
    }
    out.push_str("</ul>\n");
    table(out, &s.table());
    out.push_str("</section>\n");
}

/// The precision goal's outcome.
pub(super) fn precision(out: &mut String, view: &ReportView) {
    let Some(p) = &view.precision else { return };
    let _ = writeln!(out, "<section id=\"precision\"><h2>Precision (ranked by {})</h2><ul>", esc(&view.policy.primary.describe()));
    for l in p.lines() {
        let _ = writeln!(out, "<li>{}</li>", esc(&l));
    }
    out.push_str("</ul></section>\n");
}

/// The machine's noise, with the busiest other process and the A/A noise floor.
pub(super) fn noise(out: &mut String, view: &ReportView) {
    let Some(t) = crate::sections::tables::noise(view) else { return };
    out.push_str("<section id=\"noise\"><h2>The machine's noise</h2>\n");
    table(out, &t);
    out.push_str("<ul>");
    for l in crate::sections::tables::noise_lines(view) {
        let _ = writeln!(out, "<li>{}</li>", esc(&l));
    }
    out.push_str("</ul></section>\n");
}

/// One chart per soaked cell: each trial's RSS (solid, left axis) and requests/s (dashed, right
/// axis) over the measurement, and the same as a short table.
pub(super) fn soaks(out: &mut String, view: &ReportView) {
    if view.soaks.is_empty() {
        return;
    }
    let how = "Cells measured for minutes. Solid lines: the server tree's RSS (left axis); dashed: requests/s each second (right axis); one colour per trial.";
    open_explained(out, ("soaks", "Soaks: memory and throughput over time"), how);
    for s in &view.soaks {
        let title = crate::sections::soak::title(s);
        let series = |f: fn(&crate::sections::soak::SoakTrial) -> &Vec<(f64, f64)>, what: &str| -> Vec<Series> {
            s.trials.iter().enumerate().map(|(i, t)| Series::line(format!("trial {} {what}", t.trial), i, f(t).clone())).collect()
        };
        let axes = charts::DualAxes {
            title: &title,
            x_desc: "time since measurement start",
            left_desc: "RSS MiB (process tree)",
            right_desc: "requests/s",
            x_fmt: &minutes_label,
            left_fmt: &mib_label,
            right_fmt: &rps_label,
        };
        out.push_str("<div class=\"charts\">");
        out.push_str(&charts::dual_lines(&axes, &series(|t| &t.rss, "RSS"), &series(|t| &t.rps, "req/s")));
        out.push_str("</div>\n");
        table(out, &crate::sections::soak::table(s));
    }
    out.push_str("</section>\n");
}

/// Concurrency sweeps: throughput, mean latency and its spread against the connections, one line
/// per cell (the article's charts of ab at rising -c), then the levels' table with the best trial.
pub(super) fn sweeps(out: &mut String, view: &ReportView) {
    if view.sweeps.is_empty() {
        return;
    }
    let how = "Each point is a level's median over trials; the table adds each median's interval and the best trial, the figure an article that kept the best of its runs would print.";
    open_explained(out, ("sweeps", "Concurrency sweeps"), how);
    for s in &view.sweeps {
        out.push_str("<div class=\"charts\">");
        for (metric, what, of) in crate::sections::sweep::CHARTED {
            let series: Vec<Series> = s
                .series
                .iter()
                .map(|c| {
                    Series::line(
                        c.cell.label(),
                        view.stack_index(&c.cell.stack),
                        c.levels.iter().map(|l| (l.connections as f64, of(l).median)).collect(),
                    )
                })
                .collect();
            let title = format!("{}: {what} by connections", s.scenario);
            let is_rate = metric == Metric::RequestsPerSec;
            let axes = Axes {
                title: &title,
                x_desc: "concurrent connections (log2 axis)",
                y_desc: what,
                x: Scale::Log2,
                y: if is_rate { Scale::Linear } else { Scale::Log10 },
                // The log2 axis may open below one connection: no tick is written there.
                x_fmt: &|v| if v >= 1.0 { format!("{v:.0}") } else { String::new() },
                y_fmt: if is_rate { &rps_label } else { &latency_label },
            };
            out.push_str(&charts::lines(&axes, &series));
        }
        out.push_str("</div>\n");
        let _ = writeln!(out, "<h3>{}</h3>", esc(&crate::sections::sweep::title(s)));
        table(out, &crate::sections::sweep::table(s));
    }
    out.push_str("</section>\n");
}
