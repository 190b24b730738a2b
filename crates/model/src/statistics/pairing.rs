//! How a run's trials become paired blocks. Under the block schedule each block measures every
//! cell alone for one slice (its solo slice) and, where the lab can share the server CPUs
//! evenly, all of them at the same time for one more (the joint slice): a slow stretch of the
//! machine then falls on every cell within the same second. What each cell answered in its joint
//! slice, and the rule that decides whether a paired ratio rests on the joint or the solo slices.

use crate::records::metric::Metric;
use crate::records::results::{CellKey, TrialRecord};
use crate::statistics::paired::{paired_ratio, Pair, PairedRatio};
use serde::{Deserialize, Serialize};

pub use crate::records::joint::JointSlice;
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

/// How far a server's part of a joint slice's CPU time may lie from its equal share (relative to
/// it), and how far apart the two cells' CPU use alone may lie (relative), for the joint slices to
/// carry a throughput ratio. Fixed before any data: the rule never reads a ratio or its interval.
pub const SHARE_TOLERANCE: f64 = 0.15;

/// What the joint/solo rule reads of one cell in one block: its server's CPU use in its solo
/// slice and its part of the joint slice's CPU time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUse {
    /// Cores the server used in its solo slice.
    pub solo_cores: f64,
    /// Its part of the CPU time of all the joint slice's servers; None without a joint slice
    /// (or in a record from before it was kept).
    pub joint_share: Option<f64>,
    /// Cells in the joint slice.
    pub cells: u32,
}

impl CpuUse {
    /// What a block's record says of its cell's CPU use.
    pub fn of(t: &TrialRecord) -> CpuUse {
        let j = t.joint.as_ref();
        CpuUse { solo_cores: t.server.cpu_percent / 100.0, joint_share: j.and_then(|j| j.cpu_share), cells: j.map_or(0, |j| j.cells) }
    }
}

/// Why a ratio rests on the solo slices although the cells had joint slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SoloBecause {
    /// The two cells are different servers (different stacks): loaded at once, unlike servers meet
    /// the contention unlike, so their joint ratio is not the solo one however fair the shares.
    UnlikeServers,
    /// Fewer than two blocks with a joint share recorded for a cell.
    TooFewJointShares,
    /// A server's median part of the joint slices' CPU time lay off its equal share: it could not
    /// use its share (or took more), so the joint ratio is not the solo one.
    UnequalShare {
        /// Which cell: 0 the cell, 1 its reference.
        which: usize,
        /// Its median part.
        share: f64,
        /// 1 / cells.
        equal: f64,
    },
    /// The two cells used unlike amounts of the server CPUs alone: on equal shares the one that
    /// used less loses less, so a throughput ratio on shares is not the solo one.
    UnlikeSoloUse {
        /// The cell's median cores alone.
        cell: f64,
        /// The reference's.
        reference: f64,
    },
}

impl SoloBecause {
    /// The reason in words, naming the cells by `names` (the cell's, the reference's).
    pub fn describe(&self, names: (&str, &str)) -> String {
        let name = |w: usize| if w == 0 { names.0 } else { names.1 };
        match *self {
            SoloBecause::TooFewJointShares => "fewer than two joint slices recorded each server's CPU share".into(),
            SoloBecause::UnlikeServers => format!(
                "{} and {} are different servers, and loaded at once unlike servers meet the contention unlike \
                 (on this project's machine their joint ratios lay 6% to 16% from their solo ones with every share fair)",
                names.0, names.1
            ),
            SoloBecause::UnequalShare { which, share, equal } => format!(
                "{} took {:.0}% of the joint slices' server CPU time where an equal share is {:.0}% (±{:.0}% allowed)",
                name(which),
                100.0 * share,
                100.0 * equal,
                100.0 * SHARE_TOLERANCE
            ),
            SoloBecause::UnlikeSoloUse { cell, reference } => format!(
                "alone {} used {cell:.2} cores and {} {reference:.2} (±{:.0}% allowed), so equal shares cost them unequally",
                names.0,
                names.1,
                100.0 * SHARE_TOLERANCE
            ),
        }
    }
}

