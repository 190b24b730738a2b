//! The HTML section on latency under load: per scenario one chart of every stack's p50, p99 and
//! p99.9 against the offered load as a share of the stack's own capacity (log latency axis), p99
//! with its band (the interval over launches), the knee marked, then the table every format shows.

use super::charts::{self, Axes, Scale, Series};
use super::{esc, table};
use crate::numbers::latency;
use crate::sections::under_load::{percent, UnderLoadView};
use crate::view::ReportView;
use bakeoff_model::slo::CellCurve;
use std::fmt::Write;

pub(super) fn render(out: &mut String, view: &ReportView) {
    let Some(u) = &view.under_load else { return };
    out.push_str("<section id=\"under-load\"><h2>Latency under load</h2>\n");
    for l in u.lines() {
        let _ = writeln!(out, "<p class=\"how\">{}.</p>", esc(&l));
    }
    out.push_str("<div class=\"charts\">");
    for scenario in u.scenarios() {
        let cells: Vec<&CellCurve> = u.cells.iter().filter(|c| c.cell.scenario == scenario).collect();
        let series: Vec<Series> = cells.iter().flat_map(|c| curve_series(view, c)).collect();
        let title = format!("{scenario}: latency vs offered load");
        let axes = Axes {
            title: &title,
            x_desc: "offered load, % of the stack's own capacity (solid p99 in its band over launches, dashed p50 below and p99.9 above; | knee)",
            y_desc: "latency",
            x: Scale::Linear,
            y: Scale::Log10,
            x_fmt: &|f| percent(f),
            y_fmt: &|v| latency(v).replace(' ', ""),
        };
        out.push_str(&charts::lines(&axes, &series));
    }
    out.push_str("</div>\n");
    table(out, &u.table());
    out.push_str("</section>\n");
}

/// A cell's three percentile lines in its stack's colour, p99 in its band, and its knee as a
/// vertical mark from p50 to p99.9 at the median curve's knee.
fn curve_series(view: &ReportView, c: &CellCurve) -> Vec<Series> {
    let colour = view.stack_index(&c.cell.stack);
    let line = |name: String, v: fn(&bakeoff_model::slo::LoadPoint) -> f64, dashed: bool, in_legend: bool| Series {
        name,
        colour,
        points: c.points.iter().map(|p| (p.median.fraction, v(&p.median))).collect(),
        dashed,
        in_legend,
        band: Vec::new(),
    };
    let knee = UnderLoadView::knee_cell(c).text;
    let p99 = Series {
        band: c.points.iter().map(|p| (p.median.fraction, p.p99.ci_low, p.p99.ci_high)).collect(),
        ..line(format!("{} (knee {knee})", c.cell.stack), |p| p.p99_us, false, true)
    };
    let mut out = vec![p99, line(String::new(), |p| p.p50_us, true, false), line(String::new(), |p| p.p999_us, true, false)];
    if let Some(p) = c.knee.and_then(|k| c.points.iter().map(|p| &p.median).find(|p| p.fraction == k)) {
        let mark = vec![(p.fraction, p.p50_us), (p.fraction, p.p999_us)];
        out.push(Series { in_legend: false, ..Series::line(String::new(), colour, mark) });
    }
    out
}
