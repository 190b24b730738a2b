//! SLO capacity per cell over its trials: the median with the order-statistic interval every other
//! metric gets, a trial that found no rate meeting the objective counting as 0 req/s.

use super::{Slo, SloStep};
use crate::records::results::{CellKey, TrialRecord};
use crate::statistics::summary::Estimate;
use serde::Serialize;
use std::collections::BTreeMap;

/// One cell's SLO capacity over its trials.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellSlo {
    /// The cell.
    #[serde(flatten)]
    pub cell: CellKey,
    /// The objective.
    pub slo: Slo,
    /// Offered req/s that met the objective, over trials (0 for a trial where no rate did).
    pub capacity: Estimate,
    /// Trials where no step met the objective.
    pub trials_without: u32,
    /// Trials whose step budget ran out before the bracket closed (their capacity is a lower bound).
    pub trials_unconverged: u32,
    /// The closed-model maximums the searches started from, median over trials, req/s.
    pub start_rps: f64,
    /// The trial with the median capacity, and its steps by offered rate (what a chart draws).
    pub median_trial: u32,
    /// That trial's steps, by offered rate.
    pub steps: Vec<SloStep>,
}

impl CellSlo {
    /// Whether some rate met the objective in at least half of the trials.
    pub fn met(&self) -> bool {
        self.capacity.median > 0.0
    }
}

/// One summary per cell whose trials carry a search, in cell order.
pub fn summarize_slo(trials: &[TrialRecord]) -> Vec<CellSlo> {
    let mut groups: BTreeMap<&CellKey, Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.slo.is_some()) {
        groups.entry(&t.cell).or_default().push(t);
    }
    groups.into_iter().map(|(cell, ts)| summarize_cell(cell, &ts)).collect()
}

fn summarize_cell(cell: &CellKey, trials: &[&TrialRecord]) -> CellSlo {
    let searches: Vec<(u32, &super::SloSearch)> = trials.iter().filter_map(|t| t.slo.as_ref().map(|s| (t.trial, s))).collect();
    let capacities: Vec<f64> = searches.iter().map(|(_, s)| s.capacity_rps.unwrap_or(0.0)).collect();
    let capacity = Estimate::from_values(&capacities);
    let starts: Vec<f64> = searches.iter().map(|(_, s)| s.start_rps).collect();
    // The trial closest to the median stands for the cell in charts (first of equals: deterministic).
    let (median_trial, median_search) = searches
        .iter()
        .zip(&capacities)
        .min_by(|a, b| (a.1 - capacity.median).abs().total_cmp(&(b.1 - capacity.median).abs()))
        .map(|((trial, s), _)| (*trial, *s))
        .expect("a group has at least one search");
    let mut steps = median_search.steps.clone();
    steps.sort_by(|a, b| a.offered_rps.total_cmp(&b.offered_rps));
    CellSlo {
        cell: cell.clone(),
        slo: median_search.slo,
        capacity,
        trials_without: searches.iter().filter(|(_, s)| s.capacity_rps.is_none()).count() as u32,
        trials_unconverged: searches.iter().filter(|(_, s)| s.capacity_rps.is_some() && !s.converged).count() as u32,
        start_rps: Estimate::from_values(&starts).median,
        median_trial,
        steps,
    }
}
