//! The report's charts as inline SVG strings, drawn with plotters' SVG backend (text stays `<text>`, so
//! no fonts are needed). Log axes are drawn as linear axes over log values with explicit ticks, which
//! keeps tick placement exact (each major tick doubles on a log2 axis) and the output deterministic.
//! Depends on plotters and std only; callers pass label formatters.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 360;

/// Okabe–Ito: distinguishable with the common colour-vision deficiencies, and on white.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(0, 0, 0),
];

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Each major tick doubles (seed 000's throughput figure).
    Log2,
    /// Ticks at 1, 2, 5 x 10^k.
    Log10,
    /// Quantiles q placed at -log10(1 - q): p50, p90, p99, p99.9, p99.99 evenly spread by "nines".
    Percentile,
}

impl Scale {
    pub fn to_axis(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.max(1e-9).log2(),
            Scale::Log10 => v.max(1e-9).log10(),
            Scale::Percentile => -(1.0 - v).max(1e-9).log10(),
        }
    }

    fn value_at(self, a: f64) -> f64 {
        match self {
            Scale::Linear => a,
            Scale::Log2 => a.exp2(),
            Scale::Log10 => 10f64.powf(a),
            Scale::Percentile => 1.0 - 10f64.powf(-a),
        }
    }

    /// Axis range (in axis units) covering `lo..hi` (in values), and its ticks.
    fn range_and_ticks(self, lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
        match self {
            Scale::Linear => {
                let hi = if hi > lo { hi } else { lo + 1.0 };
                let lo = lo.min(0.0);
                let step = nice_step((hi - lo) / 6.0);
                let top = (hi / step).ceil() * step;
                let ticks = (0..=((top - lo) / step).round() as i64).map(|i| lo + i as f64 * step).collect();
                (lo, top, ticks)
            }
            Scale::Log2 => {
                let (a, b) = (self.to_axis(lo).floor() - 1.0, self.to_axis(hi).ceil());
                (a, b, (a as i64..=b as i64).map(|i| i as f64).collect())
            }
            Scale::Log10 => {
                let (a, b) = (self.to_axis(lo).floor(), self.to_axis(hi).ceil().max(self.to_axis(lo).floor() + 1.0));
                let mut ticks = Vec::new();
                for e in a as i64..=b as i64 {
                    for m in [1.0, 2.0, 5.0] {
                        let t = (m * 10f64.powi(e as i32)).log10();
                        if t >= a - 1e-9 && t <= b + 1e-9 {
                            ticks.push(t);
                        }
                    }
                }
                (a, b, ticks)
            }
            Scale::Percentile => (0.0, 4.3, [0.5f64, 0.9, 0.99, 0.999, 0.9999].iter().map(|&q| self.to_axis(q)).collect()),
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.max(1e-12).log10().floor());
    let m = raw / p;
    p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// A linear f64 axis with exactly the given ticks (plotters' own pick "nice" decimal ticks, which
/// on a log axis would not fall on powers).
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticked {
        Ticked { lo, hi, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let r = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (r * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Only bold grid lines: the ticks are already the lines worth drawing.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

pub struct Bar {
    pub label: String,
    pub value: f64,
    /// 95% interval, drawn as a whisker when it differs from the value.
    pub low: f64,
    pub high: f64,
    pub colour: usize,
    /// Printed above the bar.
    pub note: String,
}

pub struct Series {
    pub name: String,
    pub colour: usize,
    /// In values, not axis units.
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
    /// Hidden from the legend (e.g. fitted lines already named by their data line).
    pub in_legend: bool,
    /// An interval around the line, shaded in its colour: (x, low, high) per point; empty for none.
    pub band: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A solid line, named in the legend: what most charts draw.
    pub fn line(name: String, colour: usize, points: Vec<(f64, f64)>) -> Series {
        Series { name, colour, points, dashed: false, in_legend: true, band: Vec::new() }
    }

    /// The same line, dashed (an objective, a second axis).
    pub fn dashed(self) -> Series {
        Series { dashed: true, ..self }
    }
}

pub struct Axes<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub x: Scale,
    pub y: Scale,
    pub x_fmt: &'a dyn Fn(f64) -> String,
    pub y_fmt: &'a dyn Fn(f64) -> String,
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn svg_or_note(r: Res<()>, svg: String) -> String {
    match r {
        Ok(()) => svg,
        Err(e) => format!("<p class=\"warn\">chart not drawn: {e}</p>"),
    }
}

/// A white drawing area of the report's size over `svg`.
fn canvas(svg: &mut String) -> Res<DrawingArea<SVGBackend<'_>, Shift>> {
    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root)
}

/// Every chart's frame: the title above, the same margin, and room for the x and y tick labels.
fn frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    (x_labels, y_labels): (u32, u32),
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder.caption(title, ("sans-serif", 17)).margin(12).x_label_area_size(x_labels).y_label_area_size(y_labels);
    builder
}

/// A dashed horizontal line across a bar chart (a store ceiling), labelled at its right end.
pub struct RefLine {
    pub value: f64,
    pub label: String,
}

/// A bar per entry, with interval whiskers.
pub fn bars(title: &str, y_desc: &str, bars: &[Bar], y: Scale, y_fmt: &dyn Fn(f64) -> String) -> String {
    bars_with_lines(title, y_desc, bars, &[], y, y_fmt)
}

/// Bars with dashed reference lines across them.
pub fn bars_with_lines(title: &str, y_desc: &str, bars: &[Bar], lines: &[RefLine], y: Scale, y_fmt: &dyn Fn(f64) -> String) -> String {
    let mut svg = String::new();
    let r = draw_bars(&mut svg, title, y_desc, bars, lines, y, y_fmt);
    svg_or_note(r, svg)
}

fn draw_bars(
    svg: &mut String,
    title: &str,
    y_desc: &str,
    bars: &[Bar],
    lines: &[RefLine],
    y: Scale,
    y_fmt: &dyn Fn(f64) -> String,
) -> Res<()> {
    let positive = bars.iter().map(|b| b.value).filter(|v| *v > 0.0);
    let lo = positive.clone().fold(f64::INFINITY, f64::min);
    let hi = bars.iter().map(|b| b.high.max(b.value)).chain(lines.iter().map(|l| l.value)).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (1.0, 2.0) };
    let (y0, y1, yticks) = y.range_and_ticks(if y == Scale::Linear { 0.0 } else { lo }, hi * 1.08);
    let n = bars.len().max(1);
    let xticks: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    let root = canvas(svg)?;
    let mut chart = frame(&root, title, (34, 78)).build_cartesian_2d(Ticked::new(0.0, n as f64, xticks), Ticked::new(y0, y1, yticks))?;
    let label = |x: &f64| bars.get(x.floor() as usize).map(|b| b.label.clone()).unwrap_or_default();
    let ylabel = |v: &f64| y_fmt(y.value_at(*v));
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .x_label_formatter(&label)
        .y_label_formatter(&ylabel)
        .y_desc(y_desc)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 13))
        .draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
        let top = y.to_axis(b.value.max(1e-9)).max(y0);
        Rectangle::new([(i as f64 + 0.18, y0), (i as f64 + 0.82, top)], colour(b.colour).filled())
    }))?;
    chart.draw_series(bars.iter().enumerate().filter(|(_, b)| b.high > b.low).map(|(i, b)| {
        let (l, h) = (y.to_axis(b.low.max(1e-9)).max(y0), y.to_axis(b.high).min(y1));
        let x = i as f64 + 0.5;
        PathElement::new(vec![(x, l), (x, h)], BLACK.stroke_width(2))
    }))?;
    chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
        let top = y.to_axis(b.high.max(b.value)).min(y1);
        let style = ("sans-serif", 12).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
        EmptyElement::at((i as f64 + 0.5, top)) + Text::new(b.note.clone(), (0, -4), style)
    }))?;
    let ink = RGBColor(80, 80, 80);
    for l in lines.iter().filter(|l| l.value > 0.0) {
        let v = y.to_axis(l.value).clamp(y0, y1);
        // Dashes drawn as segments (plotters' dashed element needs a feature this build leaves out).
        let (dash, gap) = (n as f64 / 60.0, n as f64 / 120.0);
        let dashes = (0..).map(|i| i as f64 * (dash + gap)).take_while(|x| *x < n as f64);
        chart.draw_series(dashes.map(|x| PathElement::new(vec![(x, v), ((x + dash).min(n as f64), v)], ink.stroke_width(2))))?;
        let style = ("sans-serif", 12).into_font().color(&ink).pos(Pos::new(HPos::Right, VPos::Bottom));
        chart.draw_series(std::iter::once(EmptyElement::at((n as f64, v)) + Text::new(l.label.clone(), (-4, -3), style)))?;
    }
    root.present()?;
    Ok(())
}

