//! Paired comparisons: the ratio of two cells measured side by side, block by block, with an
//! interval that says how far it can be trusted. Within a block both cells met the same machine
//! (the same slow stretch hits both), so the per-block log ratio cancels what they share. Blocks
//! of one launch share that launch's start (where each server's code and data landed in memory,
//! what its JIT chose), so they are never counted as independent of it: each launch gives one
//! estimate (the Hodges-Lehmann location of its blocks' log ratios) and the interval is Student's
//! t over the launches' estimates with launches - 1 degrees of freedom, valid whatever part of
//! the variance the launches carry. A run of one launch can say nothing of starts: its interval is
//! the exact Wilcoxon signed-rank interval of its blocks, and it says so (`IntervalBasis`).

use crate::records::results::{CellKey, TrialRecord};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::collections::BTreeMap;

/// Coverage every paired interval aims for.
pub const PAIRED_CONFIDENCE: f64 = 0.95;
/// Above this many blocks the signed-rank distribution is taken as normal (its exact counts grow
/// with n³ and the normal approximation is then within a rank of it).
const EXACT_MAX_N: usize = 60;

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

/// What a paired interval's coverage counts on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalBasis {
    /// Student's t over the launches' estimates: valid when starts differ.
    #[default]
    Launches,
    /// One launch: the signed-rank interval of its blocks, which cannot see how much another
    /// start of the same servers would differ.
    OneLaunch,
}

/// The two parts of a paired ratio's variance, as standard deviations of the log ratio: block to
/// block within a launch, and launch to launch beyond what its blocks' noise explains (one-way
/// analysis of variance; 0 when the launches agree better than their blocks imply).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// Standard deviation of one block's log ratio about its launch's level.
    pub block_sd: f64,
    /// Standard deviation of the launches' levels about the true ratio.
    pub launch_sd: f64,
    /// Degrees of freedom of the block part: 0 where every launch held one block, and then the
    /// two parts cannot be told apart (the launch part holds both).
    #[serde(default)]
    pub block_df: u32,
}

impl Components {
    /// The components of `pairs`: pooled within-launch variance, and the launch means' variance
    /// less the part their blocks explain. A launch of one block adds no within-launch degree.
    pub fn of(pairs: &[Pair]) -> Components {
        let launches: Vec<Vec<f64>> = by_launch(pairs).into_values().collect();
        let (mut within, mut df) = (0.0, 0usize);
        for l in &launches {
            let mean = l.iter().sum::<f64>() / l.len() as f64;
            within += l.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
            df += l.len() - 1;
        }
        let block_var = if df > 0 { within / df as f64 } else { 0.0 };
        let means: Vec<f64> = launches.iter().map(|l| l.iter().sum::<f64>() / l.len() as f64).collect();
        let launch_var = if means.len() > 1 {
            let explained = launches.iter().map(|l| block_var / l.len() as f64).sum::<f64>() / launches.len() as f64;
            (sample_variance(&means) - explained).max(0.0)
        } else {
            0.0
        };
        Components { block_sd: block_var.sqrt(), launch_sd: launch_var.sqrt(), block_df: df as u32 }
    }

    /// The half-width (of the log ratio) a paired interval at `PAIRED_CONFIDENCE` can expect from
    /// `launches` launches of `blocks_per_launch` blocks each: Student's t over the launches'
    /// estimates, whose variance is the launch part plus the block part over the blocks, at the
    /// median of the sample deviation (Wilson-Hilferty). One launch: the blocks' normal interval,
    /// which says nothing of starts. Infinite without a launch or a block.
    pub fn expected_half_width(&self, launches: u32, blocks_per_launch: f64) -> f64 {
        if launches == 0 || blocks_per_launch <= 0.0 {
            return f64::INFINITY;
        }
        if launches == 1 {
            return 1.96 * self.block_sd / blocks_per_launch.sqrt();
        }
        let df = f64::from(launches - 1);
        let per_launch = (self.launch_sd.powi(2) + self.block_sd.powi(2) / blocks_per_launch).sqrt();
        let median_sd = (1.0 - 2.0 / (9.0 * df)).max(0.0).powf(1.5);
        t_quantile(PAIRED_CONFIDENCE, df) * per_launch * median_sd / f64::from(launches).sqrt()
    }
}

/// A paired estimate of cell / reference: the ratio, its interval and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    /// exp(the mean of the launches' Hodges-Lehmann estimates of the per-block log ratios).
    pub ratio: f64,
    /// Lower end of the interval of the ratio.
    pub low: f64,
    /// Upper end of the interval of the ratio.
    pub high: f64,
    /// The interval's coverage: `PAIRED_CONFIDENCE`, or less when a single launch of too few
    /// blocks allows no such interval (then the range of the blocks).
    pub confidence: f64,
    /// Blocks paired.
    pub blocks: u32,
    /// Launches the blocks came from.
    pub launches: u32,
    /// What the coverage counts on: the launches, or one launch's blocks.
    #[serde(default)]
    pub basis: IntervalBasis,
    /// The variance's parts the blocks show, for projecting another design.
    #[serde(default)]
    pub components: Components,
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

/// The paired ratio of the blocks in `pairs` at `PAIRED_CONFIDENCE`; None without any pair.
pub fn paired_ratio(pairs: &[Pair]) -> Option<PairedRatio> {
    paired_ratio_at(pairs, PAIRED_CONFIDENCE)
}

/// The paired ratio of the blocks in `pairs` with an interval of `confidence` (over launches
/// where there are two or more); None without any pair.
pub fn paired_ratio_at(pairs: &[Pair], confidence: f64) -> Option<PairedRatio> {
    let finite: Vec<Pair> = pairs.iter().copied().filter(|p| p.log_ratio.is_finite()).collect();
    let launches = by_launch(&finite);
    let components = Components::of(&finite);
    let blocks = finite.len() as u32;
    let (location, low, high, confidence, basis) = if launches.len() >= 2 {
        let estimates: Vec<f64> = launches.values().filter_map(|l| hodges_lehmann(l)).collect();
        let (mean, low, high) = t_interval(&estimates, confidence);
        (mean, low, high, confidence, IntervalBasis::Launches)
    } else {
        let logs: Vec<f64> = finite.iter().map(|p| p.log_ratio).collect();
        let location = hodges_lehmann(&logs)?;
        let (low, high, coverage) = signed_rank_interval(&logs, confidence);
        (location, low, high, coverage, IntervalBasis::OneLaunch)
    };
    Some(PairedRatio {
        ratio: location.exp(),
        low: low.exp(),
        high: high.exp(),
        confidence,
        blocks,
        launches: launches.len() as u32,
        basis,
        components,
    })
}

/// The mean of `values` and its two-sided Student's t interval at `confidence`.
fn t_interval(values: &[f64], confidence: f64) -> (f64, f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let half = t_quantile(confidence, n - 1.0) * sample_variance(values).sqrt() / n.sqrt();
    (mean, mean - half, mean + half)
}

/// The quantile of Student's t with `df` degrees of freedom that bounds a two-sided interval of
/// `confidence`.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1e-9)).map_or(f64::INFINITY, |d| d.inverse_cdf(0.5 + confidence / 2.0))
}

fn sample_variance(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
}

/// The finite log ratios of each launch, by launch.
fn by_launch(pairs: &[Pair]) -> BTreeMap<u32, Vec<f64>> {
    let mut out: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for p in pairs.iter().filter(|p| p.log_ratio.is_finite()) {
        out.entry(p.launch).or_default().push(p.log_ratio);
    }
    out
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
