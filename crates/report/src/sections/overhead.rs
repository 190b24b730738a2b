//! The proxy study's arithmetic: a cell-step's latency percentiles pooled over its trials, and a
//! proxy's overhead over the baseline (nginx served directly) at the same step, in µs and in %.
//!
//! Percentiles come from the trials' HDR histograms merged into one, not from the median of per-trial
//! percentiles: three 10 s trials at 25k req/s give 750,000 samples, and p99.99 of the pool rests on
//! 75 of them where one trial's p99.99 rests on 25. Trials whose histogram is missing or does not
//! decode fall back to the median of their stored percentiles, and the result says so.

use bakeoff_load::LatencyStats;
use bakeoff_model::records::results::TrialRecord;
use hdrhistogram::Histogram;

/// The statistics compared, in table order.
pub const STATS: [Stat; 6] = [Stat::P50, Stat::P90, Stat::P99, Stat::P999, Stat::P9999, Stat::Max];

/// A latency statistic the proxy study compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// The median.
    P50,
    /// The 90th percentile.
    P90,
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    P999,
    /// The 99.99th percentile.
    P9999,
    /// The maximum.
    Max,
}

impl Stat {
    /// The heading tables and charts give it: "p50", "p99.9", "max".
    pub fn label(self) -> &'static str {
        match self {
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::P9999 => "p99.99",
            Stat::Max => "max",
        }
    }

    /// The quantile, or None for the maximum.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Stat::P50 => Some(0.5),
            Stat::P90 => Some(0.9),
            Stat::P99 => Some(0.99),
            Stat::P999 => Some(0.999),
            Stat::P9999 => Some(0.9999),
            Stat::Max => None,
        }
    }

    fn of_stats(self, l: &LatencyStats) -> f64 {
        match self {
            Stat::P50 => l.p50_us,
            Stat::P90 => l.p90_us,
            Stat::P99 => l.p99_us,
            Stat::P999 => l.p999_us,
            Stat::P9999 => l.p9999_us,
            Stat::Max => l.max_us,
        }
    }

    fn of_histogram(self, h: &Histogram<u64>) -> f64 {
        match self.quantile() {
            Some(q) => h.value_at_quantile(q) as f64,
            None => h.max() as f64,
        }
    }
}

/// Where pooled percentiles came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The trials' histograms merged.
    Histograms,
    /// Median over trials of each stored percentile (some histogram was missing or unreadable).
    TrialMedians,
}

/// Latency percentiles of one cell-step, µs, in `STATS` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles {
    /// Each statistic's value, µs, in `STATS` order.
    pub values_us: [f64; 6],
    /// Latencies the values stand on.
    pub count: u64,
    /// Whether they come from merged histograms or trial medians.
    pub source: Source,
}

impl Percentiles {
    /// The value of one statistic, µs.
    pub fn get(&self, s: Stat) -> f64 {
        self.values_us[STATS.iter().position(|x| *x == s).unwrap_or(0)]
    }
}

/// Pools step `step` of `trials` (all of one cell).
pub fn pooled(trials: &[&TrialRecord], step: usize) -> Percentiles {
    let steps: Vec<_> = trials.iter().filter_map(|t| t.load.steps.get(step)).collect();
    let merged = steps.iter().try_fold(None::<Histogram<u64>>, |acc, s| {
        let h = bakeoff_load::decode_histogram(&s.histogram).ok()?;
        match acc {
            None => Some(Some(h)),
            Some(mut a) => {
                a.add(&h).ok()?;
                Some(Some(a))
            }
        }
    });
    if let Some(Some(h)) = merged {
        if !h.is_empty() {
            return Percentiles { values_us: STATS.map(|s| s.of_histogram(&h)), count: h.len(), source: Source::Histograms };
        }
    }
    let values_us = STATS.map(|s| median(steps.iter().map(|st| s.of_stats(&st.latency)).collect()));
    Percentiles { values_us, count: steps.iter().map(|s| s.latency.count).sum(), source: Source::TrialMedians }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A proxy's cost over the baseline for one statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overhead {
    /// The statistic compared.
    pub stat: Stat,
    /// The baseline's value, µs (pooled over its trials).
    pub baseline_us: f64,
    /// The proxy's value, µs (pooled over its trials).
    pub proxy_us: f64,
    /// The overhead, µs: the Hodges-Lehmann estimate of the trial-by-trial differences where
    /// trials pair, else the difference of the pooled values.
    pub delta_us: f64,
    /// 100 * delta / baseline; NaN when the baseline is 0.
    pub delta_percent: f64,
    /// The interval of `delta_us` from the paired trials; None from fewer than two pairs.
    pub interval: Option<DeltaInterval>,
}

