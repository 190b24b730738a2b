//! How a run's trials become paired blocks. Under the block schedule each block measures every
//! cell alone for one slice (its solo slice) and, where the lab can share the server CPUs
//! evenly, all of them at the same time for one more (the joint slice): a slow stretch of the
//! machine then falls on every cell within the same second. What each cell answered in its joint
//! slice, and the rule that decides whether a paired ratio rests on the joint or the solo slices.

use crate::metric::Metric;
use crate::paired::{paired_ratio, Pair, PairedRatio};
use crate::results::{CellKey, TrialRecord};
use serde::{Deserialize, Serialize};

pub use crate::joint::JointSlice;
use std::collections::BTreeMap;

/// Which slices a paired ratio rests on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairSource {
    /// Each cell's own slice of every block, measured one after the other.
    #[default]
    Solo,
    /// The blocks' joint slices, the cells loaded at the same time.
    Joint,
}

/// The pairs a ratio rests on, where they came from, and the two estimates when they disagreed.
#[derive(Debug, Clone, PartialEq)]
pub struct PairChoice {
    /// The pairs the ratio is computed from.
    pub pairs: Vec<Pair>,
    /// Which slices they are.
    pub source: PairSource,
    /// When the joint slices' ratio lay outside the solo slices' interval (and theirs outside the
    /// joint's): the solo ratio and the joint one. The cells then differ in how they use a share
    /// of the machine rather than all of it (one scales to the server CPUs, the other does not),
    /// so the ratio rests on the solo slices, which measure each with the whole server.
    pub disagreement: Option<(PairedRatio, PairedRatio)>,
}

/// Chooses between a pair of cells' `solo` and `joint` pairs (per block): the joint ones, which
/// cancel the machine's slow stretches, when there are at least two and their ratio agrees with
/// the solo ratio (the two intervals overlap); else the solo ones.
pub fn choose_pairs(solo: Vec<Pair>, joint: Vec<Pair>) -> PairChoice {
    let solo_only = |pairs, disagreement| PairChoice { pairs, source: PairSource::Solo, disagreement };
    if joint.len() < 2 {
        return solo_only(solo, None);
    }
    let (Some(together), Some(alone)) = (paired_ratio(&joint), (solo.len() >= 2).then(|| paired_ratio(&solo)).flatten()) else {
        return PairChoice { pairs: joint, source: PairSource::Joint, disagreement: None };
    };
    if together.low > alone.high || together.high < alone.low {
        return solo_only(solo, Some((alone, together)));
    }
    PairChoice { pairs: joint, source: PairSource::Joint, disagreement: None }
}

/// The blocks in which both `cell` and `reference` were measured, as pairs of `metric` in `step`:
/// their joint slices' where those agree with their solo ones (`choose_pairs`), else their solo
/// slices'. A block is a trial number; a trial that started its own server (no launch recorded)
/// is a launch of its own, so trial-schedule rounds pair too, each its own launch.
pub fn pairs_between(trials: &[TrialRecord], cell: &CellKey, reference: &CellKey, metric: Metric, step: usize) -> Vec<Pair> {
    pair_choice_between(trials, cell, reference, metric, step).pairs
}

/// The pairs of `pairs_between`, with which slices they came from and any disagreement between
/// the joint and the solo slices.
pub fn pair_choice_between(trials: &[TrialRecord], cell: &CellKey, reference: &CellKey, metric: Metric, step: usize) -> PairChoice {
    type Blocks = BTreeMap<u32, (u32, f64, Option<f64>)>;
    let of = |key: &CellKey| -> Blocks {
        trials
            .iter()
            .filter(|t| &t.cell == key && step < t.load.steps.len())
            .map(|t| {
                let joint = t.joint.filter(|_| step + 1 == t.load.steps.len()).and_then(|j| j.value(metric));
                (t.trial, (t.launch.unwrap_or(t.trial), metric.of(t, step), joint))
            })
            .collect()
    };
    let reference = of(reference);
    let (mut solo, mut joint) = (Vec::new(), Vec::new());
    for (block, (launch, value, together)) in of(cell) {
        let Some(&(_, ref_value, ref_together)) = reference.get(&block) else { continue };
        solo.extend(Pair::of(launch, value, ref_value));
        if let (Some(a), Some(b)) = (together, ref_together) {
            joint.extend(Pair::of(launch, a, b));
        }
    }
    choose_pairs(solo, joint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(ratios: &[f64]) -> Vec<Pair> {
        ratios.iter().enumerate().filter_map(|(i, &r)| Pair::of(i as u32 / 3, r, 1.0)).collect()
    }

    #[test]
    fn joint_slices_carry_the_ratio_when_they_agree_with_the_solo_ones() {
        // Solo slices scatter ±15% around 0.8; the joint ones sit tight on 0.78: they agree.
        let solo = pairs(&[0.70, 0.92, 0.81, 0.66, 0.95, 0.79, 0.74, 0.88, 0.83, 0.71]);
        let joint = pairs(&[0.78, 0.79, 0.77, 0.78, 0.785, 0.775, 0.78, 0.79, 0.77, 0.78]);
        let chosen = choose_pairs(solo, joint.clone());
        assert_eq!((chosen.source, chosen.disagreement), (PairSource::Joint, None));
        assert_eq!(chosen.pairs, joint);
    }

    #[test]
    fn a_joint_ratio_outside_the_solo_interval_gives_way_to_the_solo_one_and_says_so() {
        // Alone, x has the whole server and is twice as fast; on an equal share, where a server
        // that does not scale loses nothing, the two look alike.
        let solo = pairs(&[2.0, 2.1, 1.9, 2.05, 1.95, 2.0, 2.02, 1.98]);
        let joint = pairs(&[1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.0]);
        let chosen = choose_pairs(solo.clone(), joint);
        assert_eq!(chosen.source, PairSource::Solo);
        assert_eq!(chosen.pairs, solo);
        let (alone, together) = chosen.disagreement.expect("the disagreement is kept for the report");
        assert!((alone.ratio - 2.0).abs() < 0.05 && (together.ratio - 1.0).abs() < 0.02, "{alone:?} {together:?}");
    }

    #[test]
    fn without_two_joint_pairs_the_solo_ones_stand() {
        let solo = pairs(&[0.9, 0.95, 0.92]);
        assert_eq!(choose_pairs(solo.clone(), pairs(&[0.9])).pairs, solo);
        assert_eq!(choose_pairs(solo, Vec::new()).source, PairSource::Solo);
        // Joint pairs and too few solo ones: nothing to disagree with.
        assert_eq!(choose_pairs(pairs(&[0.9]), pairs(&[0.9, 0.91])).source, PairSource::Joint);
    }
}
