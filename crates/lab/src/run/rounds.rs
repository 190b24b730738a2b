//! Which cells are measured in which round: every cell once per round for the run's `trials`
//! rounds, interleaved so drift hits all alike; then, with a precision goal, more rounds of only
//! the cells whose 95% interval on the primary metric is still wider than the target, until all
//! meet it, the time budget would be overrun, or a cell reaches `MAX_TRIALS`. A study's soak cells
//! get their own number of trials, in the first rounds.

use crate::run::cells::Cell;
use crate::run::tally::Tally;
use crate::run::{Event, Lab, RunOutcome};
use bakeoff_model::results::RunInfo;
use bakeoff_model::summary::Metric;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// No cell gets more trials than this, whatever the budget.
pub(crate) const MAX_TRIALS: u32 = 30;

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