/// Lines over two scaled axes with a legend.
pub fn lines(axes: &Axes, series: &[Series]) -> String {
    let mut svg = String::new();
    let r = draw_lines(&mut svg, axes, series);
    svg_or_note(r, svg)
}

fn extent(series: &[Series], f: impl Fn(&(f64, f64)) -> f64, positive: bool) -> (f64, f64) {
    let vals = series.iter().flat_map(|s| s.points.iter()).map(f).filter(|v| v.is_finite() && (!positive || *v > 0.0));
    vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)))
}

fn draw_lines(svg: &mut String, axes: &Axes, series: &[Series]) -> Res<()> {
    let (xl, xh) = extent(series, |p| p.0, axes.x != Scale::Linear);
    let (yl, yh) = extent(series, |p| p.1, axes.y != Scale::Linear);
    // A band reaches past its line: the axis holds it too.
    let ends = series.iter().flat_map(|s| s.band.iter().flat_map(|b| [b.1, b.2]));
    let (yl, yh) = ends.filter(|v| v.is_finite() && (axes.y == Scale::Linear || *v > 0.0)).fold((yl, yh), |(a, b), v| (a.min(v), b.max(v)));
    let (xl, xh) = if xl.is_finite() { (xl, xh) } else { (1.0, 2.0) };
    let (yl, yh) = if yl.is_finite() { (yl, yh) } else { (1.0, 2.0) };
    let (x0, x1, xticks) = axes.x.range_and_ticks(xl, xh);
    let (y0, y1, yticks) = axes.y.range_and_ticks(yl, if axes.y == Scale::Linear { yh * 1.1 } else { yh });
    let root = canvas(svg)?;
    let mut chart = frame(&root, axes.title, (40, 78)).build_cartesian_2d(Ticked::new(x0, x1, xticks), Ticked::new(y0, y1, yticks))?;
    let xlabel = |v: &f64| (axes.x_fmt)(axes.x.value_at(*v));
    let ylabel = |v: &f64| (axes.y_fmt)(axes.y.value_at(*v));
    draw_grid(&mut chart, (&xlabel, axes.x_desc), (&ylabel, axes.y_desc))?;
    // Bands first, under every line.
    for s in series.iter().filter(|s| !s.band.is_empty()) {
        let finite = s.band.iter().filter(|b| b.0.is_finite() && b.1.is_finite() && b.2.is_finite());
        let to = |x: f64, y: f64| (axes.x.to_axis(x), axes.y.to_axis(y));
        let outline: Vec<(f64, f64)> = finite.clone().map(|b| to(b.0, b.2)).chain(finite.rev().map(|b| to(b.0, b.1))).collect();
        chart.draw_series(std::iter::once(Polygon::new(outline, colour(s.colour).mix(0.18).filled())))?;
    }
    for s in series {
        let pts: Vec<(f64, f64)> =
            s.points.iter().filter(|p| p.0.is_finite() && p.1.is_finite()).map(|&(x, y)| (axes.x.to_axis(x), axes.y.to_axis(y))).collect();
        let c = colour(s.colour);
        let drawn = if s.dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 4, c.stroke_width(2)))?
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
        };
        if s.in_legend {
            drawn.label(s.name.clone()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        }
        if !s.dashed && pts.len() <= 12 {
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}

/// Two quantities over one time axis: `left` series on the left axis (solid), `right` series on
/// the right axis (dashed), each axis linear from zero. A soak's RSS and requests/s in one picture.
pub struct DualAxes<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub left_desc: &'a str,
    pub right_desc: &'a str,
    pub x_fmt: &'a dyn Fn(f64) -> String,
    pub left_fmt: &'a dyn Fn(f64) -> String,
    pub right_fmt: &'a dyn Fn(f64) -> String,
}

