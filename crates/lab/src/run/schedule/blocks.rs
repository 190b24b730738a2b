//! The paired block schedule: per scenario, every cell's server starts side by side on the server
//! CPUs and is warmed once; then each block measures every cell for one short slice, in a fresh
//! random order, so a slow stretch of the machine hits every cell alike and cancels in their
//! ratios. The servers are relaunched a few times per run, so start-to-start variation is sampled
//! too. Each slice is stored as the cell's trial (its number is the block, its launch recorded)
//! as soon as it is measured; the checks after the load run once per launch, before the launch's
//! last slices are stored, so their findings travel with the cell's results. A precision goal is
//! met on the ratios a scenario ranks, paired block by block, not on each cell's own interval.

use crate::error::LabError;
use crate::run::cell::bench::CellBench;
use crate::run::cell::served::{Served, Tree};
use crate::run::cell::start::measured_tree;
use crate::run::events::Event;
use crate::run::planning::cells::Cell;
use crate::run::planning::estimate::trial_weight;
use crate::run::planning::launches::LaunchPlan;
use crate::run::planning::settings::LoadSettings;
use crate::run::schedule::outcome::RunOutcome;
use crate::run::schedule::tally::{Tally, MAX_TRIALS};
use bakeoff_model::plan::schedule::{Lengthening, Schedule};
use bakeoff_model::records::results::{LabWarning, ResultSink, RunInfo, TrialRecord};
use bakeoff_model::rng::{seed_of, SplitMix64};
use bakeoff_model::scenario::Scenario;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A co-resident server may use this share of one core while the others are measured.
const IDLE_LIMIT_PERCENT: f64 = 2.0;
/// Idle time shorter than this says nothing of a server's idle CPU (loaded at once, a server is
/// hardly ever idle: its idle CPU then comes from its own equal share).
const MIN_IDLE_WALL_S: f64 = 1.0;
/// The block schedule over a lab: its cell bench starts, loads and stops the servers; the
/// schedule owns their order, the pairing of their slices, the launches and the stopping rule.
pub(crate) struct BlockSchedule<'l, 'a> {
    pub(in crate::run) bench: &'l mut CellBench<'a>,
    pub(in crate::run) sink: &'l mut (dyn ResultSink + 'a),
    /// When the run began: the clock its budget counts from.
    pub(in crate::run) run_started: Instant,
}

/// What every launch of a run's block schedule shares: the run, the blocks' random orders, the
/// tally of what was measured and the run's outcome.
pub(in crate::run) struct BlockRun<'r> {
    run: &'r RunInfo,
    pub(in crate::run) rng: SplitMix64,
    pub(in crate::run) tally: Tally,
    pub(in crate::run) outcome: &'r mut RunOutcome,
}

/// One server of a launch and what the launch has measured of it.
pub(in crate::run) struct Resident<'c, 'a> {
    pub(in crate::run) cell: &'c Cell<'a>,
    label: String,
    pub(in crate::run) server: Option<Served>,
    pub(in crate::run) addr: SocketAddr,
    pub(in crate::run) tree: Tree,
    /// Its slices' length over the run's (`Tally::slice_factor`).
    pub(in crate::run) slice_factor: u32,
    /// The slice of the launch's last block, stored after the checks that follow the load.
    held: Option<TrialRecord>,
    /// CPU seconds of its tree while it was being loaded, and the wall seconds of that.
    pub(in crate::run) busy_cpu_s: f64,
    pub(in crate::run) busy_wall_s: f64,
    /// Wall seconds spent starting, warming and checking it: charged to its launch's last slice,
    /// so a trial's `elapsed_s` adds up to what the run spent on the cell.
    overhead_s: f64,
    pub(in crate::run) failed: bool,
    /// Its latency-under-load curve of this launch is measured.
    pub(in crate::run) curve_taken: bool,
}