/// The rule that decides, before any ratio is computed, whether the joint slices may carry a
/// ratio of `metric` between two cells: each server took its equal share of the joint slices'
/// CPU time (within `SHARE_TOLERANCE`), and, for a throughput, the two used alike amounts of the
/// server CPUs alone (within `SHARE_TOLERANCE` of each other): then equal shares scale both
/// alike. Alike rather than all of them: a CPU-bound server's own process tree shows 80% of its
/// one CPU on a machine where the kernel's network work is charged elsewhere.
pub fn joint_rule(cell: &[CpuUse], reference: &[CpuUse], metric: Metric) -> Result<(), SoloBecause> {
    for (which, uses) in [cell, reference].into_iter().enumerate() {
        let shares: Vec<f64> = uses.iter().filter_map(|u| u.joint_share).collect();
        let Some(k) = uses.iter().map(|u| u.cells).find(|&k| k >= 2) else { return Err(SoloBecause::TooFewJointShares) };
        if shares.len() < 2 {
            return Err(SoloBecause::TooFewJointShares);
        }
        let (share, equal) = (median(shares), 1.0 / f64::from(k));
        if (share / equal - 1.0).abs() > SHARE_TOLERANCE {
            return Err(SoloBecause::UnequalShare { which, share, equal });
        }
    }
    let alone = |uses: &[CpuUse]| median(uses.iter().map(|u| u.solo_cores).collect());
    let (a, b) = (alone(cell), alone(reference));
    if metric != Metric::CpuUsPerRequest && !(a > 0.0 && b > 0.0 && (a / b - 1.0).abs() <= SHARE_TOLERANCE) {
        return Err(SoloBecause::UnlikeSoloUse { cell: a, reference: b });
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The pairs a ratio rests on, where they came from, and why not the joint slices.
#[derive(Debug, Clone, PartialEq)]
pub struct PairChoice {
    /// The pairs the ratio is computed from.
    pub pairs: Vec<Pair>,
    /// Which slices they are.
    pub source: PairSource,
    /// Why the solo slices carry it where the cells had joint slices.
    pub solo_because: Option<SoloBecause>,
    /// Where the solo slices carry it and the joint slices' ratio lay outside the solo interval
    /// (and theirs outside the joint's): the solo ratio and the joint one, for the report.
    pub disagreement: Option<(PairedRatio, PairedRatio)>,
}

/// Chooses between a pair of cells' `solo` and `joint` pairs (per block) by `rule`, decided on the
/// cells' CPU use before any ratio: the joint pairs where there are two or more and the rule
/// allows them, else the solo ones (with both ratios kept when they disagree).
pub fn choose_pairs(solo: Vec<Pair>, joint: Vec<Pair>, rule: Result<(), SoloBecause>) -> PairChoice {
    if joint.len() < 2 {
        return PairChoice { pairs: solo, source: PairSource::Solo, solo_because: None, disagreement: None };
    }
    if rule.is_ok() {
        return PairChoice { pairs: joint, source: PairSource::Joint, solo_because: None, disagreement: None };
    }
    let disagreement = match (paired_ratio(&joint), (solo.len() >= 2).then(|| paired_ratio(&solo)).flatten()) {
        (Some(together), Some(alone)) if together.low > alone.high || together.high < alone.low => Some((alone, together)),
        _ => None,
    };
    PairChoice { pairs: solo, source: PairSource::Solo, solo_because: rule.err(), disagreement }
}

/// The blocks in which both `cell` and `reference` were measured, as pairs of `metric` in `step`:
/// their joint slices' where the joint/solo rule allows them (`joint_rule`), else their solo
/// slices'. A block is a trial number; a trial that started its own server (no launch recorded)
/// is a launch of its own, so trial-schedule rounds pair too, each its own launch.
pub fn pairs_between(trials: &[TrialRecord], cell: &CellKey, reference: &CellKey, metric: Metric, step: usize) -> Vec<Pair> {
    pair_choice_between(trials, cell, reference, metric, step).pairs
}

/// The pairs of `pairs_between`, with which slices they came from and why.
pub fn pair_choice_between(trials: &[TrialRecord], cell: &CellKey, reference: &CellKey, metric: Metric, step: usize) -> PairChoice {
    let c = collect(trials, cell, reference, metric, step);
    let rule = if one_server(cell, reference) { joint_rule(&c.uses.0, &c.uses.1, metric) } else { Err(SoloBecause::UnlikeServers) };
    choose_pairs(c.solo, c.joint, rule)
}

/// Where an A/B run's two servers (`bench --cmd A --cmd B`) are named: `adhoc/NAME`.
const AD_HOC: &str = "adhoc/";

/// Whether two cells are builds of one server, whose joint slices may carry their ratio: variants
/// of one stack (an A/A twin, a planted change, another setting), or the two ad-hoc servers of an
/// A/B run (two builds of the user's server). Loaded at once, two copies of one server meet the
/// machine's contention alike, and their joint ratio is their solo one with the machine's drift
/// cancelled (the duet design). Different servers do not: on this project's 2-core VM, with every
/// server's share within the rule's tolerance, actix against fasthttp on json paired at once 6%
/// from their solo ratio and nethttp against Python 16% (bench/results/coverage-real-*), so their
/// ratio rests on their solo slices. Decided on the cells' names, before any data.
pub fn one_server(cell: &CellKey, reference: &CellKey) -> bool {
    cell.stack == reference.stack || (cell.stack.starts_with(AD_HOC) && reference.stack.starts_with(AD_HOC))
}

/// The pairs of `pair_choice_between` from the slices `source` names, whatever the rule would
/// choose: what `compare` reads where two runs' rules chose differently, so it compares like with
/// like. Joint pairs only where every block had them (else the solo ones).
pub fn pairs_of_source(
    trials: &[TrialRecord],
    cell: &CellKey,
    reference: &CellKey,
    metric: Metric,
    step: usize,
    source: PairSource,
) -> Vec<Pair> {
    let c = collect(trials, cell, reference, metric, step);
    match source {
        PairSource::Joint if c.joint.len() >= 2 => c.joint,
        _ => c.solo,
    }
}

/// Both cells' blocks as solo pairs and joint pairs, with the CPU use the rule reads of each
/// (the cell's, the reference's) in the blocks that had joint pairs.
struct Collected {
    solo: Vec<Pair>,
    joint: Vec<Pair>,
    uses: (Vec<CpuUse>, Vec<CpuUse>),
}

/// Both cells' blocks as solo pairs, joint pairs and the CPU use the rule reads.
fn collect(trials: &[TrialRecord], cell: &CellKey, reference: &CellKey, metric: Metric, step: usize) -> Collected {
    type Blocks = BTreeMap<u32, (u32, f64, Option<f64>, CpuUse)>;
    let of = |key: &CellKey| -> Blocks {
        trials
            .iter()
            .filter(|t| &t.cell == key && step < t.load.steps.len())
            .map(|t| {
                let joint = t.joint.filter(|_| step + 1 == t.load.steps.len()).and_then(|j| j.value(metric));
                (t.trial, (t.launch.unwrap_or(t.trial), metric.of(t, step), joint, CpuUse::of(t)))
            })
            .collect()
    };
    let reference = of(reference);
    let (mut solo, mut joint, mut uses) = (Vec::new(), Vec::new(), (Vec::new(), Vec::new()));
    for (block, (launch, value, together, used)) in of(cell) {
        let Some(&(_, ref_value, ref_together, ref_used)) = reference.get(&block) else { continue };
        solo.extend(Pair::of(launch, value, ref_value));
        if let (Some(a), Some(b)) = (together, ref_together) {
            joint.extend(Pair::of(launch, a, b));
            uses.0.push(used);
            uses.1.push(ref_used);
        }
    }
    Collected { solo, joint, uses }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(ratios: &[f64]) -> Vec<Pair> {
        ratios.iter().enumerate().filter_map(|(i, &r)| Pair::of(i as u32 / 3, r, 1.0)).collect()
    }

    fn using(solo_cores: f64, share: f64, blocks: usize) -> Vec<CpuUse> {
        vec![CpuUse { solo_cores, joint_share: Some(share), cells: 3 }; blocks]
    }

    #[test]
    fn joint_slices_carry_the_ratio_when_every_server_used_its_share_and_the_cpus() {
        let solo = pairs(&[0.70, 0.92, 0.81, 0.66, 0.95, 0.79, 0.74, 0.88, 0.83, 0.71]);
        let joint = pairs(&[0.78, 0.79, 0.77, 0.78, 0.785, 0.775, 0.78, 0.79, 0.77, 0.78]);
        let rule = joint_rule(&using(0.98, 0.34, 10), &using(0.97, 0.32, 10), Metric::RequestsPerSec);
        let chosen = choose_pairs(solo, joint.clone(), rule);
        assert_eq!((chosen.source, chosen.solo_because), (PairSource::Joint, None));
        assert_eq!(chosen.pairs, joint);
    }

    #[test]
    fn a_server_that_cannot_use_its_share_sends_the_ratio_to_the_solo_slices_whatever_the_ratios_say() {
        // The joint ratio agrees with the solo one here; the rule does not look at it.
        let solo = pairs(&[0.8, 0.82, 0.79, 0.81, 0.8, 0.8]);
        let joint = pairs(&[0.8, 0.81, 0.8, 0.8, 0.79, 0.8]);
        let rule = joint_rule(&using(0.98, 0.33, 6), &using(0.99, 0.22, 6), Metric::RequestsPerSec);
        assert!(matches!(rule, Err(SoloBecause::UnequalShare { which: 1, .. })), "{rule:?}");
        let chosen = choose_pairs(solo.clone(), joint, rule);
        assert_eq!((chosen.source, &chosen.pairs), (PairSource::Solo, &solo));
        assert!(chosen.disagreement.is_none(), "they agreed");
        assert!(chosen.solo_because.unwrap().describe(("a", "b")).starts_with("b took 22%"));
    }

    #[test]
    fn a_cell_that_leaves_cpu_idle_alone_keeps_throughput_on_solo_slices_but_not_cpu_per_request() {
        let (idle, busy) = (using(0.6, 0.33, 6), using(0.99, 0.33, 6));
        assert!(matches!(joint_rule(&idle, &busy, Metric::RequestsPerSec), Err(SoloBecause::UnlikeSoloUse { .. })));
        assert_eq!(joint_rule(&idle, &busy, Metric::CpuUsPerRequest), Ok(()));
        // Two servers that each show 80% of their CPU alone (the kernel's share charged elsewhere)
        // scale alike on equal shares.
        assert_eq!(joint_rule(&using(0.79, 0.33, 6), &using(0.82, 0.34, 6), Metric::RequestsPerSec), Ok(()));
    }

    #[test]
    fn without_two_joint_pairs_or_recorded_shares_the_solo_ones_stand() {
        let solo = pairs(&[0.9, 0.95, 0.92]);
        assert_eq!(choose_pairs(solo.clone(), pairs(&[0.9]), Ok(())).pairs, solo);
        let unrecorded = vec![CpuUse { solo_cores: 1.0, joint_share: None, cells: 3 }; 4];
        assert_eq!(joint_rule(&unrecorded, &unrecorded, Metric::RequestsPerSec), Err(SoloBecause::TooFewJointShares));
        // A disagreement is kept for the report where the rule sent the ratio to the solo slices.
        let chosen = choose_pairs(pairs(&[2.0, 2.1, 1.9, 2.05]), pairs(&[1.0, 1.01, 0.99, 1.0]), Err(SoloBecause::TooFewJointShares));
        assert!(chosen.disagreement.is_some());
    }

    #[test]
    fn only_builds_of_one_server_pair_on_their_joint_slices() {
        let key = |stack: &str, variant: &str| CellKey {
            stack: stack.into(),
            scenario: crate::scenario::Scenario::Hello,
            variant: variant.into(),
            workers: 1,
            twin: false,
        };
        assert!(one_server(&key("rust/actix", "sqlite"), &key("rust/actix", "x5")), "variants of one stack");
        assert!(one_server(&key("rust/actix", "sqlite"), &CellKey { twin: true, ..key("rust/actix", "sqlite") }), "an A/A twin");
        assert!(one_server(&key("adhoc/base", "default"), &key("adhoc/head", "default")), "the two builds of an A/B");
        assert!(!one_server(&key("rust/actix", "sqlite"), &key("go/fasthttp", "sqlite")), "different stacks");
        assert!(!one_server(&key("adhoc/server", "default"), &key("go/fasthttp", "sqlite")), "an ad-hoc server beside a stack");
        assert!(SoloBecause::UnlikeServers
            .describe(("go/fasthttp", "rust/actix"))
            .starts_with("go/fasthttp and rust/actix are different servers"));
    }
}