pub fn dual_lines(axes: &DualAxes, left: &[Series], right: &[Series]) -> String {
    let mut svg = String::new();
    let r = draw_dual(&mut svg, axes, left, right);
    svg_or_note(r, svg)
}

fn draw_dual(svg: &mut String, axes: &DualAxes, left: &[Series], right: &[Series]) -> Res<()> {
    let (xl, xh) = extent(left, |p| p.0, false);
    let (xr, xs) = extent(right, |p| p.0, false);
    let (x0, x1, xticks) = Scale::Linear.range_and_ticks(xl.min(xr).min(0.0), xh.max(xs).max(1e-3));
    let top = |series: &[Series]| extent(series, |p| p.1, false).1.max(1e-9) * 1.1;
    let (l0, l1, lticks) = Scale::Linear.range_and_ticks(0.0, top(left));
    let (r0, r1, rticks) = Scale::Linear.range_and_ticks(0.0, top(right));
    let root = canvas(svg)?;
    let mut chart = frame(&root, axes.title, (40, 70))
        .right_y_label_area_size(70)
        .build_cartesian_2d(Ticked::new(x0, x1, xticks.clone()), Ticked::new(l0, l1, lticks))?
        .set_secondary_coord(Ticked::new(x0, x1, xticks), Ticked::new(r0, r1, rticks));
    let xlabel = |v: &f64| (axes.x_fmt)(*v);
    let llabel = |v: &f64| (axes.left_fmt)(*v);
    let rlabel = |v: &f64| (axes.right_fmt)(*v);
    draw_grid(&mut chart, (&xlabel, axes.x_desc), (&llabel, axes.left_desc))?;
    chart.configure_secondary_axes().y_label_formatter(&rlabel).y_desc(axes.right_desc).label_style(("sans-serif", 13)).draw()?;
    let finite = |s: &Series| s.points.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect::<Vec<_>>();
    for s in left {
        let c = colour(s.colour);
        let drawn = chart.draw_series(LineSeries::new(finite(s), c.stroke_width(2)))?;
        drawn.label(s.name.clone()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
    }
    for s in right {
        let c = colour(s.colour);
        let drawn = chart.draw_secondary_series(DashedLineSeries::new(finite(s), 6, 4, c.stroke_width(2)))?;
        drawn
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y), (x + 12, y), (x + 20, y)], c.stroke_width(1)));
    }
    draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present()?;
    Ok(())
}