impl BlockSchedule<'_, '_> {
    /// Measures `cells` block by block, relaunching their servers per `LaunchPlan`, then, with a
    /// precision goal, more launches of the scenarios whose paired ratios (each cell against the
    /// best, a twin against its original) are still wider than the target.
    pub(crate) fn measure(&mut self, run: &RunInfo, cells: &[&Cell<'_>], outcome: &mut RunOutcome) -> anyhow::Result<()> {
        let started = self.run_started;
        let mut groups: BTreeMap<Scenario, Vec<&Cell<'_>>> = BTreeMap::new();
        for &cell in cells {
            groups.entry(cell.scenario).or_default().push(cell);
        }
        let plan = LaunchPlan::for_blocks(self.bench.settings.trials, &self.bench.settings);
        let mut br = BlockRun { run, rng: SplitMix64(seed_of(&run.id)), tally: Tally::default(), outcome };
        // A block's number is the scenario's own count, whoever missed it: cells pair by block, so
        // a server that died and skipped the rest of its launch must not shift its later blocks.
        let mut next_block: BTreeMap<Scenario, u32> = groups.keys().map(|&s| (s, 1)).collect();
        let mut blocks_of = |scenario: Scenario, n: u32| {
            let first = next_block.get(&scenario).copied().unwrap_or(1);
            next_block.insert(scenario, first + n);
            first..first + n
        };
        for launch in 0..plan.launches {
            for (&scenario, group) in &groups {
                let blocks = blocks_of(scenario, plan.blocks_in(launch));
                if !self.launch_group(&mut br, group, launch, blocks)? {
                    return Ok(());
                }
            }
        }
        let Some(target) = self.bench.settings.precision else { return Ok(()) };
        let budget = self.bench.settings.budget.unwrap_or(Duration::MAX);
        let mut launch = plan.launches;
        let mut given_up = std::collections::BTreeSet::new();
        loop {
            let metric = self.bench.settings.rank_by.metric();
            // The precision asked is on the ratios a scenario ranks, paired block by block.
            let keys = |g: &[&Cell<'_>]| g.iter().map(|c| c.key()).collect::<Vec<_>>();
            let pending: Vec<(f64, Scenario, &Vec<&Cell<'_>>)> = groups
                .iter()
                .filter(|(s, _)| !given_up.contains(*s))
                .filter_map(|(&s, g)| br.tally.widest_ratio(&keys(g), metric).filter(|&w| w > target).map(|w| (w, s, g)))
                .collect();
            let most = br.tally.values.values().map(Vec::len).max().unwrap_or(0) as u32;
            if pending.is_empty() || most + plan.extra_blocks() > MAX_TRIALS {
                return Ok(());
            }
            // Cells that vary more on their own than their peers get longer slices, which the budget
            // counts: a lengthened cell's slice costs its factor in base slices.
            let longer: BTreeMap<_, u32> = pending.iter().flat_map(|(_, _, g)| br.tally.longer_slices(&keys(g), metric)).collect();
            let factor = |k: &_| longer.get(k).or(br.tally.slice_factor.get(k)).copied().unwrap_or(1);
            let slices = |g: &[&Cell<'_>]| g.iter().map(|c| factor(&c.key())).sum::<u32>();
            let per_slice = started.elapsed().as_secs_f64() / br.tally.trials_done.max(1) as f64;
            let left = budget.as_secs_f64() - started.elapsed().as_secs_f64();
            let (pending, dropped) = within_budget(pending, |g| per_slice * (slices(g) * plan.extra_blocks()) as f64, left);
            if !dropped.is_empty() {
                (self.bench.events)(Event::BudgetSpent { pending: dropped.iter().map(|(_, g)| g.len()).sum() });
                given_up.extend(dropped.iter().map(|(s, _)| *s));
            }
            if pending.is_empty() {
                return Ok(());
            }
            let cells: usize = pending.iter().map(|(_, _, g)| g.len()).sum();
            let work = pending.iter().flat_map(|(_, _, g)| g.iter()).map(|c| trial_weight(&self.bench.settings, c)).sum::<Duration>();
            let trials = cells * plan.extra_blocks() as usize;
            (self.bench.events)(Event::PrecisionRound { round: launch + 1, cells, trials, work: work * plan.extra_blocks() });
            for (_, scenario, group) in pending {
                for cell in group.iter() {
                    if let Some((key, &factor)) = longer.get_key_value(&cell.key()) {
                        br.tally.slice_factor.insert(key.clone(), factor);
                        (self.bench.events)(Event::SlicesLengthened { cell: key, factor, why: Lengthening::OwnSpread });
                    }
                }
                let blocks = blocks_of(scenario, plan.extra_blocks());
                if !self.launch_group(&mut br, group, launch, blocks)? {
                    return Ok(());
                }
            }
            launch += 1;
        }
    }

    /// One launch of a scenario's cells: those side by side that cost nothing while idle, then
    /// each that did not (in an earlier launch) alone, on the same block numbers. False when the
    /// run was cancelled.
    fn launch_group(
        &mut self,
        br: &mut BlockRun<'_>,
        cells: &[&Cell<'_>],
        launch: u32,
        blocks: std::ops::Range<u32>,
    ) -> anyhow::Result<bool> {
        let (alone, together): (Vec<&Cell<'_>>, Vec<&Cell<'_>>) = cells.iter().partition(|c| br.tally.alone.contains(&c.key()));
        let mut launches: Vec<Vec<&Cell<'_>>> = alone.into_iter().map(|c| vec![c]).collect();
        launches.insert(0, together);
        for cells in launches.iter().filter(|l| !l.is_empty()) {
            if !self.launch(br, cells, launch, blocks.clone())? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One launch of one scenario's cells: start all, warm each, the `blocks` (their numbers) of
    /// slices in a fresh random order each, then the checks and the stops. False when the run was
    /// cancelled.
    fn launch(&mut self, br: &mut BlockRun<'_>, cells: &[&Cell<'_>], launch: u32, blocks: std::ops::Range<u32>) -> anyhow::Result<bool> {
        let trial_cpus: Vec<usize> = self.bench.settings.server_cpus.iter().chain(&self.bench.settings.client_cpus).copied().collect();
        let noisy = crate::machine::quiet::wait(&trial_cpus, crate::machine::quiet::MAX_WAIT);
        // Started in a fresh random order too: the first server started meets a machine the later
        // ones do not (free memory, caches, the CPU's state), and no cell may always be first.
        let order: Vec<&Cell<'_>> = br.rng.permutation(cells.len()).into_iter().map(|i| cells[i]).collect();
        let mut residents = self.start_residents(&order, &mut br.tally, br.outcome);
        let together = self.loaded_together(&residents, launch);
        // At once, a cell's slices are its share of a joint one; in blocks, its solo slices are.
        let shares = self.bench.settings.schedule == Schedule::AtOnce;
        for (i, r) in residents.iter_mut().enumerate() {
            let warming = Instant::now();
            if let Some(warmed) = self.warm(r.cell, r.addr, r.tree) {
                let sharing = if shares && together.contains(&i) { together.len() } else { 1 };
                br.tally.note_turns(&r.cell.key(), &warmed, self.bench.settings.duration, sharing);
            }
            r.overhead_s += warming.elapsed().as_secs_f64();
        }
        // A cell whose last launch left connections unanswered, or whose warm-up found turns longer
        // than its slices, gets longer slices now, before this launch measures it (a run that ends
        // after a starved launch lengthens nothing).
        for (key, factor) in br.tally.lengthen_starved(&residents.iter().map(|r| r.cell.key()).collect::<Vec<_>>()) {
            (self.bench.events)(Event::SlicesLengthened { cell: &key, factor, why: Lengthening::StarvedConnections });
            residents.iter_mut().filter(|r| r.cell.key() == key).for_each(|r| r.slice_factor = factor);
        }
        let together = self.without_long_turns(&residents, together, &mut br.tally);
        let idle_from: Vec<f64> = residents.iter().map(|r| self.bench.place.tree_cpu(r.tree)).collect();
        let idle_clock = Instant::now();
        let last = blocks.end.saturating_sub(1);
        let mut cancelled = false;
        for block in blocks {
            if !self.measure_block(br, &mut residents, &together, (block, launch), noisy, block == last)? {
                cancelled = true;
                break;
            }
        }
        let idle_wall_s = idle_clock.elapsed().as_secs_f64();
        let beside_others = residents.len() > 1;
        for (r, from) in residents.into_iter().zip(idle_from) {
            let key = r.cell.key();
            if self.finish_resident(r, launch, cancelled, idle_wall_s, from, beside_others, br.outcome)? {
                br.tally.alone.insert(key);
            }
        }
        br.outcome.interrupted |= cancelled;
        Ok(!cancelled)
    }

    /// A slice's record stored (or held, the launch's last, for the checks after the load), or
    /// its cell failed.
    pub(in crate::run) fn keep_slice(
        &mut self,
        br: &mut BlockRun<'_>,
        r: &mut Resident<'_, '_>,
        result: Result<TrialRecord, LabError>,
        last: bool,
    ) -> anyhow::Result<()> {
        let key = r.cell.key();
        match result {
            Ok(mut record) => {
                record.run_id = br.run.id.clone();
                br.tally.note_starved(&key, &record.load, self.bench.settings.duration);
                br.tally.record(&key, &record, self.bench.settings.rank_by.metric());
                if last {
                    r.held = Some(record);
                } else {
                    self.store(record, br.outcome)?;
                }
            }
            Err(e) => {
                r.failed = true;
                self.fail(key, e.to_string(), &mut br.tally, br.outcome);
            }
        }
        Ok(())
    }

    /// Starts every cell's server of a launch side by side; a cell that cannot start fails alone.
    fn start_residents<'c, 'a>(&mut self, cells: &[&'c Cell<'a>], tally: &mut Tally, outcome: &mut RunOutcome) -> Vec<Resident<'c, 'a>> {
        let mut residents = Vec::new();
        let live: Vec<&'c Cell<'a>> = cells.iter().copied().filter(|c| !tally.failed.contains(&c.key())).collect();
        for cell in live {
            let label = self.bench.dirs.new_cell(cell.stack, cell.variant);
            let starting = Instant::now();
            let started = self
                .bench
                .ensure_services(cell.stack, &[cell.scenario], cell.variant)
                .and_then(|()| self.bench.start_stack(cell.stack, cell.variant, cell.workers, &label, &[cell.scenario]));
            match started {
                Ok((server, addr)) => {
                    let tree = measured_tree(cell.stack, server.as_ref(), self.bench.place.upstream_tree(&self.bench.services));
                    residents.push(Resident {
                        cell,
                        label,
                        server,
                        addr,
                        tree,
                        slice_factor: tally.slice_factor.get(&cell.key()).copied().unwrap_or(1),
                        held: None,
                        busy_cpu_s: 0.0,
                        busy_wall_s: 0.0,
                        overhead_s: starting.elapsed().as_secs_f64(),
                        failed: false,
                        curve_taken: false,
                    });
                }
                Err(e) => {
                    self.bench.note_cell(&label, &format!("start of {}", cell.key().label()));
                    self.fail(cell.key(), e.to_string(), tally, outcome);
                }
            }
        }
        residents
    }

    /// Loads a fresh server for the warm-up (a JIT's, a pool's), once per launch, and lets it
    /// serve what the warm-up left queued; not measured.
    fn warm(&self, cell: &Cell<'_>, addr: SocketAddr, tree: Tree) -> Option<bakeoff_load::LoadReport> {
        let warmup = self.bench.settings.warmup.max(cell.stack.warmup.unwrap_or_default());
        if warmup.is_zero() {
            return None;
        }
        let settings = LoadSettings { duration: warmup, ..self.bench.settings.clone() };
        let plan = settings.plan(cell, addr, Duration::ZERO).ok()?;
        // A server that fails its warm-up fails its first slice too, where it is recorded.
        let warmed = self.bench.run_load(&plan).ok();
        self.drain(tree, warmed.as_ref());
        warmed
    }

    /// After a launch's blocks: the checks after the load on the warm server (the cost pairs in
    /// the first launch only), its CPU while idle beside the others, its stop; then its held slice
    /// is stored with what they found. True when it was busy while idle beside others.
    #[allow(clippy::too_many_arguments)]
    fn finish_resident(
        &mut self,
        mut r: Resident<'_, '_>,
        launch: u32,
        cancelled: bool,
        wall_s: f64,
        cpu_from: f64,
        beside_others: bool,
        outcome: &mut RunOutcome,
    ) -> anyhow::Result<bool> {
        let idle_cpu_s = self.bench.place.tree_cpu(r.tree) - cpu_from - r.busy_cpu_s;
        let idle_wall_s = (wall_s - r.busy_wall_s).max(1e-9);
        let mut found = Vec::new();
        let checking = Instant::now();
        if !cancelled {
            let died = r.server.as_mut().and_then(Served::exited);
            let first = if launch == 0 { 1 } else { 2 };
            let (after, rechecked) = self.bench.after_measuring(r.cell, first, &r.label, r.addr, r.server.as_mut(), died.is_some());
            if !rechecked.is_empty() {
                (self.bench.events)(Event::CostRechecked { cell: &r.cell.key(), checks: &rechecked });
            }
            found = after;
        }
        let idle_percent = 100.0 * idle_cpu_s.max(0.0) / idle_wall_s;
        // Alone, its idle CPU is paid by no other cell's slice.
        let busy = beside_others
            && idle_wall_s >= MIN_IDLE_WALL_S
            && idle_percent > IDLE_LIMIT_PERCENT
            && r.cell.stack.kind != crate::stacks::manifest::StackKind::Baseline;
        if busy {
            found.push(LabWarning::BusyWhileIdle { cpu_percent: idle_percent });
        }
        // Dropping the server stops it on every path, the cancelled one included.
        drop(r.server.take());
        self.bench.note_cell(&r.label, &format!("launch {} of {} (block schedule)", launch + 1, r.cell.key().label()));
        if let Some(mut record) = r.held.take() {
            record.warnings.extend(found);
            record.elapsed_s += r.overhead_s + checking.elapsed().as_secs_f64();
            self.store(record, outcome)?;
        }
        Ok(busy)
    }

    fn store(&mut self, record: TrialRecord, outcome: &mut RunOutcome) -> anyhow::Result<()> {
        self.sink.record_trial(&record)?;
        outcome.trials_stored += 1;
        (self.bench.events)(Event::TrialDone(&record));
        Ok(())
    }

    fn fail(&mut self, key: bakeoff_model::records::results::CellKey, error: String, tally: &mut Tally, outcome: &mut RunOutcome) {
        (self.bench.events)(Event::CellFailed { cell: &key, error: error.clone() });
        tally.failed.insert(key.clone());
        outcome.failed_cells.push((key, error));
    }
}

/// The scenarios another launch measures (with their widest ratio's half-width), and the others.
type BudgetSplit<S, G> = (Vec<(f64, S, G)>, Vec<(S, G)>);

/// The pending scenarios (each with its widest ratio's half-width) that another launch can measure
/// in `left` seconds, given what a launch of each `costs`; and those that do not fit. Where not
/// all fit, the budget goes where it helps most: the scenarios nearest their target first, as
/// another launch can bring those within it and only narrows the others.
fn within_budget<S: Copy, G>(mut pending: Vec<(f64, S, G)>, costs: impl Fn(&G) -> f64, mut left: f64) -> BudgetSplit<S, G> {
    pending.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for (width, scenario, group) in pending {
        let cost = costs(&group);
        if cost <= left {
            left -= cost;
            kept.push((width, scenario, group));
        } else {
            dropped.push((scenario, group));
        }
    }
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_short_of_every_pending_scenario_goes_to_those_nearest_their_target() {
        // Widest ratios ±20%, ±6% and ±9%; each launch costs 10 s per cell; 25 s are left.
        let pending = vec![(0.20, "hello", 1usize), (0.06, "json", 2), (0.09, "products", 1)];
        let (kept, dropped) = within_budget(pending, |cells| 10.0 * *cells as f64, 25.0);
        let kept: Vec<&str> = kept.iter().map(|k| k.1).collect();
        assert_eq!(kept, ["json"], "the nearest first; products no longer fits");
        assert_eq!(dropped.iter().map(|d| d.0).collect::<Vec<_>>(), ["products", "hello"]);
        let (kept, dropped) = within_budget(vec![(0.2, "hello", 1usize), (0.1, "json", 1)], |c| 10.0 * *c as f64, 60.0);
        assert_eq!((kept.len(), dropped.len()), (2, 0), "all fit: all measured");
    }

    #[test]
    fn every_block_gets_a_fresh_order_of_all_cells() {
        let mut rng = SplitMix64(seed_of("20261125T000000Z-1"));
        let orders: Vec<Vec<usize>> = (0..20).map(|_| rng.permutation(4)).collect();
        for o in &orders {
            let mut sorted = o.clone();
            sorted.sort();
            assert_eq!(sorted, vec![0, 1, 2, 3]);
        }
        // Each cell leads some block: no fixed order in which one always follows another.
        for cell in 0..4 {
            assert!(orders.iter().any(|o| o[0] == cell), "cell {cell} never first: {orders:?}");
        }
    }
}
