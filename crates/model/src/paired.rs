//! Paired comparisons: the ratio of two cells measured side by side, block by block, with an
//! interval that says how far it can be trusted. Within a block both cells met the same machine
//! (the same slow stretch hits both), so the per-block log ratio cancels what they share; its
//! location is the Hodges-Lehmann estimate (median of the Walsh averages) with the exact
//! Wilcoxon signed-rank interval (normal approximation for many blocks). Blocks of one launch are
//! not independent of its start, so with several launches the interval also covers a
//! hierarchical bootstrap (launches resampled, then blocks within each), and the wider wins.

use crate::results::{CellKey, TrialRecord};
use crate::rng::SplitMix64;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Coverage every paired interval aims for.
pub const PAIRED_CONFIDENCE: f64 = 0.95;
/// Above this many blocks the signed-rank distribution is taken as normal (its exact counts grow
/// with n³ and the normal approximation is then within a rank of it).
const EXACT_MAX_N: usize = 60;
/// Resamples of the hierarchical bootstrap; fixed, with a fixed seed, so a report is reproducible.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// One block's log ratio (ln of the cell's value over the reference's) and the launch it was in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// Which launch of the servers the block ran in (0-based).
    pub launch: u32,
    /// ln(cell / reference) in that block.
    pub log_ratio: f64,
}

impl Pair {
    /// The pair of one block from the two cells' values there; None unless both are positive.
    pub fn of(launch: u32, cell: f64, reference: f64) -> Option<Pair> {
        (cell > 0.0 && reference > 0.0 && cell.is_finite() && reference.is_finite())
            .then(|| Pair { launch, log_ratio: (cell / reference).ln() })
    }
}

/// A paired estimate of cell / reference: the ratio, its interval and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    /// exp(Hodges-Lehmann estimate of the per-block log ratios).
    pub ratio: f64,
    /// Lower end of the interval of the ratio.
    pub low: f64,
    /// Upper end of the interval of the ratio.
    pub high: f64,
    /// The interval's coverage: `PAIRED_CONFIDENCE`, or less when too few blocks allow no such
    /// interval (then the range of the blocks).
    pub confidence: f64,
    /// Blocks paired.
    pub blocks: u32,
    /// Launches the blocks came from.
    pub launches: u32,
}

impl PairedRatio {
    /// Half the interval's width relative to the ratio, as a fraction (the "±x%" a report states).
    pub fn relative_half_width(&self) -> f64 {
        (self.high - self.low) / 2.0 / self.ratio
    }

    /// The interval holds 1.0: no difference can be told from noise.
    pub fn within_noise(&self) -> bool {
        self.low <= 1.0 && 1.0 <= self.high
    }

    /// The figure of merit P: the 95% half-width in percent times the square root of the minutes
    /// of measurement it took. Lower is better; halving it takes a quarter of the time.
    pub fn merit(&self, minutes_measured: f64) -> f64 {
        100.0 * self.relative_half_width() * minutes_measured.max(0.0).sqrt()
    }
}

/// The paired ratio of the blocks in `pairs`; None without any pair.
pub fn paired_ratio(pairs: &[Pair]) -> Option<PairedRatio> {
    let logs: Vec<f64> = pairs.iter().map(|p| p.log_ratio).filter(|v| v.is_finite()).collect();
    let location = hodges_lehmann(&logs)?;
    let mut launches: Vec<u32> = pairs.iter().map(|p| p.launch).collect();
    launches.sort_unstable();
    launches.dedup();
    let (mut low, mut high, confidence) = signed_rank_interval(&logs, PAIRED_CONFIDENCE);
    if launches.len() > 1 {
        let (b_low, b_high) = hierarchical_bootstrap(pairs, PAIRED_CONFIDENCE);
        (low, high) = (low.min(b_low), high.max(b_high));
    }
    Some(PairedRatio {
        ratio: location.exp(),
        low: low.exp(),
        high: high.exp(),
        confidence,
        blocks: logs.len() as u32,
        launches: launches.len() as u32,
    })
}

/// Minutes of wall time the trials of `cells` took (starts, warm-ups and checks included): what a
/// comparison of them cost, for its figure of merit.
pub fn minutes_spent(trials: &[TrialRecord], cells: &[&CellKey]) -> f64 {
    trials.iter().filter(|t| cells.contains(&&t.cell)).map(|t| t.elapsed_s).filter(|s| s.is_finite()).sum::<f64>() / 60.0
}

/// The Hodges-Lehmann location: the median of all Walsh averages (x_i + x_j) / 2, i <= j.
pub fn hodges_lehmann(values: &[f64]) -> Option<f64> {
    let walsh = walsh_averages(values);
    (!walsh.is_empty()).then(|| median_of_sorted(&walsh))
}

/// The exact (or, for many values, normal) Wilcoxon signed-rank interval of the location of
/// `values` at `confidence`, with the coverage it really has. Too few values for it give their
/// whole Walsh range and the coverage of that range.
pub fn signed_rank_interval(values: &[f64], confidence: f64) -> (f64, f64, f64) {
    let walsh = walsh_averages(values);
    let Some(&last) = walsh.last() else { return (f64::NAN, f64::NAN, 0.0) };
    let n = values.len();
    let m = walsh.len();
    let alpha = 1.0 - confidence;
    // c: the largest signed-rank value with P(T <= c) <= alpha/2. The test rejects a location with
    // c or fewer Walsh averages on one side of it, so the interval is [W(c), W(m-1-c)] (0-based)
    // and covers with 1 - 2 P(T <= c). Too few values for any such c leave the whole range.
    let (c, coverage) = if n <= EXACT_MAX_N {
        let cdf = signed_rank_cdf(n);
        let k = cdf.iter().take_while(|&&p| p <= alpha / 2.0).count();
        (k.saturating_sub(1), 1.0 - 2.0 * cdf[k.saturating_sub(1)])
    } else {
        let nf = n as f64;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        ((m as f64 / 2.0 - normal_quantile(1.0 - alpha / 2.0) * sd).floor().max(0.0) as usize, confidence)
    };
    if c == 0 {
        return (walsh[0], last, coverage.max(0.0));
    }
    (walsh[c], walsh[m - 1 - c], coverage)
}