/// The signed-rank interval of a paired difference, µs, and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeltaInterval {
    /// Lower end, µs.
    pub low_us: f64,
    /// Upper end, µs.
    pub high_us: f64,
    /// Its coverage: 95%, or less when too few pairs allow no such interval.
    pub confidence: f64,
    /// Trials paired (a proxy trial and the baseline's trial of the same round).
    pub pairs: u32,
}

impl Overhead {
    /// No overhead can be told from noise: the interval holds zero, or there is none.
    pub fn within_noise(&self) -> bool {
        self.interval.is_none_or(|i| i.low_us <= 0.0 && 0.0 <= i.high_us)
    }
}

/// One statistic of a proxy step and the baseline's step at the same rate, trial by trial: the
/// trials of a round ran back to back, so their difference cancels what that round's machine did.
pub struct TrialPairs {
    /// (proxy, baseline) per round both measured, µs.
    pub per_stat: Vec<Vec<(f64, f64)>>,
}

impl TrialPairs {
    /// The rounds in which both the proxy (at `proxy_step`) and the baseline (at `base_step`) ran.
    pub fn of(proxy: &[&TrialRecord], proxy_step: usize, baseline: &[&TrialRecord], base_step: usize) -> TrialPairs {
        let per_stat = STATS
            .iter()
            .map(|s| {
                proxy
                    .iter()
                    .filter_map(|p| {
                        let b = baseline.iter().find(|b| b.trial == p.trial)?;
                        Some((s.of_stats(&p.load.steps.get(proxy_step)?.latency), s.of_stats(&b.load.steps.get(base_step)?.latency)))
                    })
                    .collect()
            })
            .collect();
        TrialPairs { per_stat }
    }
}

