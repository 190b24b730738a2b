//! What a study's widest paired ratio can expect before the run: each ranked pair's variance parts
//! pooled over the study's earlier runs, and the median over simulated runs of the planned design
//! of the widest of their half-widths. One earlier run's widest ratio is as noisy as the run it
//! would forecast (from six launches a half-width lands within a factor of 1.5 of its own median
//! only 78% of the time, and a forecast from one such figure misses twice as often); the widest of
//! several pairs, each from parts pooled over runs, is steadier (91% from six launches where the
//! parts are known).

use super::paired::{t_quantile, Components, PAIRED_CONFIDENCE};
use crate::rng::{standard_normal, SplitMix64};

/// Simulated runs behind a forecast: the median of the widest over this many is within about 2%
/// of its limit (the median's standard error is 1.25 σ / √n of a spread near 40%).
const DRAWS: usize = 2000;
/// The draws' seed: a forecast is the same figure every time it is made from the same parts.
const SEED: u64 = 0x0b5e_55ed;

/// One pair's variance parts as one run measured them, with the launches behind them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredParts {
    /// The parts the run's paired ratio showed.
    pub components: Components,
    /// Launches the ratio was paired over.
    pub launches: u32,
}

/// One pair's parts pooled over runs: each variance weighted by its degrees of freedom (the block
/// part by its within-launch degrees, the launch part by launches - 1), as a pooled variance of
/// several samples is. None without a run of two launches or more.
pub fn pool(runs: &[MeasuredParts]) -> Option<Components> {
    let with_launches: Vec<&MeasuredParts> = runs.iter().filter(|r| r.launches >= 2).collect();
    let launch_df: f64 = with_launches.iter().map(|r| f64::from(r.launches - 1)).sum();
    if launch_df == 0.0 {
        return None;
    }
    let launch_var = with_launches.iter().map(|r| f64::from(r.launches - 1) * r.components.launch_sd.powi(2)).sum::<f64>() / launch_df;
    let block_df: u32 = with_launches.iter().map(|r| r.components.block_df).sum();
    let block_var = if block_df == 0 {
        0.0
    } else {
        with_launches.iter().map(|r| f64::from(r.components.block_df) * r.components.block_sd.powi(2)).sum::<f64>() / f64::from(block_df)
    };
    Some(Components { block_sd: block_var.sqrt(), launch_sd: launch_var.sqrt(), block_df })
}

/// The median, over simulated runs, of the widest 95% half-width (of the log ratio) among `pairs`,
/// each paired over `launches` launches of `blocks_per_launch` blocks: per pair, Student's t over
/// its launches' estimates, whose sample deviation is drawn from its χ² law. The pairs are drawn
/// independently; pairs of one scenario share its best cell, so their widest varies a little less
/// than this. One launch: the blocks' normal interval of the widest pair. None without a pair.
pub fn widest_half_width(pairs: &[Components], launches: u32, blocks_per_launch: f64) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    if launches < 2 {
        return pairs.iter().map(|c| c.expected_half_width(launches, blocks_per_launch)).reduce(f64::max);
    }
    let df = launches - 1;
    let scale = t_quantile(PAIRED_CONFIDENCE, f64::from(df)) / f64::from(launches).sqrt();
    let per_launch: Vec<f64> = pairs.iter().map(|c| (c.launch_sd.powi(2) + c.block_sd.powi(2) / blocks_per_launch).sqrt()).collect();
    let mut rng = SplitMix64(SEED);
    let mut widest: Vec<f64> = (0..DRAWS)
        .map(|_| per_launch.iter().map(|sd| scale * sd * (chi_squared(df, &mut rng) / f64::from(df)).sqrt()).fold(0.0, f64::max))
        .collect();
    widest.sort_by(f64::total_cmp);
    Some(widest[DRAWS / 2])
}

/// Below this many degrees of freedom a χ² draw sums squared normals; above, one normal through
/// the Wilson-Hilferty cube, whose quantiles are within 0.5% there, keeps a forecast of a long
/// run as cheap as a short one's.
const EXACT_CHI_SQUARED_DF: u32 = 30;

/// A draw from the χ² law with `df` degrees of freedom.
fn chi_squared(df: u32, rng: &mut SplitMix64) -> f64 {
    if df <= EXACT_CHI_SQUARED_DF {
        return (0..df).map(|_| standard_normal(rng).powi(2)).sum();
    }
    let k = f64::from(df);
    let v = 2.0 / (9.0 * k);
    k * (1.0 - v + standard_normal(rng) * v.sqrt()).max(0.0).powi(3)
}

#[cfg(test)]
#[path = "forecast_tests.rs"]
mod tests;
