//! The at-once schedule's slice: the cells of a block loaded at the same time, each from a load
//! generator of its own on the client CPUs, every server in a CPU group of equal share on the
//! server CPUs. A slow stretch of the machine then falls on every cell within the same second, so
//! their ratios hold what the cells differ by, not when each was measured (duet benchmarking).
//! A cell whose time would not be its own beside the others (a shared database, an upstream
//! nginx) or a placement the lab cannot share evenly is loaded in turn, as the block schedule does.

use crate::error::LabError;
use crate::machine::noise::NoiseProbe;
use crate::machine::sampler;
use crate::run::events::Event;
use crate::run::roles::LoadFailure;
use crate::run::schedule::blocks::BlockSchedule;
use crate::run::schedule::blocks::Resident;
use crate::run::schedule::slice::SliceTaken;
use crate::run::schedule::tally::{starved_turns, Tally};
use crate::stacks::manifest::{Database, StackKind};
use bakeoff_load::{LoadReport, Warning};
use bakeoff_model::plan::schedule::{InTurn, Schedule};
use bakeoff_model::records::results::{CellKey, LabWarning, TrialRecord};
use bakeoff_model::statistics::pairing::JointSlice;
use bakeoff_model::statistics::summary::Metric;
use std::time::Instant;

impl BlockSchedule<'_, '_> {
    /// The residents (their indexes) an at-once launch loads together; empty when the schedule is
    /// not at once or fewer than two can be. At the run's first launch, says why each other one
    /// is loaded in turn.
    pub(in crate::run) fn loaded_together(&mut self, residents: &[Resident<'_, '_>], launch: u32) -> Vec<usize> {
        if !self.bench.settings.schedule.pairs_blocks() || residents.len() < 2 {
            return Vec::new();
        }
        let placement = if self.bench.place.hosts.has_client_hosts() {
            Some(InTurn::ClientHosts)
        } else if self.bench.place.hosts.server_host.is_some() {
            Some(InTurn::ServerHost)
        } else if !crate::machine::cgroup::equal_shares() {
            Some(InTurn::NoEqualShares)
        } else {
            None
        };
        let why: Vec<Option<InTurn>> = residents.iter().map(|r| placement.or_else(|| in_turn(r))).collect();
        let together: Vec<usize> = (0..residents.len()).filter(|&i| why[i].is_none()).collect();
        if launch == 0 {
            let schedule = self.bench.settings.schedule;
            // In blocks every cell has its solo slices anyway: a reason that holds for all is
            // said once, and a lone cell has no ratio a joint slice could help.
            let said_once = schedule == Schedule::Blocks && placement.is_some();
            for (k, (r, why)) in residents.iter().zip(&why).enumerate() {
                let alone = (together.len() < 2 && schedule == Schedule::AtOnce).then_some(InTurn::NoPeer);
                if let Some(why) = why.or(alone).filter(|_| !said_once || k == 0) {
                    (self.bench.events)(Event::LoadedInTurn { cell: &r.cell.key(), why, schedule });
                }
            }
        }
        if together.len() < 2 {
            return Vec::new();
        }
        together
    }

    /// `together` without the block schedule's cells whose slices were lengthened for their
    /// connections' turns (`Tally::long_turns`): on a share of the server CPUs each turn takes
    /// that share's times longer, so a joint slice could not answer them and would only grow for
    /// them. Said once per cell. The at-once schedule keeps them: their slices are their shares.
    pub(in crate::run) fn without_long_turns(
        &mut self,
        residents: &[Resident<'_, '_>],
        together: Vec<usize>,
        tally: &mut Tally,
    ) -> Vec<usize> {
        if self.bench.settings.schedule != Schedule::Blocks {
            return together;
        }
        let (kept, long): (Vec<usize>, Vec<usize>) =
            together.into_iter().partition(|&i| !tally.long_turns.contains(&residents[i].cell.key()));
        for i in long {
            let key = residents[i].cell.key();
            if tally.said_long_turns.insert(key.clone()) {
                (self.bench.events)(Event::LoadedInTurn { cell: &key, why: InTurn::LongTurns, schedule: Schedule::Blocks });
            }
        }
        if kept.len() < 2 {
            return Vec::new();
        }
        kept
    }