/// The proxy's overhead over the baseline for every statistic, in `STATS` order: pooled values
/// beside the paired estimate of their difference and its interval.
pub fn overhead(proxy: &Percentiles, baseline: &Percentiles, pairs: &TrialPairs) -> Vec<Overhead> {
    STATS
        .iter()
        .enumerate()
        .map(|(i, &stat)| {
            let (p, b) = (proxy.get(stat), baseline.get(stat));
            let diffs: Vec<f64> = pairs.per_stat.get(i).map(|v| v.iter().map(|(p, b)| p - b).collect()).unwrap_or_default();
            let delta = match diffs.len() {
                0 | 1 => p - b,
                _ => bakeoff_model::statistics::paired::hodges_lehmann(&diffs).unwrap_or(p - b),
            };
            let interval = (diffs.len() >= 2).then(|| {
                let (low_us, high_us, confidence) =
                    bakeoff_model::statistics::paired::signed_rank_interval(&diffs, bakeoff_model::statistics::paired::PAIRED_CONFIDENCE);
                DeltaInterval { low_us, high_us, confidence, pairs: diffs.len() as u32 }
            });
            Overhead {
                stat,
                baseline_us: b,
                proxy_us: p,
                delta_us: delta,
                delta_percent: if b == 0.0 { f64::NAN } else { 100.0 * delta / b },
                interval,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic;

    fn histogram(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        h
    }

    fn trial_with(h: &Histogram<u64>, stack: &str, trial: u32) -> TrialRecord {
        let mut t = synthetic::trial(stack, "proxy", trial, &[(None, h.clone())]);
        t.load.steps[0].histogram = synthetic::encode_histogram(h);
        t
    }

    #[test]
    fn overhead_of_known_histograms() {
        // Baseline: 90% at 100 µs, 9% at 200, 0.9% at 400, 0.1% at 1000. Proxy adds 50 µs to each.
        let base = histogram(&[(100, 9000), (200, 900), (400, 90), (1000, 10)]);
        let prox = histogram(&[(150, 9000), (250, 900), (450, 90), (1050, 10)]);
        let b = pooled(&[&trial_with(&base, "baseline", 1)], 0);
        let p = pooled(&[&trial_with(&prox, "p", 1)], 0);
        assert_eq!(b.source, Source::Histograms);
        assert_eq!(b.values_us, [100.0, 100.0, 200.0, 400.0, 1000.0, 1000.0]);
        let o = overhead(&p, &b, &TrialPairs { per_stat: vec![] });
        // Values below 2048 are exact in a 3-digit histogram, so the deltas are exact too.
        for x in &o {
            assert_eq!(x.delta_us, 50.0, "{x:?}");
        }
        assert_eq!(o[0].delta_percent, 50.0);
        assert_eq!(o[5].delta_percent, 5.0);
    }

    #[test]
    fn trials_are_pooled_before_taking_percentiles() {
        // Trial 1 all at 100 µs, trial 2 all at 300 µs: the pooled p50 is 100 (the lower half) and
        // the pooled p90 is 300; a median of per-trial p50s would have said 200.
        let t1 = trial_with(&histogram(&[(100, 1000)]), "s", 1);
        let t2 = trial_with(&histogram(&[(300, 1000)]), "s", 2);
        let p = pooled(&[&t1, &t2], 0);
        assert_eq!((p.get(Stat::P50), p.get(Stat::P90), p.count), (100.0, 300.0, 2000));
    }

    #[test]
    fn unreadable_histograms_fall_back_to_trial_medians() {
        let mut t1 = trial_with(&histogram(&[(100, 1000)]), "s", 1);
        let mut t2 = trial_with(&histogram(&[(300, 1000)]), "s", 2);
        t1.load.steps[0].histogram = "not base64!".into();
        t2.load.steps[0].histogram.clear();
        let p = pooled(&[&t1, &t2], 0);
        assert_eq!(p.source, Source::TrialMedians);
        assert_eq!(p.get(Stat::P50), 200.0);
    }

    #[test]
    fn zero_baseline_gives_no_percentage() {
        let z = Percentiles { values_us: [0.0; 6], count: 1, source: Source::Histograms };
        let one = Percentiles { values_us: [1.0; 6], count: 1, source: Source::Histograms };
        assert!(overhead(&one, &z, &TrialPairs { per_stat: vec![] })[0].delta_percent.is_nan());
    }

    #[test]
    fn a_paired_difference_whose_interval_holds_zero_is_within_noise() {
        let flat = Percentiles { values_us: [100.0; 6], count: 1, source: Source::Histograms };
        // Six rounds: the proxy 20-30 µs above its round's baseline in every one, while the
        // baselines themselves wander from 80 to 160 µs (what pairing cancels).
        let steady: Vec<(f64, f64)> =
            [80.0, 160.0, 95.0, 140.0, 110.0, 120.0].iter().zip([20.0, 30.0, 25.0, 22.0, 28.0, 24.0]).map(|(b, d)| (b + d, *b)).collect();
        // Six rounds whose differences change sign: no overhead can be told from noise.
        let noisy: Vec<(f64, f64)> = [(150.0, 100.0), (60.0, 110.0), (130.0, 100.0), (70.0, 120.0), (140.0, 90.0), (80.0, 100.0)].to_vec();
        let o = overhead(&flat, &flat, &TrialPairs { per_stat: vec![steady, noisy] });
        let i = o[0].interval.unwrap();
        assert!((20.0..=30.0).contains(&o[0].delta_us) && i.low_us > 0.0 && i.pairs == 6, "{:?}", o[0]);
        assert!((i.confidence - 0.96875).abs() < 1e-9, "six pairs: the range of the Walsh averages covers 1 - 2/64");
        assert!(!o[0].within_noise());
        assert!(o[1].within_noise() && o[1].interval.unwrap().low_us < 0.0, "{:?}", o[1]);
        // No pairs: the pooled difference, no interval, never a finding.
        assert!(o[2].interval.is_none() && o[2].within_noise() && o[2].delta_us == 0.0);
    }
}
