//! Latency under load as every format shows it: per cell, p50/p99/p99.9 at each fraction of its own
//! measured capacity (medians over launches, each with its interval) and the knee with its range;
//! text and Markdown a table of p99 per fraction with the knee, HTML a chart per scenario with
//! bands, JSON and CSV every value.

use crate::numbers::{grouped, latency, latency_range};
use crate::table::{Cell, Table, Tone};
use bakeoff_model::records::results::TrialRecord;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::{summarize_curves, CellCurve, KNEE_FACTOR};
use serde::Serialize;

/// Every cell's curve, in cell order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UnderLoadView {
    /// How far p99 may rise over its lowest-load value before the knee.
    pub knee_factor: f64,
    /// One per cell that measured a curve.
    pub cells: Vec<CellCurve>,
}

/// None when no trial of the run measured latency under load.
pub fn under_load_view(trials: &[TrialRecord]) -> Option<UnderLoadView> {
    let cells = summarize_curves(trials);
    (!cells.is_empty()).then_some(UnderLoadView { knee_factor: KNEE_FACTOR, cells })
}

/// "75%".
pub(crate) fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 100.0 * 10.0).round() / 10.0)
}

impl UnderLoadView {
    /// The scenarios with curves, in the order of their ids (as the report lists scenarios).
    pub fn scenarios(&self) -> Vec<Scenario> {
        let mut s: Vec<Scenario> = self.cells.iter().map(|c| c.cell.scenario).collect();
        s.sort_by_key(|s| s.id());
        s.dedup();
        s
    }

    /// Every fraction any cell measured, rising.
    fn fractions(&self) -> Vec<f64> {
        let mut f: Vec<f64> = self.cells.iter().flat_map(|c| c.points.iter().map(|p| p.median.fraction)).collect();
        f.sort_by(f64::total_cmp);
        f.dedup();
        f
    }

    /// The sentences every human-facing format prints above the table.
    pub fn lines(&self) -> Vec<String> {
        let launches = self.cells.iter().map(|c| c.launches).max().unwrap_or(0);
        vec![
            format!(
                "each cell in the open model at fixed fractions of the closed-model req/s it measured in the same launch, once a launch; latency from each request's scheduled send time; each percentile the median over {launches} launch(es), in brackets the order statistics that cover the median launch's value ({})",
                self.coverage()
            ),
            format!(
                "the knee: the highest fraction at which p99 stays within {}x its value at the lowest fraction, given as the range the p99 intervals leave it (one fraction when they settle it, ≥ the top fraction when p99 never left); not determined with fewer than six launches",
                self.knee_factor
            ),
        ]
    }

    /// What the brackets cover: "at least 95%", or the lower coverage too few launches allow.
    fn coverage(&self) -> String {
        let lowest = self.cells.iter().flat_map(|c| c.points.iter().map(|p| p.p99.confidence)).fold(1.0, f64::min);
        if lowest >= bakeoff_model::statistics::robust::CONFIDENCE {
            "at least 95%".into()
        } else if lowest > 0.0 {
            format!("only {:.0}% with so few launches; six give 95%", 100.0 * lowest)
        } else {
            "none with one launch; six give 95%".into()
        }
    }

    /// The knee as a cell of a table: "75%", "50–75%", "≥90%" when p99 held at every fraction,
    /// "not determined (3 launches)" when too few launches measured it, "–" without one.
    pub(crate) fn knee_cell(c: &CellCurve) -> Cell {
        match c.knee_text(percent) {
            Some((text, true)) => Cell::new(text, Tone::Good),
            Some((text, false)) => Cell::new(text, Tone::Warn),
            None if c.knee.is_some() => {
                let launches = if c.launches == 1 { "1 launch".into() } else { format!("{} launches", c.launches) };
                Cell::new(format!("not determined ({launches})"), Tone::Warn)
            }
            None => Cell::from("–"),
        }
    }

    /// Per cell: its capacity, p99 at each fraction, p50 and p99.9 at the top, and the knee.
    pub(crate) fn table(&self) -> Table {
        let fractions = self.fractions();
        let mut headers: Vec<String> = vec!["cell".into(), "capacity req/s".into()];
        headers.extend(fractions.iter().map(|f| format!("p99 at {}", percent(*f))));
        headers.extend(["p50 / p99.9 at the top".into(), "CPU µs/req at the top".into(), "knee".into()]);
        let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
        for c in &self.cells {
            let mut row: Vec<Cell> = vec![Cell::from(c.cell.label()), Cell::from(grouped(c.capacity_rps))];
            for f in &fractions {
                row.push(Cell::from(c.points.iter().find(|p| p.median.fraction == *f).map_or("–".into(), |p| latency_range(&p.p99))));
            }
            let top = c.points.last().map(|p| &p.median);
            row.push(Cell::from(top.map_or("–".into(), |p| format!("{} / {}", latency(p.p50_us), latency(p.p999_us)))));
            row.push(Cell::from(top.and_then(|p| p.cpu_us_per_request()).map_or("–".into(), crate::numbers::sig3)));
            row.push(Self::knee_cell(c));
            t.rows.push(row);
        }
        t
    }
}