    /// The block schedule's joint slice of the residents `live` (indexes): what each answered,
    /// for its solo record of the block, with the wall seconds its share of the slice cost. A
    /// figure that would not stand for its server is left out: a load that failed, met errors, ran
    /// at its client's ceiling (its share of the client CPUs, not the server, set its rate) or
    /// left connections unanswered (which lengthens the joint slices from the next block on, not
    /// the cell's solo slices: `Tally::note_joint_starved`).
    pub(in crate::run) fn joint_figures(
        &mut self,
        tally: &mut Tally,
        residents: &mut [Resident<'_, '_>],
        live: &[usize],
        (block, launch): (u32, u32),
    ) -> Vec<(usize, (Option<JointSlice>, f64))> {
        let cells = live.len() as u32;
        let keys: Vec<CellKey> = live.iter().map(|&i| residents[i].cell.key()).collect();
        let taken = self.joint_slice(residents, live, (block, launch), None, (false, tally.joint_factor(&keys)));
        let base = self.bench.settings.duration;
        let needed = taken.iter().filter_map(|(_, r)| starved_turns(&r.as_ref().ok()?.load, base)).max();
        if let Some(factor) = needed.and_then(|turns| tally.note_joint_starved(&keys, turns)) {
            (self.bench.events)(Event::JointLengthened { cells: &keys, factor });
        }
        // Each server's part of the CPU time the slice's servers used: the joint/solo rule reads it.
        let cores = |r: &TrialRecord| (r.server.cpu_percent / 100.0).max(0.0);
        let all_cores: f64 = taken.iter().filter_map(|(_, r)| r.as_ref().ok()).map(cores).sum();
        let server_cpus = Some(self.bench.settings.server_cpus.len() as u32);
        let mut figures = Vec::new();
        for (i, result) in taken {
            let Ok(record) = result else { continue };
            let held_back =
                record.load.warnings.iter().any(|w| matches!(w, Warning::ClientSaturated { .. } | Warning::StarvedConnections { .. }));
            let died = record.warnings.iter().any(|w| matches!(w, LabWarning::ServerDied { .. }));
            // The record's own figures, read as every report reads them.
            let last = record.load.steps.len().checked_sub(1);
            let answered = |step: usize| record.load.steps[step].requests > 0 && record.load.steps[step].errors.total() == 0;
            let figure = last.filter(|&step| !held_back && !died && answered(step)).map(|step| JointSlice {
                cells,
                requests_per_sec: Metric::RequestsPerSec.of(&record, step),
                mib_per_sec: Metric::MibPerSec.of(&record, step),
                cpu_us_per_request: Metric::CpuUsPerRequest.of(&record, step),
                cpu_share: (all_cores > 0.0).then(|| cores(&record) / all_cores),
                server_cpus,
            });
            figures.push((i, (figure, record.elapsed_s)));
        }
        figures
    }

    /// One slice of the residents `live` (indexes), all loaded at the same time for the same
    /// length (the longest any of them needs, and at least `floor` times the run's); each result
    /// goes with its resident's index. With `curves`, each is followed by its latency-under-load
    /// steps when the run asks for them.
    pub(in crate::run) fn joint_slice(
        &mut self,
        residents: &mut [Resident<'_, '_>],
        live: &[usize],
        (block, launch): (u32, u32),
        noisy: Option<f64>,
        (curves, floor): (bool, u32),
    ) -> Vec<(usize, Result<TrialRecord, LabError>)> {
        let begun = Instant::now();
        let factor = live.iter().map(|&i| residents[i].slice_factor).fold(floor, u32::max);
        let (settings, settle) = self.slice_settings(factor);
        let mut results = Vec::new();
        let mut planned = Vec::new();
        for &i in live {
            match settings.plan(residents[i].cell, residents[i].addr, settle) {
                Ok(plan) => planned.push((i, plan)),
                Err(e) => results.push((i, Err(e))),
            }
        }
        let Some(&(first, _)) = planned.first() else { return results };
        let started_at = bakeoff_model::now_rfc3339();
        let cpu_before: Vec<f64> = planned.iter().map(|(i, _)| self.bench.place.tree_cpu(residents[*i].tree)).collect();
        let meters: Vec<_> = planned
            .iter()
            .map(|(i, _)| self.bench.place.meter(residents[*i].tree, Instant::now() + settle, &self.bench.settings.client_cpus))
            .collect();
        // The noise is measured once: the first's tree as the measured one, every other loaded
        // server as the lab's own.
        let others = planned[1..].iter().filter_map(|(i, _)| self.bench.place.pid_here(residents[*i].tree));
        let measured: Vec<u32> = self.bench.lab_pids().into_iter().chain(others).collect();
        let before: Vec<f64> = measured.iter().map(|&p| sampler::tree_cpu_seconds(p)).collect();
        let probe = NoiseProbe::start();
        let mut loads = self.loads_at_once(planned.iter().map(|(_, plan)| plan));
        mark_client_bound(&mut loads, self.bench.settings.client_cpus.len());
        let metered: Vec<_> = meters.into_iter().map(|m| m.finish()).collect();
        let noise = self.bench.trial_noise(probe, residents[first].tree, (&measured, &before), &metered[0].0, None);
        let wall_s = begun.elapsed().as_secs_f64();
        let share_s = wall_s / planned.len() as f64;
        // Every server's leftover queue is drained before any latency-under-load steps run, so
        // no peer's backlog overlaps another's steps.
        for ((i, _), load) in planned.iter().zip(&loads) {
            self.drain(residents[*i].tree, load.as_ref().ok());
        }
        for (k, (((i, _), load), (samples, _))) in planned.iter().zip(loads).zip(metered).enumerate() {
            let r = &mut residents[*i];
            let under_load = if curves { self.resident_curve(r, launch, &load) } else { Ok(None) };
            r.busy_cpu_s += self.bench.place.tree_cpu(r.tree) - cpu_before[k];
            r.busy_wall_s += wall_s;
            let result = under_load.and_then(|under_load| {
                let taken =
                    SliceTaken { load, samples, noise: noise.clone(), under_load, started_at: started_at.clone(), elapsed_s: share_s };
                self.slice_record(r, taken, (block, launch), noisy)
            });
            results.push((*i, result));
        }
        results
    }

