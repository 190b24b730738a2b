//! What a run has measured so far, for deciding what to measure next: each cell's values of the
//! primary metric (with the block and launch each came from), the cells that failed and those whose
//! load generator was the bottleneck; and whether a cell, or a scenario's paired ratios, still
//! miss the precision target.

use bakeoff_model::plan::schedule::turns_factor;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::statistics::paired::{paired_ratio, Pair};
use bakeoff_model::statistics::pairing::{choose_pairs, joint_rule, one_server, CpuUse, SoloBecause};
use bakeoff_model::statistics::spread::Variance;
use bakeoff_model::statistics::summary::{Estimate, Metric};
use std::collections::{BTreeMap, BTreeSet};

/// No cell gets more trials than this, whatever the budget.
pub(crate) const MAX_TRIALS: u32 = 30;
/// At most this many times the run's slice length for a cell that varies more than its peers.
pub(crate) const MAX_SLICE_FACTOR: u32 = 4;
/// At most this many times the run's slice length for a cell whose slices end before every
/// connection was answered: a slice that short does not measure the server at all.
pub(crate) const MAX_STARVED_FACTOR: u32 = 8;

/// Values a cell needs before its own spread sizes its slices.
const SIZING_BLOCKS: usize = 5;
/// How sure a cell's spread must be over its peers' before its slices grow: a steady cell
/// lengthened by chance would spend the budget on nothing.
const SIZING_CONFIDENCE: f64 = 0.99;

/// One measured value of a cell: the block (trial number) and launch it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measured {
    pub(crate) block: u32,
    pub(crate) launch: u32,
    pub(crate) value: f64,
    /// Its value in the block's joint slice, when it had one.
    pub(crate) joint: Option<f64>,
    /// Its server's CPU use alone and in the joint slice: what the joint/solo rule reads.
    pub(crate) used: Option<CpuUse>,
}

/// The primary metric's values of every cell so far, and the cells that failed (never retried).
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) values: BTreeMap<CellKey, Vec<Measured>>,
    pub(crate) failed: BTreeSet<CellKey>,
    /// Cells whose load generator ran at its ceiling: their requests/s is a lower bound that more
    /// trials cannot tighten, so precision rounds do not chase them.
    pub(crate) client_bound: BTreeSet<CellKey>,
    /// Cells that used CPU while idle beside the others in a block schedule: measured alone, a
    /// launch of their own, from their next launch on.
    pub(crate) alone: BTreeSet<CellKey>,
    /// Cells that vary more on their own than their peers or whose slices left connections
    /// unanswered, with their slices' length over the run's from their next launch on (never
    /// shortened again).
    pub(crate) slice_factor: BTreeMap<CellKey, u32>,
    /// Cells whose slices since their last lengthening left connections without a response, or
    /// whose warm-up found their connections' turns longer than half a slice, with the factor
    /// their slices need: the slice ended (or would end) before every connection was answered
    /// once (a SYN retry after a full accept queue takes 1 s; a slow server with many connections
    /// answers each only every few seconds), so its rate counts the slice's edge, not the server.
    pub(crate) starved: BTreeMap<CellKey, u32>,
    /// The joint slices' length over the run's, per set of cells loaded together, once one of
    /// them left connections unanswered there: on its share of the server CPUs a cell answers
    /// each connection less often than alone, which lengthens the joint slice, never the cells'
    /// solo slices, which have the whole CPUs.
    pub(crate) joint_factor: BTreeMap<Vec<CellKey>, u32>,
    /// Cells whose slices were lengthened for their connections' turns (`lengthen_starved`): a
    /// joint slice would need its cells' share times that, so they have none.
    pub(crate) long_turns: BTreeSet<CellKey>,
    /// The `long_turns` cells whose leaving the joint slice the run has said.
    pub(crate) said_long_turns: BTreeSet<CellKey>,
    pub(crate) trials_done: u32,
}

impl Tally {
    fn estimate(&self, key: &CellKey) -> Option<Estimate> {
        self.values.get(key).map(|v| Estimate::from_values(&v.iter().map(|m| m.value).collect::<Vec<_>>()))
    }

