//! What a request costs: per cell, its server CPU per request, the requests one core serves per
//! second (the inverse, its interval's ends inverted), given what a core costs (a study's `price`,
//! `--price core-hour=P`) the price of a million requests, and where the machine has energy
//! counters the joules a request took. Every format reads these rows.

use crate::numbers::{estimate, grouped, significant};
use crate::table::{Cell, Table};
use crate::view::ReportView;
use bakeoff_model::plan::price::CorePrice;
use bakeoff_model::records::results::CellKey;
use bakeoff_model::statistics::summary::{Estimate, Metric};

/// How to read the section, in every format that explains its sections.
pub(crate) const COST_HOW: &str = "A request's cost here is the server's CPU time for it (its whole process tree, \
services it started included). Requests per core-second are 1,000,000 over the CPU µs per request: how many such \
requests one core serves each second, with the CPU interval's ends inverted. Given what a core costs (a study's \
`price`, or --price core-hour=P), a million requests are priced at that CPU time alone: no memory, network or idle \
capacity. Joules per request, where the machine exposes energy counters (RAPL under /sys/class/powercap), are \
the CPU packages' energy over each trial's measurement divided by its requests: every package's, so the load \
generator's share is in them too, and they compare cells of one run on one machine, not machines.";

/// Said where no trial of the run read energy counters: the note's message and its advice.
pub(crate) const NO_ENERGY: (&str, &str) = (
    "joules per request: not measured: no trial of this run read energy counters",
    "this machine exposes none under /sys/class/powercap (RAPL), as most virtual machines do; on a host that does, \
the lab reads them as root",
);

/// One cell's cost.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CostRow {
    /// The cell (its headline step).
    pub cell: CellKey,
    /// Server CPU µs per request.
    pub cpu_us: Estimate,
    /// Requests one core serves per second: 1e6 / `cpu_us`.
    pub per_core_second: Estimate,
    /// The price of a million requests, given a core's price.
    pub per_million: Option<Estimate>,
    /// Joules per request over the trials that read the machine's energy counters.
    pub joules: Option<Estimate>,
}

/// The core price the run's study set (replaced by `--price` when a report is asked with one).
pub fn price(view: &ReportView) -> Option<CorePrice> {
    let v = view.data.run.settings.pointer("/study/price")?;
    serde_json::from_value(v.clone()).ok()
}

/// Every scenario's headline cells whose server CPU was measured (not A/A twins), in the
/// scenarios' order.
pub fn rows(view: &ReportView) -> Vec<CostRow> {
    let price = price(view);
    let measured = |c: &&bakeoff_model::statistics::summary::CellSummary| {
        !c.cell.twin
            && !crate::sections::scenario::cpu_unmeasured(&view.data.trials, c)
            && c.get(Metric::CpuUsPerRequest).median.is_finite()
            && c.get(Metric::CpuUsPerRequest).median > 0.0
    };
    let headline = view.scenarios.iter().flat_map(|sv| sv.headline.iter()).filter(measured);
    headline
        .map(|c| {
            let cpu_us = c.get(Metric::CpuUsPerRequest);
            CostRow {
                cell: c.cell.clone(),
                per_core_second: map(&cpu_us, |us| 1e6 / us),
                per_million: price.map(|p| map(&cpu_us, |us| p.per_million(us))),
                cpu_us,
                joules: joules_per_request(&view.data.trials, &c.cell),
            }
        })
        .collect()
}

/// The median and interval over `cell`'s trials of the packages' joules over the measurement per
/// request it served (every step's); None where no trial read energy counters.
fn joules_per_request(trials: &[bakeoff_model::records::results::TrialRecord], cell: &CellKey) -> Option<Estimate> {
    let per_trial: Vec<f64> = trials
        .iter()
        .filter(|t| &t.cell == cell)
        .filter_map(|t| {
            let requests: u64 = t.load.steps.iter().map(|s| s.requests).sum();
            Some(t.noise.as_ref()?.energy_j? / requests as f64).filter(|j| j.is_finite() && requests > 0)
        })
        .collect();
    (!per_trial.is_empty()).then(|| Estimate::from_values(&per_trial))
}

/// `e` through `f`, its interval's ends kept in order (an inverse swaps them).
fn map(e: &Estimate, f: impl Fn(f64) -> f64) -> Estimate {
    let (a, b) = (f(e.ci_low), f(e.ci_high));
    Estimate { median: f(e.median), ci_low: a.min(b), ci_high: a.max(b), ..*e }
}

/// "12,345 (11,900–12,800)": a figure with its interval's ends.
fn with_ends(e: &Estimate, fmt: impl Fn(f64) -> String) -> String {
    if e.trials < 2 || !e.ci_low.is_finite() || !e.ci_high.is_finite() {
        return fmt(e.median);
    }
    format!("{} ({}–{})", fmt(e.median), fmt(e.ci_low), fmt(e.ci_high))
}

/// The table: a row per measured cell, the price column when a core's price is known.
pub(crate) fn table(view: &ReportView) -> Option<Table> {
    let rows = rows(view);
    if rows.is_empty() {
        return None;
    }
    let price = price(view);
    let price_heading = price.map(|p| format!("per million requests at {p}"));
    let mut headings = vec!["stack", "variant", "scenario", "workers", "CPU µs/req ± 95% CI", "req per core-second (95% CI)"];
    if let Some(h) = &price_heading {
        headings.push(h);
    }
    let energy = rows.iter().any(|r| r.joules.is_some());
    if energy {
        headings.push("mJ per request (95% CI)");
    }
    let mut t = Table::new(&headings);
    for r in &rows {
        let mut row: Vec<Cell> = vec![
            Cell::from(r.cell.stack.clone()),
            Cell::from(r.cell.variant.clone()),
            Cell::from(r.cell.scenario.to_string()),
            Cell::from(r.cell.workers.to_string()),
            Cell::from(estimate(Metric::CpuUsPerRequest, &r.cpu_us)),
            Cell::from(with_ends(&r.per_core_second, grouped)),
        ];
        if let Some(m) = &r.per_million {
            row.push(Cell::from(with_ends(m, significant)));
        }
        if energy {
            row.push(Cell::from(r.joules.as_ref().map_or_else(|| "–".to_string(), |j| with_ends(&map(j, |x| 1e3 * x), significant))));
        }
        t.rows.push(row);
    }
    if !energy {
        t.notes.push((NO_ENERGY.0.to_string(), NO_ENERGY.1.to_string()));
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inverse_swaps_the_interval_ends() {
        let cpu = Estimate { median: 20.0, ci_low: 16.0, ci_high: 25.0, trials: 6, confidence: 0.95 };
        let per_core = map(&cpu, |us| 1e6 / us);
        assert_eq!((per_core.median, per_core.ci_low, per_core.ci_high), (50_000.0, 40_000.0, 62_500.0));
        assert_eq!(with_ends(&per_core, grouped), "50,000 (40,000–62,500)");
    }
}