    /// Runs every plan at the same time, each on a thread of this process, and waits for all.
    fn loads_at_once<'p>(&self, plans: impl Iterator<Item = &'p bakeoff_load::LoadPlan>) -> Vec<Result<LoadReport, LoadFailure>> {
        let cancel = self.bench.cancel;
        std::thread::scope(|scope| {
            let running: Vec<_> = plans.map(|plan| scope.spawn(move || bakeoff_load::run_with_cancel(plan, cancel))).collect();
            running
                .into_iter()
                .map(|load| load.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)).map_err(LoadFailure::from))
                .collect()
        })
    }
}

/// Why a resident cannot be loaded with the others wherever the lab places them; None when it can.
fn in_turn(r: &Resident<'_, '_>) -> Option<InTurn> {
    let cell = r.cell;
    let shares = !cell.stack.services_for(cell.scenario, cell.variant).is_empty()
        || cell.variant.database == Some(Database::Postgres)
        || cell.stack.kind == StackKind::Baseline;
    shares.then_some(InTurn::SharedService)
}

/// Marks each load that ran at its client's ceiling (`client_at_ceiling`) with the
/// `client_saturated` warning a load alone earns at its threads' cores.
fn mark_client_bound(loads: &mut [Result<LoadReport, LoadFailure>], client_cores: usize) {
    let mut ran: Vec<&mut LoadReport> = loads.iter_mut().filter_map(|l| l.as_mut().ok()).collect();
    let usage: Vec<(f64, u32)> = ran.iter().map(|l| (l.client.cpu_percent, l.client.threads)).collect();
    for (load, at_ceiling) in ran.iter_mut().zip(client_at_ceiling(&usage, client_cores)) {
        let marked = load.warnings.iter().any(|w| matches!(w, Warning::ClientSaturated { .. }));
        if at_ceiling && !marked {
            load.warnings.push(Warning::ClientSaturated { cpu_percent: load.client.cpu_percent, threads: load.client.threads });
        }
    }
}

/// Loads run at once share the client CPUs, so a load's own CPU (`usage`: percent of a core, and
/// threads) cannot reach its threads' cores as one alone does. A load is at its client's ceiling
/// when the loads together kept the `client_cores` busy and it had its even share of them or more
/// (a load whose server is the limit waits, and leaves its share to the others).
fn client_at_ceiling(usage: &[(f64, u32)], client_cores: usize) -> Vec<bool> {
    let capacity = 100.0 * client_cores.max(1) as f64;
    let total: f64 = usage.iter().map(|u| u.0).sum();
    let busy = total >= bakeoff_load::SATURATED_FRACTION * capacity;
    let share = capacity / usage.len().max(1) as f64;
    usage
        .iter()
        .map(|&(cpu_percent, threads)| {
            busy && cpu_percent >= bakeoff_load::SATURATED_FRACTION * share.min(100.0 * f64::from(threads.max(1)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_at_its_share_of_a_busy_client_is_at_the_ceiling_and_one_its_server_holds_back_is_not() {
        // One client core, two loads: the one whose server is slow waits (30%), the other takes
        // the rest (68%): that one could have gone faster with more client.
        assert_eq!(client_at_ceiling(&[(30.0, 1), (68.0, 1)], 1), [false, true]);
        // Both at half the core: both at the ceiling (an A/A pair of a fast server).
        assert_eq!(client_at_ceiling(&[(49.0, 1), (48.5, 1)], 1), [true, true]);
        // The client had room to spare: no load was held back by it.
        assert_eq!(client_at_ceiling(&[(40.0, 1), (35.0, 1)], 1), [false, false]);
        // Two client cores and three loads: a single-threaded load's ceiling is its one core's
        // share, and the load its server held back is not at it.
        assert_eq!(client_at_ceiling(&[(99.0, 1), (97.0, 1), (5.0, 1)], 2), [true, true, false]);
        assert_eq!(client_at_ceiling(&[], 1), Vec::<bool>::new());
    }
}