    pub(crate) fn meets(&self, key: &CellKey, target: f64) -> bool {
        self.estimate(key).is_some_and(|e| e.meets(target))
    }

    /// Whether the cell's values can still be chased: it has not failed, and its throughput is not
    /// the client's ceiling (when that is what is ranked).
    fn chased(&self, key: &CellKey, metric: Metric) -> bool {
        let capped = metric == Metric::RequestsPerSec && self.client_bound.contains(key);
        !self.failed.contains(key) && !capped
    }

    /// Whether another trial of the cell could help it reach `target`: it is chased and has not
    /// met it.
    pub(crate) fn pending(&self, key: &CellKey, target: f64, metric: Metric) -> bool {
        self.chased(key, metric) && !self.meets(key, target)
    }

    /// The widest relative half-width among the ratios a scenario ranks, which a scenario
    /// measured block by block must bring within the precision target: each chased cell against
    /// the best of them (and an A/A twin against its original), paired by block. A scenario of a
    /// single chased cell is judged on that cell's own interval, as there is no ratio.
    /// Infinite while a ratio has fewer than two pairs (or a lone cell no real 95% interval); None
    /// when no cell is chased.
    pub(crate) fn widest_ratio(&self, keys: &[CellKey], metric: Metric) -> Option<f64> {
        let (best, ratios) = self.ranked_ratios(keys, metric)?;
        if ratios.is_empty() {
            let own = self.estimate(&best)?;
            return Some(if own.confidence >= bakeoff_model::statistics::robust::CONFIDENCE {
                own.relative_half_width()
            } else {
                f64::INFINITY
            });
        }
        let widths = ratios.iter().map(|(cell, reference)| {
            let pairs = self.pairs(cell, reference, metric);
            if pairs.len() < 2 {
                return f64::INFINITY;
            }
            paired_ratio(&pairs).map_or(f64::INFINITY, |r| r.relative_half_width())
        });
        Some(widths.fold(0.0, f64::max))
    }

    /// The best of a scenario's chased originals on `metric`, and every other chased cell with the
    /// cell it is ranked against: the best, or for an A/A twin its original. None when no original
    /// is chased.
    fn ranked_ratios(&self, keys: &[CellKey], metric: Metric) -> Option<(CellKey, Vec<(CellKey, CellKey)>)> {
        let chased: Vec<&CellKey> = keys.iter().filter(|k| self.chased(k, metric)).collect();
        let speed = |k: &CellKey| {
            let m = self.estimate(k).map_or(f64::NAN, |e| e.median);
            if metric.higher_is_better() {
                m
            } else {
                1.0 / m
            }
        };
        let best = chased.iter().copied().filter(|k| !k.twin).max_by(|a, b| speed(a).total_cmp(&speed(b)))?.clone();
        let ratios = chased
            .into_iter()
            .filter(|k| **k != best)
            .map(|k| {
                let reference = if k.twin { CellKey { twin: false, ..k.clone() } } else { best.clone() };
                (k.clone(), reference)
            })
            .collect();
        Some((best, ratios))
    }

    /// How many times the run's slice length each chased cell of a scenario measures from now on.
    /// A cell's own spread is the variance of its log values around the mean of their launch; one
    /// whose spread is over its peers' pooled spread by more than chance allows (the F test at
    /// `SIZING_CONFIDENCE`: on four degrees of freedom each, only a quotient over 16) gets slices
    /// longer by the quotient, rounded (at most `MAX_SLICE_FACTOR`): what a cell varies by on its
    /// own (a garbage collector, a scheduler) averages down with the slice's length, while what
    /// the machine does to all cells alike is what the pairing cancels. Every cell keeps 1 until
    /// each has `SIZING_BLOCKS` values, and in a scenario of one cell.
    pub(crate) fn slice_factors(&self, keys: &[CellKey], metric: Metric) -> BTreeMap<CellKey, u32> {
        let chased: Vec<&CellKey> = keys.iter().filter(|k| self.chased(k, metric)).collect();
        let spreads: Vec<(&CellKey, Variance)> = chased.iter().filter_map(|k| Some((*k, self.own_spread(k)?))).collect();
        if spreads.len() < 2 || spreads.len() < chased.len() {
            return BTreeMap::new();
        }
        let peers_of = |key: &CellKey| {
            let others: Vec<Variance> = spreads.iter().filter(|(k, _)| *k != key).map(|(_, v)| *v).collect();
            Variance::pooled(&others)
        };
        spreads
            .iter()
            .filter_map(|(k, own)| Some((*k, own.exceeds(&peers_of(k)?, SIZING_CONFIDENCE)?)))
            .map(|(k, quotient)| (k.clone(), (quotient.round() as u32).clamp(1, MAX_SLICE_FACTOR)))
            .filter(|(_, factor)| *factor > 1)
            .collect()
    }

