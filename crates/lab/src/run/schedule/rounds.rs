//! Which cells are measured in which round: every cell once per round for the run's `trials`
//! rounds, interleaved so drift hits all alike (under the block schedules in a fresh random order
//! per round, so no cell always follows the same one; in a fixed order under `trials`); then, with a precision goal, more rounds of only
//! the cells whose 95% interval on the primary metric is still wider than the target, until all
//! meet it, the time budget would be overrun, or a cell reaches `MAX_TRIALS`. A study's soak cells
//! get their own number of trials, in the first rounds.

use crate::run::cell::bench::CellBench;
use crate::run::events::Event;
use crate::run::planning::cells::Cell;
use crate::run::planning::estimate::trial_weight;
use crate::run::schedule::outcome::RunOutcome;
use crate::run::schedule::tally::{Tally, MAX_TRIALS};
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::records::results::ResultSink;
use bakeoff_model::records::results::RunInfo;
use bakeoff_model::rng::SplitMix64;
use bakeoff_model::statistics::summary::Metric;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Mixed into the run's seed for the rounds' orders, apart from the blocks' own.
const ROUND_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// One round's cells in the order they are measured: a fresh random order under the block
/// schedules, whose cells here (soaks, ramps, sweeps, SLO searches) are not paired by block, so
/// only the order can keep a slow stretch from always meeting the same cell; the given order under
/// `trials`, kept as it was for the side-by-side bench.
fn round_order<T: Copy>(rng: &mut SplitMix64, cells: Vec<T>, schedule: Schedule) -> Vec<T> {
    if !schedule.pairs_blocks() {
        return cells;
    }
    rng.permutation(cells.len()).into_iter().map(|i| cells[i]).collect()
}

/// The trial-by-trial schedule over a lab: a fresh server per trial from its cell bench, the
/// cells in rounds (in a fresh random order under the block schedules), until each has its trials
/// or, with a precision goal, its interval.
pub(crate) struct RoundSchedule<'l, 'a> {
    pub(in crate::run) bench: &'l mut CellBench<'a>,
    pub(in crate::run) sink: &'l mut (dyn ResultSink + 'a),
    /// When the run began: the clock its budget counts from.
    pub(in crate::run) run_started: std::time::Instant,
}

impl RoundSchedule<'_, '_> {
    /// Measures `cells` round by round and stores every trial as it is made.
    pub(crate) fn measure(&mut self, run: &RunInfo, cells: &[&Cell<'_>], outcome: &mut RunOutcome) -> anyhow::Result<()> {
        let started = self.run_started;
        let mut tally = Tally::default();
        // Its own stream of the run's seed: the blocks' orders stay what they were.
        let mut rng = SplitMix64(bakeoff_model::rng::seed_of(&run.id) ^ ROUND_STREAM);
        let metric = self.bench.settings.rank_by.metric();
        let trials = self.bench.settings.trials;
        let rounds = cells.iter().filter_map(|c| c.soak).map(|s| s.trials).fold(trials, u32::max);
        for round in 1..=rounds {
            // A soak cell is measured in the first rounds only, as many as its own trials.
            let due: Vec<&Cell<'_>> = cells.iter().copied().filter(|c| round <= c.soak.map_or(trials, |s| s.trials)).collect();
            let due = round_order(&mut rng, due, self.bench.settings.schedule);
            if !self.round(run, &due, round, metric, &mut tally, outcome)? {
                return Ok(());
            }
        }
        let Some(target) = self.bench.settings.precision else { return Ok(()) };
        let budget = self.bench.settings.budget.unwrap_or(Duration::MAX);
        let mut round = self.bench.settings.trials;
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
                (self.bench.events)(Event::BudgetSpent { pending: pending.len() });
                return Ok(());
            }
            round += 1;
            let work = pending.iter().map(|c| trial_weight(&self.bench.settings, c)).sum();
            (self.bench.events)(Event::PrecisionRound { round, cells: pending.len(), trials: pending.len(), work });
            let pending = round_order(&mut rng, pending, self.bench.settings.schedule);
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
            if self.bench.cancel.load(Ordering::Relaxed) {
                outcome.interrupted = true;
                return Ok(false);
            }
            let key = cell.key();
            let (trials, weight) = (self.bench.settings.trials.max(round), trial_weight(&self.bench.settings, cell));
            (self.bench.events)(Event::TrialStarting { cell: &key, trial: round, trials, weight });
            match self.bench.measure(cell, round) {
                Ok(mut record) => {
                    record.run_id = run.id.clone();
                    self.sink.record_trial(&record)?;
                    outcome.trials_stored += 1;
                    tally.record(&key, &record, metric);
                    (self.bench.events)(Event::TrialDone(&record));
                }
                Err(e) => {
                    let error = e.to_string();
                    (self.bench.events)(Event::CellFailed { cell: &key, error: error.clone() });
                    tally.failed.insert(key.clone());
                    outcome.failed_cells.push((key, error));
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_under_the_block_schedules_take_a_fresh_random_order_and_trials_keep_theirs() {
        let mut rng = SplitMix64(bakeoff_model::rng::seed_of("20261128T000000Z-1") ^ ROUND_STREAM);
        let cells: Vec<usize> = (0..4).collect();
        assert_eq!(round_order(&mut rng, cells.clone(), Schedule::Trials), cells);
        let orders: Vec<Vec<usize>> = (0..20).map(|_| round_order(&mut rng, cells.clone(), Schedule::Blocks)).collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, cells, "every cell once per round");
        }
        // No cell is always first, and no cell always follows the same one.
        let firsts: std::collections::BTreeSet<usize> = orders.iter().map(|o| o[0]).collect();
        assert!(firsts.len() >= 3, "first cells over 20 rounds: {firsts:?}");
        let after_0: std::collections::BTreeSet<Option<usize>> =
            orders.iter().map(|o| o.iter().position(|&c| c == 0).and_then(|i| o.get(i + 1).copied())).collect();
        assert!(after_0.len() >= 3, "what followed cell 0: {after_0:?}");
        let at_once: std::collections::BTreeSet<Vec<usize>> =
            (0..20).map(|_| round_order(&mut rng, cells.clone(), Schedule::AtOnce)).collect();
        assert!(at_once.len() >= 5, "at once shuffles its single cells' rounds too: {at_once:?}");
    }
}