/// P(T <= t) for t = 0..=n(n+1)/2, T the signed-rank statistic of n values under no difference:
/// the number of subsets of {1..n} with each sum, over 2^n.
fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0f64; max + 1];
    counts[0] = 1.0;
    for rank in 1..=n {
        for s in (rank..=max).rev() {
            counts[s] += counts[s - rank];
        }
    }
    let total = 2f64.powi(n as i32);
    let mut acc = 0.0;
    counts
        .iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

fn walsh_averages(values: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(values.len() * (values.len() + 1) / 2);
    for (i, a) in values.iter().enumerate() {
        for b in &values[i..] {
            out.push((a + b) / 2.0);
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The percentile interval of the mean log ratio when launches are resampled, then the blocks
/// of each drawn launch: the launch-to-launch part of the variance, which pooled blocks hide.
fn hierarchical_bootstrap(pairs: &[Pair], confidence: f64) -> (f64, f64) {
    let mut by_launch: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    for p in pairs.iter().filter(|p| p.log_ratio.is_finite()) {
        by_launch.entry(p.launch).or_default().push(p.log_ratio);
    }
    let launches: Vec<Vec<f64>> = by_launch.into_values().collect();
    let mut rng = SplitMix64(0x5eed_b10c);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let (mut sum, mut count) = (0.0, 0usize);
            for _ in 0..launches.len() {
                let launch = &launches[rng.below(launches.len())];
                for _ in 0..launch.len() {
                    sum += launch[rng.below(launch.len())];
                    count += 1;
                }
            }
            sum / count as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| means[((q * (means.len() - 1) as f64).round() as usize).min(means.len() - 1)];
    (at(tail), at(1.0 - tail))
}

/// The half-width (of the log ratio) the paired interval of `blocks` blocks spread over `launches`
/// launches can expect, per unit of the per-block log ratios' standard deviation: the median,
/// over simulated normal blocks (fixed seed, so the same on every machine), of what
/// [`paired_ratio`] gives. The exact interval of few blocks is much wider than 1.96 σ/√n (six
/// blocks give the range of their Walsh averages), and several launches add the bootstrap's, so a
/// projection from one design to another scales by these factors, not by √n. The blocks carry no
/// launch-to-launch difference of their own: what a launch adds beyond that is not simulated.
/// Infinite below six blocks, which give no 95% interval. Memoized per design.
pub fn paired_half_width_factor(blocks: u32, launches: u32) -> f64 {
    static MEMO: std::sync::Mutex<BTreeMap<(u32, u32), f64>> = std::sync::Mutex::new(BTreeMap::new());
    let n = blocks.max(2);
    let l = launches.clamp(1, n);
    if let Some(k) = MEMO.lock().ok().and_then(|m| m.get(&(n, l)).copied()) {
        return k;
    }
    const SIMULATIONS: usize = 101;
    const SIGMA: f64 = 0.01;
    let mut rng = SplitMix64(0x6b1a_5eed ^ (u64::from(n) << 16) ^ u64::from(l));
    let mut widths: Vec<f64> = (0..SIMULATIONS)
        .map(|_| {
            let pairs: Vec<Pair> = (0..n).map(|i| Pair { launch: i * l / n, log_ratio: SIGMA * standard_normal(&mut rng) }).collect();
            // Too few blocks for a real 95% interval (under six): no half-width reaches a target.
            paired_ratio(&pairs)
                .filter(|r| r.confidence >= PAIRED_CONFIDENCE)
                .map_or(f64::INFINITY, |r| (r.high.ln() - r.low.ln()) / 2.0 / SIGMA)
        })
        .collect();
    widths.sort_by(f64::total_cmp);
    let k = widths[SIMULATIONS / 2];
    if let Ok(mut m) = MEMO.lock() {
        m.insert((n, l), k);
    }
    k
}

/// A standard normal draw (Box-Muller from two uniforms in (0, 1]).
fn standard_normal(rng: &mut SplitMix64) -> f64 {
    let mut uniform = || ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let (a, b) = (uniform(), uniform());
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

/// The standard normal quantile (Acklam's rational approximation, relative error under 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -39.696_830_286_653_76,
        220.946_098_424_520_5,
        -275.928_510_446_968_7,
        138.357_751_867_269,
        -30.664_798_066_147_16,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] =
        [-54.476_098_798_224_06, 161.585_836_858_040_9, -155.698_979_859_886_6, 66.801_311_887_719_72, -13.280_681_552_885_72];
    const C: [f64; 6] = [
        -0.007_784_894_002_430_293,
        -0.322_396_458_041_136_4,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [0.007_784_695_709_041_462, 0.322_467_129_070_039_8, 2.445_134_137_142_996, 3.754_408_661_907_416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
#[path = "paired_tests.rs"]
mod tests;