    /// The cells of a scenario whose slices `slice_factors` would make longer than they are now,
    /// with their new factor: slices never shorten again.
    pub(crate) fn longer_slices(&self, keys: &[CellKey], metric: Metric) -> BTreeMap<CellKey, u32> {
        let now = |k: &CellKey| self.slice_factor.get(k).copied().unwrap_or(1);
        self.slice_factors(keys, metric).into_iter().filter(|(k, f)| *f > now(k)).collect()
    }

    /// The cells among `keys` whose slices or warm-up left connections unanswered, with slices as
    /// long as `note_starved` or `note_turns` found they need (at most `MAX_STARVED_FACTOR` times
    /// the run's) from their next launch on, now recorded as their factor. A cell already at the
    /// most stays there, starved or not: its warning says why.
    pub(crate) fn lengthen_starved(&mut self, keys: &[CellKey]) -> BTreeMap<CellKey, u32> {
        let mut longer = BTreeMap::new();
        for (key, needed) in keys.iter().filter_map(|k| Some((k, self.starved.remove(k)?))) {
            let now = self.slice_factor.get(key).copied().unwrap_or(1);
            let factor = needed.min(MAX_STARVED_FACTOR);
            if factor > now && !self.failed.contains(key) {
                self.slice_factor.insert(key.clone(), factor);
                self.long_turns.insert(key.clone());
                longer.insert(key.clone(), factor);
            }
        }
        longer
    }

    /// The variance of a cell's log values around the mean of the launch each came from; None
    /// before `SIZING_BLOCKS` values.
    fn own_spread(&self, key: &CellKey) -> Option<Variance> {
        let values = self.values.get(key).filter(|v| v.len() >= SIZING_BLOCKS)?;
        let mut by_launch: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for m in values.iter().filter(|m| m.value > 0.0) {
            by_launch.entry(m.launch).or_default().push(m.value.ln());
        }
        Variance::within(by_launch.into_values())
    }

    /// The blocks both cells were measured in, as pairs of their values: their joint slices' where
    /// the joint/solo rule allows them (builds of one server, fair shares), as a report pairs them.
    fn pairs(&self, cell: &CellKey, reference: &CellKey, metric: Metric) -> Vec<Pair> {
        let (Some(a), Some(b)) = (self.values.get(cell), self.values.get(reference)) else { return Vec::new() };
        let (mut solo, mut joint, mut uses) = (Vec::new(), Vec::new(), (Vec::new(), Vec::new()));
        for m in a {
            let Some(r) = b.iter().find(|r| r.block == m.block) else { continue };
            solo.extend(Pair::of(m.launch, m.value, r.value));
            if let (Some(x), Some(y)) = (m.joint, r.joint) {
                joint.extend(Pair::of(m.launch, x, y));
                uses.0.extend(m.used);
                uses.1.extend(r.used);
            }
        }
        let rule = if one_server(cell, reference) { joint_rule(&uses.0, &uses.1, metric) } else { Err(SoloBecause::UnlikeServers) };
        choose_pairs(solo, joint, rule).pairs
    }

    /// Notes a slice of `key` that left connections without an answer: its slices need at least
    /// twice their length, and as many times the run's slice length `base` as two turns of its
    /// connections take.
    pub(crate) fn note_starved(&mut self, key: &CellKey, slice: &bakeoff_load::LoadReport, base: std::time::Duration) {
        if let Some(turns) = starved_turns(slice, base) {
            let now = self.slice_factor.get(key).copied().unwrap_or(1);
            self.needs(key, turns.max(2 * now));
        }
    }

