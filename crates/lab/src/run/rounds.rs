//! Which cells are measured in which round: every cell once per round for the run's `trials`
//! rounds, interleaved so drift hits all alike; then, with a precision goal, more rounds of only
//! the cells whose 95% interval on the primary metric is still wider than the target, until all
//! meet it, the time budget would be overrun, or a cell reaches `MAX_TRIALS`. A study's soak cells
//! get their own number of trials, in the first rounds.

use crate::run::cells::Cell;
use crate::run::{Event, Lab, RunOutcome};
use bakeoff_model::results::{CellKey, RunInfo, TrialRecord};
use bakeoff_model::summary::{Estimate, Metric};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// No cell gets more trials than this, whatever the budget.
pub(crate) const MAX_TRIALS: u32 = 30;

/// The primary metric's values of every cell so far, and the cells that failed (never retried).
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) values: BTreeMap<CellKey, Vec<f64>>,
    pub(crate) failed: BTreeSet<CellKey>,
    /// Cells whose load generator ran at its ceiling: their requests/s is a lower bound that more
    /// trials cannot tighten, so precision rounds do not chase them.
    pub(crate) client_bound: BTreeSet<CellKey>,
    pub(crate) trials_done: u32,
}

impl Tally {
    pub(crate) fn meets(&self, key: &CellKey, target: f64) -> bool {
        self.values.get(key).is_some_and(|v| Estimate::from_values(v).meets(target))
    }

    /// Whether another trial of the cell could help it reach `target`: it has not failed, has not
    /// met it, and its throughput is not the client's ceiling (when that is what is ranked).
    pub(crate) fn pending(&self, key: &CellKey, target: f64, metric: Metric) -> bool {
        let capped = metric == Metric::RequestsPerSec && self.client_bound.contains(key);
        !self.failed.contains(key) && !capped && !self.meets(key, target)
    }

    /// Counts a stored trial and keeps its value of `metric` (its last step's).
    pub(crate) fn record(&mut self, key: &CellKey, record: &TrialRecord, metric: Metric) {
        self.trials_done += 1;
        if record.load.warnings.iter().any(|w| matches!(w, bakeoff_load::Warning::ClientSaturated { .. })) {
            self.client_bound.insert(key.clone());
        }
        if let Some(step) = record.load.steps.len().checked_sub(1) {
            self.values.entry(key.clone()).or_default().push(metric.of(record, step));
        }
    }
}

impl Lab<'_> {
    /// Measures `cells` round by round and stores every trial as it is made.
    pub(crate) fn measure_rounds(&mut self, run: &RunInfo, cells: &[&Cell<'_>], outcome: &mut RunOutcome) -> anyhow::Result<()> {
        let started = self.run_started;
        let mut tally = Tally::default();
        let metric = self.settings.rank_by.metric();
        let trials = self.settings.trials;
        let rounds = cells.iter().filter_map(|c| c.soak).map(|s| s.trials).fold(trials, u32::max);
        for round in 1..=rounds {
            // A soak cell is measured in the first rounds only, as many as its own trials.
            let due: Vec<&Cell<'_>> = cells.iter().copied().filter(|c| round <= c.soak.map_or(trials, |s| s.trials)).collect();
            if !self.round(run, &due, round, metric, &mut tally, outcome)? {
                return Ok(());
            }
        }
        let Some(target) = self.settings.precision else { return Ok(()) };
        let budget = self.settings.budget.unwrap_or(Duration::MAX);
        let mut round = self.settings.trials;
        loop {
            // Soak cells have their own trials: precision rounds are for the short cells.
            let pending: Vec<&Cell<'_>> =
                cells.iter().copied().filter(|c| c.soak.is_none() && tally.pending(&c.key(), target, metric)).collect();
            if pending.is_empty() || round >= MAX_TRIALS {
                return Ok(());
            }
            // A round of the pending cells must fit in what is left of the budget.
            let per_trial = (started.elapsed().as_secs_f64() / tally.trials_done.max(1) as f64) * pending.len() as f64;
            if started.elapsed().as_secs_f64() + per_trial > budget.as_secs_f64() {
                (self.events)(Event::BudgetSpent { pending: pending.len() });
                return Ok(());
            }
            round += 1;
            (self.events)(Event::PrecisionRound { round, cells: pending.len() });
            if !self.round(run, &pending, round, metric, &mut tally, outcome)? {
                return Ok(());
            }
        }
    }

    /// One trial of each cell; false when the run was cancelled.
    fn round(
        &mut self,
        run: &RunInfo,
        cells: &[&Cell<'_>],
        round: u32,
        metric: Metric,
        tally: &mut Tally,
        outcome: &mut RunOutcome,
    ) -> anyhow::Result<bool> {
        for cell in cells {
            if self.cancel.load(Ordering::Relaxed) {
                outcome.interrupted = true;
                return Ok(false);
            }
            let key = cell.key();
            (self.events)(Event::TrialStarting { cell: &key, trial: round, trials: self.settings.trials.max(round) });
            match self.measure(cell, round) {
                Ok(mut record) => {
                    record.run_id = run.id.clone();
                    self.sink.record_trial(&record)?;
                    outcome.trials_stored += 1;
                    tally.record(&key, &record, metric);
                    (self.events)(Event::TrialDone(&record));
                }
                Err(e) => {
                    let error = e.to_string();
                    (self.events)(Event::CellFailed { cell: &key, error: error.clone() });
                    tally.failed.insert(key.clone());
                    outcome.failed_cells.push((key, error));
                }
            }
        }
        Ok(true)
    }
}