/// The grid, tick labels and axis names of a line chart, as `(formatter, name)` per axis.
fn draw_grid(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<Ticked, Ticked>>,
    (x_fmt, x_desc): (&dyn Fn(&f64) -> String, &str),
    (y_fmt, y_desc): (&dyn Fn(&f64) -> String, &str),
) -> Res<()> {
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .x_label_formatter(x_fmt)
        .y_label_formatter(y_fmt)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 13))
        .draw()?;
    Ok(())
}

/// The series' legend box at `position`, the same on every chart.
fn draw_legend<'a, CT: CoordTranslate>(chart: &mut ChartContext<'a, SVGBackend<'a>, CT>, position: SeriesLabelPosition) -> Res<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_ticks_double() {
        let (a, b, t) = Scale::Log2.range_and_ticks(1000.0, 100_000.0);
        assert_eq!((a, b), (8.0, 17.0));
        assert!(t.windows(2).all(|w| Scale::Log2.value_at(w[1]) / Scale::Log2.value_at(w[0]) == 2.0));
    }

    #[test]
    fn percentile_axis_spreads_nines_evenly() {
        assert!((Scale::Percentile.to_axis(0.99) - 2.0).abs() < 1e-9);
        assert!((Scale::Percentile.to_axis(0.9999) - 4.0).abs() < 1e-9);
    }
}