    /// Notes a joint slice of `keys` that left connections without an answer, whose slowest
    /// connections need `needed` times the run's slice for two turns (`starved_turns`): the next
    /// joint slices last that long, at least twice as long as now, and never more than as many
    /// times the run's slice as cells share it (then the joint slice costs no more than their solo
    /// slices together; a figure still starved is left out). The new factor when it grew.
    pub(crate) fn note_joint_starved(&mut self, keys: &[CellKey], needed: u32) -> Option<u32> {
        let now = self.joint_factor(keys);
        let factor = needed.max(2 * now).min(MAX_STARVED_FACTOR.min(keys.len() as u32)).max(now);
        (factor > now).then(|| {
            self.joint_factor.insert(joint_key(keys), factor);
            factor
        })
    }

    /// The joint slice of `keys`' length over the run's slice (`note_joint_starved`).
    pub(crate) fn joint_factor(&self, keys: &[CellKey]) -> u32 {
        self.joint_factor.get(&joint_key(keys)).copied().unwrap_or(1)
    }

    /// Notes what a launch's warm-up of `key` measured of its connections' turns: slices shorter
    /// than two of them would end before every connection was answered, so they get that long
    /// before the launch's first slice. A cell whose slices share the server CPUs with `sharing`
    /// cells in all (at once; 1 alone) answers that many times slower than its warm-up alone did.
    pub(crate) fn note_turns(&mut self, key: &CellKey, warm_up: &bakeoff_load::LoadReport, base: std::time::Duration, sharing: usize) {
        let sharing = sharing.max(1) as u32;
        self.needs(key, turns_of(warm_up, base / sharing));
    }

    fn needs(&mut self, key: &CellKey, factor: u32) {
        if factor > self.slice_factor.get(key).copied().unwrap_or(1) {
            let most = self.starved.entry(key.clone()).or_default();
            *most = (*most).max(factor);
        }
    }

    /// Counts a stored trial and keeps its value of `metric` (its last step's).
    pub(crate) fn record(&mut self, key: &CellKey, record: &TrialRecord, metric: Metric) {
        self.trials_done += 1;
        if record.load.warnings.iter().any(|w| matches!(w, bakeoff_load::Warning::ClientSaturated { .. })) {
            self.client_bound.insert(key.clone());
        }
        if let Some(step) = record.load.steps.len().checked_sub(1) {
            let joint = record.joint.and_then(|j| j.value(metric));
            let (block, launch, value) = (record.trial, record.launch.unwrap_or(record.trial), metric.of(record, step));
            let m = Measured { block, launch, value, joint, used: Some(CpuUse::of(record)) };
            self.values.entry(key.clone()).or_default().push(m);
        }
    }
}

/// The factor over the run's slice length `base` a load's slices need to last two turns of its
/// connections (a closed loop's: an open model's rate does not wait for answers); 0 when unknown.
/// A joint slice's cells in one order: each launch starts its residents in a fresh one, and the
/// same cells are the same joint slice.
fn joint_key(keys: &[CellKey]) -> Vec<CellKey> {
    let mut sorted = keys.to_vec();
    sorted.sort();
    sorted
}

/// When `slice` left connections without an answer: how many times `base` two turns of its
/// connections take.
pub(crate) fn starved_turns(slice: &bakeoff_load::LoadReport, base: std::time::Duration) -> Option<u32> {
    let starved = slice.warnings.iter().any(|w| matches!(w, bakeoff_load::Warning::StarvedConnections { .. }));
    starved.then(|| turns_of(slice, base))
}

