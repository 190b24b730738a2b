//! A change between two runs judged at the level that carries the variance (Kalibera & Jones):
//! the launches. The blocks of one launch share its start (memory layout, a JIT's choices, where
//! the workers landed, the machine's state that minute), so a run of three launches holds three
//! independent observations, not ten. Pooling the blocks of both runs into one two-sample
//! interval then calls two runs of the same code changed whenever their launches happened to
//! differ. Here each launch's mean log value is one observation and Welch's t-interval over the
//! two runs' launch means bounds the shift; a comparison uses the wider of this interval and the
//! pooled one. Where every launch holds one value (the trial schedule starts a server per trial)
//! the pooled interval is already at the launch level and stays as it is: distribution-free, and
//! not widened by one outlying trial.

use crate::statistics::robust::t_975;

/// One measured value and the launch of the servers it was measured in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InLaunch {
    /// The launch (a trial of the trial schedule is a launch of its own).
    pub launch: u32,
    /// The value; only positive, finite ones count.
    pub value: f64,
}

/// Mean log value per launch, in launch order, with how many values each holds.
fn launch_means(values: &[InLaunch]) -> Vec<(f64, u32)> {
    let mut by_launch: std::collections::BTreeMap<u32, (f64, u32)> = Default::default();
    for v in values.iter().filter(|v| v.value.is_finite() && v.value > 0.0) {
        let (sum, n) = by_launch.entry(v.launch).or_default();
        *sum += v.value.ln();
        *n += 1;
    }
    by_launch.into_values().map(|(sum, n)| (sum / f64::from(n), n)).collect()
}

fn mean_and_variance(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    (mean, x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0))
}

/// The 95% interval of B / A from the two runs' launch means (Welch: unequal variances, its
/// Satterthwaite degrees of freedom); None unless each run has at least two launches and some
/// launch holds more than one value.
pub(crate) fn launch_interval(a: &[InLaunch], b: &[InLaunch]) -> Option<(f64, f64)> {
    let (a, b) = (launch_means(a), launch_means(b));
    let clustered = a.iter().chain(&b).any(|&(_, n)| n > 1);
    if a.len() < 2 || b.len() < 2 || !clustered {
        return None;
    }
    let means = |l: &[(f64, u32)]| l.iter().map(|m| m.0).collect::<Vec<f64>>();
    let (la, lb) = (means(&a), means(&b));
    let ((ma, va), (mb, vb)) = (mean_and_variance(&la), mean_and_variance(&lb));
    let (sa, sb) = (va / la.len() as f64, vb / lb.len() as f64);
    let se = (sa + sb).sqrt();
    let shift = mb - ma;
    if se == 0.0 {
        return Some((shift.exp(), shift.exp()));
    }
    let df = (sa + sb).powi(2) / (sa.powi(2) / (la.len() - 1) as f64 + sb.powi(2) / (lb.len() - 1) as f64);
    let half = t_975(df) * se;
    Some(((shift - half).exp(), (shift + half).exp()))
}

/// The pooled interval widened to cover the launch-level one where there is one: the wider wins,
/// so a run's few launches are never read as many independent blocks.
pub(crate) fn wider(pooled: (f64, f64), launches: Option<(f64, f64)>) -> (f64, f64) {
    launches.map_or(pooled, |(l, h)| (pooled.0.min(l), pooled.1.max(h)))
}

/// How many launches `values` came from.
pub(crate) fn launch_count(values: &[InLaunch]) -> usize {
    launch_means(values).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(launch_levels: &[f64], blocks: u32, wobble: f64) -> Vec<InLaunch> {
        let mut out = Vec::new();
        for (launch, level) in launch_levels.iter().enumerate() {
            for block in 0..blocks {
                let sign = if block % 2 == 0 { 1.0 } else { -1.0 };
                out.push(InLaunch { launch: launch as u32, value: level * (1.0 + sign * wobble) });
            }
        }
        out
    }

    #[test]
    fn launches_that_differ_widen_what_tight_blocks_would_call_a_change() {
        // Blocks within a launch agree to 0.1%; the launches of each run spread 4%.
        let a = run(&[100.0, 104.0, 97.0], 4, 0.001);
        let b = run(&[103.0, 99.0, 106.0], 4, 0.001);
        let (low, high) = launch_interval(&a, &b).unwrap();
        assert!(low < 1.0 && 1.0 < high, "3 v 3 launches 4% apart hold no change: {low}..{high}");
        // Each side: launch means' sd about 3.5%, so the t (df about 4) interval is about ±8%.
        assert!(high / low > 1.10 && high / low < 1.25, "{low}..{high}");
    }

    #[test]
    fn a_shift_larger_than_the_launches_spread_is_found() {
        let a = run(&[100.0, 101.0, 99.5, 100.5], 3, 0.01);
        let b = run(&[90.0, 91.0, 89.5, 90.5], 3, 0.01);
        let (low, high) = launch_interval(&a, &b).unwrap();
        assert!(high < 0.93 && low > 0.87, "{low}..{high}");
    }

    #[test]
    fn one_launch_a_side_has_no_launch_level_interval() {
        let a = run(&[100.0], 10, 0.01);
        let b = run(&[100.0, 101.0], 5, 0.01);
        assert_eq!(launch_interval(&a, &b), None);
        assert_eq!(launch_count(&b), 2);
        // Not positive or not finite values are not observations.
        let bad = [InLaunch { launch: 0, value: 0.0 }, InLaunch { launch: 1, value: f64::NAN }];
        assert_eq!(launch_count(&bad), 0);
    }

    #[test]
    fn a_launch_per_trial_keeps_the_pooled_interval() {
        // The trial schedule: every value a launch of its own, so pooling them is already right.
        let a = run(&[100.0, 104.0, 97.0, 101.0], 1, 0.0);
        let b = run(&[90.0, 91.0, 89.5, 120.0], 1, 0.0);
        assert_eq!(launch_interval(&a, &b), None);
        assert!(launch_interval(&a, &run(&[90.0, 91.0], 2, 0.01)).is_some(), "one side's blocks share launches");
    }

    #[test]
    fn the_wider_interval_wins_on_each_side() {
        assert_eq!(wider((0.98, 1.01), Some((0.99, 1.03))), (0.98, 1.03));
        assert_eq!(wider((0.98, 1.01), None), (0.98, 1.01));
    }
}
