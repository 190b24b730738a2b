//! One block of the block schedules: its slices in a fresh random order (each cell alone, and
//! the cells that can share the server CPUs loaded at once: as one slice more in blocks, instead
//! of their own at once), and each cell's record kept once the block's joint slice is in it.

use crate::run::events::Event;
use crate::run::planning::estimate::trial_weight;
use crate::run::schedule::blocks::BlockSchedule;
use crate::run::schedule::blocks::{BlockRun, Resident};
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::rng::SplitMix64;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

impl BlockSchedule<'_, '_> {
    /// Measures one block (its number and launch) of the `residents`, those `together` loaded at
    /// once, and keeps every record it took; `last` holds them for the checks after the load.
    /// False when the run was cancelled (what the block measured before is kept).
    pub(in crate::run) fn measure_block(
        &mut self,
        br: &mut BlockRun<'_>,
        residents: &mut [Resident<'_, '_>],
        together: &[usize],
        (block, launch): (u32, u32),
        noisy: Option<f64>,
        last: bool,
    ) -> anyhow::Result<bool> {
        let mut joint = BTreeMap::new();
        let mut taken = Vec::new();
        let mut cancelled = false;
        for unit in block_units(&mut br.rng, residents.len(), together, self.bench.settings.schedule) {
            if self.bench.cancel.load(Ordering::Relaxed) {
                cancelled = true;
                break;
            }
            let live: Vec<usize> = unit.residents().iter().copied().filter(|&i| !residents[i].failed).collect();
            if !matches!(unit, Unit::Joint(_)) {
                for &i in &live {
                    let trials = self.bench.settings.trials.max(block);
                    let weight = trial_weight(&self.bench.settings, residents[i].cell);
                    (self.bench.events)(Event::TrialStarting { cell: &residents[i].cell.key(), trial: block, trials, weight });
                }
            }
            match (unit, &live[..]) {
                (_, []) | (Unit::Joint(_), [_]) => {}
                (Unit::Joint(_), _) => joint.extend(self.joint_figures(&mut br.tally, residents, &live, (block, launch))),
                (_, &[i]) => {
                    // The other residents' trees on this machine are the lab's own while this one is loaded.
                    let others: Vec<u32> = residents
                        .iter()
                        .filter(|o| o.tree != residents[i].tree)
                        .filter_map(|o| self.bench.place.pid_here(o.tree))
                        .collect();
                    taken.push((i, self.slice(&mut residents[i], &others, block, launch, noisy)));
                }
                _ => taken.extend(self.joint_slice(residents, &live, (block, launch), noisy, (true, 1))),
            }
        }
        // A block's records are kept once its joint slice, wherever it fell, is in them.
        for (i, mut result) in taken {
            if let (Ok(record), Some((figure, share_s))) = (&mut result, joint.remove(&i)) {
                record.joint = figure;
                record.elapsed_s += share_s;
            }
            self.keep_slice(br, &mut residents[i], result, last)?;
        }
        Ok(!cancelled)
    }
}

/// One slice of a block.
#[derive(Debug, Clone, PartialEq)]
enum Unit {
    /// A resident loaded alone: its record.
    Alone(usize),
    /// Residents loaded at the same time, each slice its record (the at-once schedule).
    AtOnce(Vec<usize>),
    /// Residents loaded at the same time, each slice a figure added to its solo record (the
    /// block schedule's joint slice).
    Joint(Vec<usize>),
}

impl Unit {
    fn residents(&self) -> &[usize] {
        match self {
            Unit::Alone(i) => std::slice::from_ref(i),
            Unit::AtOnce(all) | Unit::Joint(all) => all,
        }
    }
}

/// A block's slices in a fresh random order: each of `n` residents alone, and those loaded
/// `together` as one more slice (blocks) or instead of their own (at once).
fn block_units(rng: &mut SplitMix64, n: usize, together: &[usize], schedule: Schedule) -> Vec<Unit> {
    let at_once = schedule == Schedule::AtOnce && !together.is_empty();
    let mut units: Vec<Unit> = (0..n).filter(|i| !at_once || !together.contains(i)).map(Unit::Alone).collect();
    match together {
        [] => {}
        _ if at_once => units.push(Unit::AtOnce(together.to_vec())),
        _ => units.push(Unit::Joint(together.to_vec())),
    }
    let order = rng.permutation(units.len());
    let mut units: Vec<Option<Unit>> = units.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| units[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::rng::seed_of;

    #[test]
    fn a_block_holds_every_cell_alone_and_one_joint_slice_and_at_once_the_joint_one_instead() {
        let mut rng = SplitMix64(seed_of("20261128T000000Z-1"));
        let sorted = |mut units: Vec<Unit>| {
            units.sort_by_key(|u| (matches!(u, Unit::Alone(_)), u.residents().to_vec()));
            units
        };
        let blocks = sorted(block_units(&mut rng, 3, &[0, 2], Schedule::Blocks));
        assert_eq!(blocks, [Unit::Joint(vec![0, 2]), Unit::Alone(0), Unit::Alone(1), Unit::Alone(2)]);
        let at_once = sorted(block_units(&mut rng, 3, &[0, 2], Schedule::AtOnce));
        assert_eq!(at_once, [Unit::AtOnce(vec![0, 2]), Unit::Alone(1)]);
        assert_eq!(sorted(block_units(&mut rng, 2, &[], Schedule::Blocks)), [Unit::Alone(0), Unit::Alone(1)]);
        // The joint slice falls anywhere in its block, not always last.
        let places: std::collections::BTreeSet<usize> = (0..40)
            .map(|_| block_units(&mut rng, 3, &[0, 1, 2], Schedule::Blocks).iter().position(|u| matches!(u, Unit::Joint(_))).unwrap())
            .collect();
        assert_eq!(places.len(), 4, "{places:?}");
    }
}
