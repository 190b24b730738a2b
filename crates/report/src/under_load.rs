//! Latency under load as every format shows it: per cell, p50/p99/p99.9 at each fraction of its own
//! measured capacity (median over the trials that measured it) and the knee; text and Markdown a
//! table of p99 per fraction with the knee, HTML a chart per scenario, JSON and CSV every value.

use crate::numbers::{grouped, latency};
use crate::table::{Cell, Table, Tone};
use bakeoff_model::results::TrialRecord;
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
        let mut f: Vec<f64> = self.cells.iter().flat_map(|c| c.points.iter().map(|p| p.fraction)).collect();
        f.sort_by(f64::total_cmp);
        f.dedup();
        f
    }

    /// The sentences every human-facing format prints above the table.
    pub fn lines(&self) -> Vec<String> {
        let trials = self.cells.iter().map(|c| c.trials).max().unwrap_or(0);
        vec![
            format!(
                "each cell in the open model at fixed fractions of the closed-model req/s its own trial measured; latency from each request's scheduled send time, median over {trials} trial(s)"
            ),
            format!(
                "the knee: the highest fraction at which p99 stays within {}x its value at the lowest fraction; ≥ the top fraction when it never left",
                self.knee_factor
            ),
        ]
    }

    /// The knee as a cell of a table: "75%", "≥100%" when p99 held at every fraction, "–" without one.
    pub(crate) fn knee_cell(c: &CellCurve) -> Cell {
        let top = c.points.last().map(|p| p.fraction);
        match c.knee {
            Some(k) if Some(k) == top => Cell::new(format!("≥{}", percent(k)), Tone::Good),
            Some(k) => Cell::new(percent(k), Tone::Warn),
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
                row.push(Cell::from(c.points.iter().find(|p| p.fraction == *f).map_or("–".into(), |p| latency(p.p99_us))));
            }
            let top = c.points.last();
            row.push(Cell::from(top.map_or("–".into(), |p| format!("{} / {}", latency(p.p50_us), latency(p.p999_us)))));
            row.push(Cell::from(top.and_then(|p| p.cpu_us_per_request()).map_or("–".into(), crate::numbers::sig3)));
            row.push(Self::knee_cell(c));
            t.rows.push(row);
        }
        t
    }
}