fn turns_of(load: &bakeoff_load::LoadReport, base: std::time::Duration) -> u32 {
    let closed = load.steps.last().filter(|step| step.target_rate.is_none());
    closed.map_or(0, |step| turns_factor(step.connections, step.requests_per_sec, base.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::scenario::Scenario;

    fn key(stack: &str, twin: bool) -> CellKey {
        CellKey { stack: stack.into(), scenario: Scenario::Hello, variant: "default".into(), workers: 1, twin }
    }

    /// Whether the scenario of `keys` still misses ±5%.
    fn misses_5_percent(t: &Tally, keys: &[CellKey], metric: Metric) -> bool {
        t.widest_ratio(keys, metric).is_some_and(|w| w > 0.05)
    }

    /// A tally of cells measured in the same blocks, each block's values given per cell.
    fn tally(cells: &[(&CellKey, &[f64])]) -> Tally {
        let mut t = Tally::default();
        for (k, values) in cells {
            let m = values.iter().enumerate().map(|(i, &v)| Measured {
                block: i as u32 + 1,
                launch: i as u32 / 3,
                value: v,
                joint: None,
                used: None,
            });
            t.values.insert((*k).clone(), m.collect());
        }
        t
    }

    #[test]
    fn a_ratio_steady_block_by_block_meets_a_target_its_cells_alone_miss() {
        let (a, b) = (key("a", false), key("b", false));
        // The machine swings 30% from block to block; b is always 0.8 of a in the same block.
        let swing = [100.0, 130.0, 90.0, 125.0, 95.0, 120.0];
        let steady: Vec<f64> = swing.iter().map(|v| 0.8 * v).collect();
        let t = tally(&[(&a, &swing), (&b, &steady)]);
        assert!(!t.meets(&a, 0.05) && !t.meets(&b, 0.05), "each cell's own interval is wide");
        assert!(!misses_5_percent(&t, &[a.clone(), b.clone()], Metric::RequestsPerSec));
        // The same values in a shuffled order pair badly: the ratio misses the target.
        let shuffled = [0.8 * 130.0, 0.8 * 90.0, 0.8 * 125.0, 0.8 * 100.0, 0.8 * 120.0, 0.8 * 95.0];
        let t = tally(&[(&a, &swing), (&b, &shuffled)]);
        assert!(misses_5_percent(&t, &[a, b], Metric::RequestsPerSec));
    }

    #[test]
    fn joint_slices_that_agree_with_the_solo_ones_bring_the_ratio_within_target() {
        // Two variants of one server: their joint slices may carry the ratio.
        let variant = |v: &str| CellKey { variant: v.into(), ..key("one", false) };
        let (a, b) = (variant("a"), variant("b"));
        // Solo slices one after the other: the machine's swing does not cancel.
        let solo_a = [100.0, 130.0, 90.0, 125.0, 95.0, 120.0];
        let solo_b = [0.8 * 130.0, 0.8 * 90.0, 0.8 * 125.0, 0.8 * 100.0, 0.8 * 120.0, 0.8 * 95.0];
        let mut t = tally(&[(&a, &solo_a), (&b, &solo_b)]);
        assert!(misses_5_percent(&t, &[a.clone(), b.clone()], Metric::RequestsPerSec));
        // Loaded at once, each block's swing falls on both: b is 0.8 of a in every joint slice.
        // Each server took half the joint slice's CPU time and `cores` of the one server CPU alone.
        let with_joint_using = |key: &CellKey, share: f64, cores: f64, t: &mut Tally| {
            for (i, m) in t.values.get_mut(key).unwrap().iter_mut().enumerate() {
                m.joint = Some(share * [50.0, 65.0, 45.0, 62.0, 48.0, 60.0][i]);
                m.used = Some(CpuUse { solo_cores: cores, joint_share: Some(0.5), cells: 2 });
            }
        };
        let with_joint = |key: &CellKey, share: f64, t: &mut Tally| with_joint_using(key, share, 1.0, t);
        with_joint(&a, 1.0, &mut t);
        with_joint(&b, 0.8, &mut t);
        assert!(!misses_5_percent(&t, &[a.clone(), b.clone()], Metric::RequestsPerSec), "joint pairs meet ±5%");
        // b as fast as a on a share but 0.8 alone, where alone it used 0.8 of the server CPU: the
        // rule reads that use, not the ratios, and the solo pairs stand.
        let mut far = tally(&[(&a, &[100.0; 6]), (&b, &[80.0, 81.0, 79.0, 80.0, 80.5, 79.5])]);
        with_joint(&a, 1.0, &mut far);
        with_joint_using(&b, 1.0, 0.8, &mut far);
        assert!(
            far.pairs(&b, &a, Metric::RequestsPerSec).iter().all(|p| p.log_ratio.exp() < 0.82),
            "the solo pairs: {:?}",
            far.pairs(&b, &a, Metric::RequestsPerSec)
        );
        // The same figures from two different servers: their solo pairs, whatever their shares.
        let (x, y) = (key("x", false), key("y", false));
        let mut unlike = tally(&[(&x, &solo_a), (&y, &solo_b)]);
        with_joint(&x, 1.0, &mut unlike);
        with_joint(&y, 0.8, &mut unlike);
        assert!(misses_5_percent(&unlike, &[x.clone(), y.clone()], Metric::RequestsPerSec), "different servers pair alone");
    }

    #[test]
    fn a_twin_pairs_with_its_original_and_a_capped_or_failed_cell_is_not_chased() {
        let (a, twin, c) = (key("a", false), key("a", true), key("c", false));
        let swing = [100.0, 130.0, 90.0, 125.0, 95.0, 120.0];
        let wild = [50.0, 200.0, 60.0, 180.0, 40.0, 150.0];
        let mut t = tally(&[(&a, &swing), (&twin, &swing), (&c, &wild)]);
        assert!(misses_5_percent(&t, &[a.clone(), twin.clone(), c.clone()], Metric::RequestsPerSec));
        t.client_bound.insert(c.clone());
        assert!(!misses_5_percent(&t, &[a.clone(), twin.clone(), c.clone()], Metric::RequestsPerSec), "capped: not chased");
        // Its CPU per request is still chased: the ceiling caps requests/s only.
        assert!(misses_5_percent(&t, &[a.clone(), twin.clone(), c.clone()], Metric::CpuUsPerRequest));
        t.failed.insert(c.clone());
        assert!(!misses_5_percent(&t, &[a, twin, c], Metric::CpuUsPerRequest));
    }

    #[test]
    fn a_cell_that_varies_on_its_own_gets_longer_slices_and_its_steady_peers_do_not() {
        let (a, b, noisy) = (key("a", false), key("b", false), key("noisy", false));
        // The machine moves every cell alike from block to block; `noisy` also varies by itself.
        let machine = [100.0, 104.0, 97.0, 102.0, 99.0, 101.0];
        let own = [1.0, 1.3, 0.8, 1.25, 0.75, 1.2];
        let steady: Vec<f64> = machine.iter().zip([1.0, 1.01, 0.99, 1.0, 1.01, 0.99]).map(|(m, e)| m * e).collect();
        let steady_b: Vec<f64> = steady.iter().map(|v| 0.5 * v).collect();
        let wild: Vec<f64> = machine.iter().zip(own).map(|(m, o)| 0.7 * m * o).collect();
        let t = tally(&[(&a, &steady), (&b, &steady_b), (&noisy, &wild)]);
        let keys = [a.clone(), b.clone(), noisy.clone()];
        let factors = t.slice_factors(&keys, Metric::RequestsPerSec);
        assert_eq!(factors.keys().collect::<Vec<_>>(), [&noisy], "{factors:?}");
        assert!((2..=MAX_SLICE_FACTOR).contains(&factors[&noisy]), "{factors:?}");
        // Alike cells keep their length, and nobody is sized on fewer than five values.
        let alike = tally(&[(&a, &steady), (&b, &steady_b)]);
        assert!(alike.slice_factors(&keys[..2], Metric::RequestsPerSec).is_empty());
        // One of two cells alike is often 1.6 times as spread as the other on six values: chance.
        let wider: Vec<f64> = machine.iter().zip([1.0, 1.016, 0.984, 1.0, 1.016, 0.984]).map(|(m, e)| m * e).collect();
        let by_chance = tally(&[(&a, &steady), (&b, &wider)]);
        assert!(by_chance.slice_factors(&keys[..2], Metric::RequestsPerSec).is_empty());
        let early = tally(&[(&a, &steady[..4]), (&noisy, &wild[..4])]);
        assert!(early.slice_factors(&[a.clone(), noisy.clone()], Metric::RequestsPerSec).is_empty());
        // A failed cell is not sized, nor are the others against it.
        let mut failed = tally(&[(&a, &steady), (&noisy, &wild)]);
        failed.failed.insert(noisy.clone());
        assert!(failed.slice_factors(&[a, noisy], Metric::RequestsPerSec).is_empty());
    }

    #[test]
    fn a_starved_cell_gets_the_slices_it_needs_up_to_the_most_and_only_once_per_starving() {
        let (a, b) = (key("a", false), key("b", false));
        let keys = [a.clone(), b.clone()];
        let mut t = Tally::default();
        t.starved.insert(a.clone(), 2);
        assert_eq!(t.lengthen_starved(&keys), BTreeMap::from([(a.clone(), 2)]));
        assert!(t.lengthen_starved(&keys).is_empty(), "not starved again since: no change");
        t.starved.insert(a.clone(), 4);
        assert_eq!(t.lengthen_starved(&keys), BTreeMap::from([(a.clone(), 4)]));
        // A slow server's connections may need more than the most: it gets the most.
        t.starved.insert(a.clone(), 16);
        assert_eq!(t.lengthen_starved(&keys), BTreeMap::from([(a.clone(), MAX_STARVED_FACTOR)]));
        t.starved.insert(a.clone(), 16);
        assert!(t.lengthen_starved(&keys).is_empty(), "at the most it stays");
        assert_eq!((t.slice_factor.get(&a), t.slice_factor.get(&b)), (Some(&MAX_STARVED_FACTOR), None));
        assert_eq!(t.long_turns, BTreeSet::from([a.clone()]), "its joint slices would starve too");
        // A cell sized longer for its own spread lengthens from there, never shortens; a failed
        // one is left alone.
        t.slice_factor.insert(b.clone(), 3);
        t.starved.insert(b.clone(), 2);
        assert!(t.lengthen_starved(&keys).is_empty(), "3x already answers what 2x would");
        t.starved.insert(b.clone(), 6);
        assert_eq!(t.lengthen_starved(&keys), BTreeMap::from([(b.clone(), 6)]));
        let c = key("c", false);
        t.failed.insert(c.clone());
        t.starved.insert(c.clone(), 2);
        assert!(t.lengthen_starved(&[c]).is_empty());
    }

    #[test]
    fn a_starved_joint_slice_lengthens_itself_up_to_one_slice_per_cell_and_never_the_solo_slices() {
        let (a, b, c) = (key("a", false), key("b", false), key("c", false));
        let three = [a.clone(), b.clone(), c.clone()];
        let mut t = Tally::default();
        assert_eq!(t.joint_factor(&three), 1);
        assert_eq!(t.note_joint_starved(&three, 1), Some(2), "at least twice as long");
        assert_eq!(t.note_joint_starved(&three, 2), Some(3), "twice would be 4: three cells cap it at 3");
        assert_eq!(t.note_joint_starved(&three, 8), None, "at the cap it stays");
        assert_eq!(t.joint_factor(&three), 3);
        assert_eq!(t.joint_factor(&[c.clone(), a.clone(), b.clone()]), 3, "the same cells, started in another order");
        // Another set of cells (one failed since) starts over; two cells cap theirs at 2.
        assert_eq!(t.joint_factor(&three[..2]), 1);
        assert_eq!(t.note_joint_starved(&three[..2], 5), Some(2));
        // Many cells: the turns it needs, up to the most any slice gets.
        let many: Vec<CellKey> = (0..12).map(|i| key(&format!("s{i}"), false)).collect();
        assert_eq!(t.note_joint_starved(&many, 5), Some(5));
        assert_eq!(t.note_joint_starved(&many, 40), Some(MAX_STARVED_FACTOR));
        assert!(t.slice_factor.is_empty() && t.starved.is_empty(), "the cells' solo slices keep their length");
    }

    #[test]
    fn a_lone_cell_is_judged_on_its_own_interval() {
        let a = key("a", false);
        assert!(misses_5_percent(
            &tally(&[(&a, &[100.0, 130.0, 90.0, 125.0, 95.0, 120.0])]),
            std::slice::from_ref(&a),
            Metric::RequestsPerSec
        ));
        assert!(!misses_5_percent(&tally(&[(&a, &[100.0, 100.5, 99.8, 100.2, 99.9, 100.1])]), &[a], Metric::RequestsPerSec));
    }
}
