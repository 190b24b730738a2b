//! Store ceilings beside the stacks: the backing store's own throughput for the scenario's query from
//! a native client at the run's connection count (products: sqlite / postgres; document: docstore).
//! Each format shows a ceiling as a distinct row (and the HTML as a dashed line across the throughput
//! bars), and says when a stack reaches more than `LIMIT_SHARE` of its store's ceiling.

use crate::numbers::{grouped, latency};
use crate::sections::scenario::ScenarioView;
use crate::table::{Cell, Table};
use crate::view::ReportView;
use bakeoff_model::records::results::{CeilingRecord, StoreKind};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::summary::{CellSummary, Metric};

/// A stack above this share of its store's ceiling is limited by the store, not by its language.
pub const LIMIT_SHARE: f64 = 0.70;

pub const LIMIT_ADVICE: &str = "the database, not the language, is the limit here";

/// The run's ceilings for a scenario, in recording order.
pub fn for_scenario<'a>(view: &'a ReportView, scenario: Scenario) -> Vec<&'a CeilingRecord> {
    view.data.ceilings.iter().filter(|c| c.scenario == scenario).collect()
}

/// "store ceiling (postgres, pgbench 15.18, 64 conns)".
pub fn label(c: &CeilingRecord) -> String {
    format!("store ceiling ({}, {}, {} conns)", c.store, c.client, c.connections)
}

/// The store a cell of `scenario` reads: document -> docstore; products -> postgres for variants
/// named after PostgreSQL (the stacks' convention, `variant = "postgres"`), sqlite otherwise.
pub fn store_of(scenario: Scenario, variant: &str) -> Option<StoreKind> {
    match scenario {
        Scenario::Document => Some(StoreKind::Docstore),
        Scenario::Products if variant.contains("postgres") || variant == "pg" => Some(StoreKind::Postgres),
        Scenario::Products => Some(StoreKind::Sqlite),
        _ => None,
    }
}

/// A closed-model headline cell above `LIMIT_SHARE` of its store's ceiling.
pub struct Limited<'a> {
    pub cell: &'a CellSummary,
    pub ceiling: &'a CeilingRecord,
    /// Cell requests/s over ceiling queries/s, in percent.
    pub percent: f64,
}

impl Limited<'_> {
    pub fn sentence(&self) -> String {
        format!(
            "{} reaches {:.0}% of the {} store ceiling ({} of {} queries/s)",
            self.cell.cell.label(),
            self.percent,
            self.ceiling.store,
            grouped(self.cell.get(Metric::RequestsPerSec).median),
            grouped(self.ceiling.queries_per_sec)
        )
    }
}

/// Every closed-model headline cell of `sv` above `LIMIT_SHARE` of its store's ceiling.
pub fn limited<'a>(view: &'a ReportView, sv: &'a ScenarioView) -> Vec<Limited<'a>> {
    let ceilings = for_scenario(view, sv.scenario);
    let mut out = Vec::new();
    for cell in sv.headline.iter().filter(|c| c.target_rate.is_none()) {
        let Some(store) = store_of(cell.cell.scenario, &cell.cell.variant) else { continue };
        // The last ceiling of the store (one per run in practice).
        let Some(ceiling) = ceilings.iter().rev().find(|c| c.store == store && c.queries_per_sec > 0.0) else { continue };
        let percent = 100.0 * cell.get(Metric::RequestsPerSec).median / ceiling.queries_per_sec;
        if percent > 100.0 * LIMIT_SHARE {
            out.push(Limited { cell, ceiling, percent });
        }
    }
    out
}

/// Appends the scenario's ceilings to its table (one row each, named "store ceiling (...)", with the
/// columns a native client has: queries/s, p99) and a note per stack limited by its store.
pub fn add_rows(t: &mut Table, view: &ReportView, sv: &ScenarioView) {
    let ceilings = for_scenario(view, sv.scenario);
    if ceilings.is_empty() {
        return;
    }
    let limited = limited(view, sv);
    for c in ceilings {
        let notes = limited.iter().filter(|l| std::ptr::eq(l.ceiling, c)).map(|l| (l.sentence(), LIMIT_ADVICE.to_string()));
        let refs = t.note_refs(notes, "");
        let dash = || "–".to_string();
        let mut row: Vec<Cell> = [
            label(c),
            "native client".into(),
            dash(),
            format!("{:.0} s", c.duration_s),
            format!("{} queries/s", grouped(c.queries_per_sec)),
            "ceiling".into(),
            dash(),
            dash(),
            c.p99_latency_us.map(latency).unwrap_or_else(dash),
        ]
        .map(Cell::from)
        .into();
        row.resize(t.headers.len() - 1, Cell::from(dash()));
        row.push(refs);
        t.rows.push(row);
    }
}

#[cfg(test)]
mod tests {
    use super::{store_of, Scenario, StoreKind};

    #[test]
    fn stores_of_cells() {
        assert_eq!(store_of(Scenario::Products, "postgres"), Some(StoreKind::Postgres));
        assert_eq!(store_of(Scenario::Products, "default"), Some(StoreKind::Sqlite));
        assert_eq!(store_of(Scenario::Document, "default"), Some(StoreKind::Docstore));
        assert_eq!(store_of(Scenario::Hello, "default"), None);
    }
}
