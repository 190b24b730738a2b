//! A cell's change between two runs measured against a peer of its scenario that both runs
//! measured in the same blocks. Within a run the cell and its peer met the same machine in every
//! block, so each block's ratio cell / peer cancels what hit both (a slow stretch, a slower day);
//! between the runs the two samples of block ratios are independent, and their Hodges-Lehmann
//! shift with its Mann-Whitney interval, widened to Welch's over the runs' launch means (a
//! launch's blocks share its start), says how far the cell moved against the peer. It holds
//! where the peer is unchanged; the report names the peer, since a changed peer moves the ratio
//! as well.

use super::launches::{launch_count, launch_interval, wider, InLaunch};
use super::{verdict_of, Change};
use crate::records::metric::Metric;
use crate::records::results::{CellKey, TrialRecord};
use crate::statistics::pairing::{pair_choice_between, pairs_of_source, PairSource};
use crate::statistics::robust::ratio_interval;
use serde::Serialize;

/// Fewer block ratios than this a side allow no 95% interval of a two-sample shift.
const MIN_BLOCKS: usize = 4;

/// The cell's change against a peer measured in the same blocks of both runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RelativeChange {
    /// The peer both runs' ratios are to.
    pub reference: CellKey,
    /// (cell / peer in B) over (cell / peer in A): the Hodges-Lehmann shift of the two runs'
    /// per-block ratios.
    pub ratio: f64,
    /// Lower end of the 95% interval of `ratio`.
    pub low: Option<f64>,
    /// Upper end of that interval.
    pub high: Option<f64>,
    /// What the interval says, on the compared metric.
    pub verdict: Change,
    /// Blocks paired in run A.
    pub blocks_a: usize,
    /// Blocks paired in run B.
    pub blocks_b: usize,
    /// Launches of the servers those blocks came from, in run A.
    pub launches_a: usize,
    /// Launches in run B.
    pub launches_b: usize,
}

/// The block ratios cell / peer of both runs, on the last step of the cell's trials, each with
/// its launch: from the slices each run's joint/solo rule chose where both chose alike, else from
/// the solo slices of both, so a joint ratio is never set against a solo one.
fn block_ratios(a: &[TrialRecord], b: &[TrialRecord], cell: &CellKey, peer: &CellKey, metric: Metric) -> (Vec<InLaunch>, Vec<InLaunch>) {
    let step = |trials: &[TrialRecord]| trials.iter().find(|t| &t.cell == cell).map_or(0, |t| t.load.steps.len().saturating_sub(1));
    let source = |trials: &[TrialRecord]| pair_choice_between(trials, cell, peer, metric, step(trials)).source;
    let like = if source(a) == source(b) { source(a) } else { PairSource::Solo };
    let of = |trials: &[TrialRecord]| {
        pairs_of_source(trials, cell, peer, metric, step(trials), like)
            .iter()
            .map(|p| InLaunch { launch: p.launch, value: p.log_ratio.exp() })
            .collect()
    };
    (of(a), of(b))
}

/// `cell`'s change against the best of `peers` (cells both runs share, absolute change of each
/// given): peers of its scenario and worker count with enough shared blocks in both runs, the
/// one that moved least between the runs first. None without such a peer.
pub fn relative_change(
    cell: &CellKey,
    peers: &[(&CellKey, f64)],
    a: &[TrialRecord],
    b: &[TrialRecord],
    metric: Metric,
) -> Option<RelativeChange> {
    let mut candidates: Vec<(&CellKey, f64, Vec<InLaunch>, Vec<InLaunch>)> = peers
        .iter()
        .filter(|(p, _)| *p != cell && p.scenario == cell.scenario && p.workers == cell.workers)
        .map(|&(p, moved)| {
            let (ra, rb) = block_ratios(a, b, cell, p, metric);
            (p, moved.ln().abs(), ra, rb)
        })
        .filter(|(_, moved, ra, rb)| moved.is_finite() && ra.len() >= MIN_BLOCKS && rb.len() >= MIN_BLOCKS)
        .collect();
    candidates.sort_by(|x, y| x.1.total_cmp(&y.1).then_with(|| x.0.cmp(y.0)));
    let (reference, _, ra, rb) = candidates.into_iter().next()?;
    let values = |r: &[InLaunch]| r.iter().map(|x| x.value).collect::<Vec<f64>>();
    let mut r = ratio_interval(&values(&ra), &values(&rb))?;
    r.bounds = r.bounds.map(|pooled| wider(pooled, launch_interval(&ra, &rb)));
    let (low, high) = (r.bounds.map(|b| b.0), r.bounds.map(|b| b.1));
    Some(RelativeChange {
        reference: reference.clone(),
        ratio: r.ratio,
        low,
        high,
        verdict: verdict_of(metric, r.bounds),
        blocks_a: ra.len(),
        blocks_b: rb.len(),
        launches_a: launch_count(&ra),
        launches_b: launch_count(&rb),
    })
}
