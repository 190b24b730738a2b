//! SLO capacity as every format shows it: the objective, each cell's capacity over trials (median
//! and interval), how it compares with the cell's closed-model maximum, and the search's cost.

use crate::numbers::{estimate, grouped};
use crate::table::Table;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::slo::{summarize_slo, CellSlo, SearchBudget, Slo};
use bakeoff_model::statistics::summary::Metric;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SloView {
    pub objective: Slo,
    /// What one trial's search could cost; None for a run that did not record it.
    pub budget: Option<SearchBudget>,
    pub cells: Vec<CellSlo>,
}

/// None when no trial of the run carries an SLO search.
pub fn slo_view(settings: &serde_json::Value, trials: &[TrialRecord]) -> Option<SloView> {
    let cells = summarize_slo(trials);
    let objective = cells.first()?.slo;
    let budget = settings.pointer("/load/slo_budget").and_then(|b| serde_json::from_value(b.clone()).ok());
    Some(SloView { objective, budget, cells })
}

impl SloView {
    /// The scenario tables' column heading: "SLO capacity (p99<=10ms)".
    pub fn heading(&self) -> String {
        format!("SLO capacity ({})", self.objective)
    }

    pub fn of(&self, cell: &CellKey) -> Option<&CellSlo> {
        self.cells.iter().find(|c| &c.cell == cell)
    }

    /// "4,210 ±3.2%", "none" when no rate met the objective in most trials, with how many trials
    /// found none when some did.
    pub fn capacity_text(c: &CellSlo) -> String {
        let n = c.capacity.trials;
        let value = if c.met() { estimate(Metric::RequestsPerSec, &c.capacity) } else { "none".into() };
        match c.trials_without {
            0 => value,
            w if w == n => value,
            w => format!("{value} (none in {w} of {n} trials)"),
        }
    }

    /// The sentences every human-facing format prints above the table.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "the highest offered rate (open model) whose {} latency, counted from each request's scheduled send time, stays within {} with errors below {}%, per cell; median over trials with its interval",
            self.objective.percentile.id(),
            crate::numbers::latency(self.objective.limit_us()),
            100.0 * self.objective.max_error_rate
        )];
        if let Some(b) = &self.budget {
            out.push(format!(
                "each trial searches from its closed-model maximum: first {:.0}% of it, then halving until a step passes and bisecting until the bracket is within {:.0}%, at most {} steps of {:.1} s (after {:.1} s of warm-up each)",
                100.0 * bakeoff_model::slo::FIRST_FRACTION,
                100.0 * b.tolerance,
                b.max_steps,
                b.step_duration.as_secs_f64(),
                b.step_warmup.as_secs_f64()
            ));
        }
        let unconverged: u32 = self.cells.iter().map(|c| c.trials_unconverged).sum();
        if unconverged > 0 {
            out.push(format!("{unconverged} trial(s) spent their step budget before the bracket closed: their capacity is a lower bound"));
        }
        for c in self.cells.iter().filter(|c| !c.met()) {
            out.push(format!("no rate met the objective for {}: its latency exceeds it even at low load", c.cell.label()));
        }
        out
    }

    /// Each cell's capacity beside the closed-model maximum its searches started from.
    pub fn table(&self) -> Table {
        let heading = self.heading();
        let mut t = Table::new(&["cell", &heading, "closed-model max (median)", "share of max", "steps (median trial)"]);
        for c in &self.cells {
            let share =
                if c.start_rps > 0.0 && c.met() { format!("{:.0}%", 100.0 * c.capacity.median / c.start_rps) } else { "–".into() };
            t.push(vec![c.cell.label(), Self::capacity_text(c), grouped(c.start_rps), share, c.steps.len().to_string()]);
        }
        t
    }
}
