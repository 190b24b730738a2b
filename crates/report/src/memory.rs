//! Server memory over time: the RSS series of each cell and a least-squares slope in MiB/min, flagged
//! as growth when it is both steep and a good fit (a noisy flat line can have a steep but meaningless
//! slope over a short measurement; R² tells the two apart).

use bakeoff_lab::results::{CellKey, TrialRecord};
use std::collections::BTreeMap;

/// Growth is flagged above this slope...
pub const GROWTH_MIB_PER_MIN: f64 = 1.0;
/// ...when the line explains at least this share of the variance.
pub const GROWTH_MIN_R2: f64 = 0.5;

const MIB: f64 = 1024.0 * 1024.0;

/// A fitted line y = intercept + slope * x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub slope: f64,
    pub intercept: f64,
    /// Coefficient of determination; 0 when y does not vary at all.
    pub r2: f64,
}

impl Fit {
    pub fn is_growth(&self) -> bool {
        self.slope > GROWTH_MIB_PER_MIN && self.r2 > GROWTH_MIN_R2
    }
}

/// Ordinary least squares; None with fewer than 3 points or no spread in x.
pub fn least_squares(points: &[(f64, f64)]) -> Option<Fit> {
    let n = points.len() as f64;
    if points.len() < 3 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 { 0.0 } else { (sxy * sxy) / (sxx * syy) };
    Some(Fit { slope, intercept: my - slope * mx, r2 })
}

/// The memory line of one cell: the trial whose slope is the median of the cell's trials, so one
/// odd trial neither hides nor invents growth.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySeries {
    pub cell: CellKey,
    pub trial: u32,
    /// (minutes since the measurement started, RSS MiB of the server tree); warm-up samples excluded.
    pub points: Vec<(f64, f64)>,
    pub fit: Option<Fit>,
}

impl MemorySeries {
    pub fn growing(&self) -> bool {
        self.fit.is_some_and(|f| f.is_growth())
    }
}

/// The measured samples of a trial as (minutes, MiB).
pub fn rss_points(trial: &TrialRecord) -> Vec<(f64, f64)> {
    trial.samples.iter().filter(|s| s.t_ms >= 0).map(|s| (s.t_ms as f64 / 60_000.0, s.rss_bytes as f64 / MIB)).collect()
}

/// One series per cell that has samples, in cell order.
pub fn memory_series(trials: &[TrialRecord]) -> Vec<MemorySeries> {
    let mut cells: BTreeMap<&CellKey, Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials {
        cells.entry(&t.cell).or_default().push(t);
    }
    cells
        .into_iter()
        .filter_map(|(cell, ts)| {
            let mut fitted: Vec<(f64, &TrialRecord, Vec<(f64, f64)>, Option<Fit>)> = ts
                .into_iter()
                .map(|t| {
                    let p = rss_points(t);
                    let fit = least_squares(&p);
                    (fit.map_or(f64::NEG_INFINITY, |f| f.slope), t, p, fit)
                })
                .filter(|(_, _, p, _)| !p.is_empty())
                .collect();
            if fitted.is_empty() {
                return None;
            }
            fitted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.trial.cmp(&b.1.trial)));
            let (_, t, points, fit) = fitted.swap_remove((fitted.len() - 1) / 2);
            Some(MemorySeries { cell: cell.clone(), trial: t.trial, points, fit })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [-1, 1).
    fn noise(i: u64) -> f64 {
        let x = i.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) >> 33;
        (x % 20_000) as f64 / 10_000.0 - 1.0
    }

    /// 30 s at 4 samples per second, in minutes.
    fn times() -> impl Iterator<Item = (u64, f64)> {
        (0..120u64).map(|i| (i, i as f64 * 0.25 / 60.0))
    }

    #[test]
    fn exact_line_is_recovered() {
        let f = least_squares(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12 && (f.r2 - 1.0).abs() < 1e-12);
        assert_eq!(least_squares(&[(0.0, 1.0), (0.0, 2.0), (0.0, 3.0)]), None);
        assert_eq!(least_squares(&[(0.0, 5.0), (1.0, 5.0), (2.0, 5.0)]).unwrap().r2, 0.0);
    }

    #[test]
    fn leaking_series_is_flagged() {
        // 8 MiB/min with ±0.5 MiB of noise: the seed-002 Go server in miniature.
        let p: Vec<_> = times().map(|(i, m)| (m, 50.0 + 8.0 * m + 0.5 * noise(i))).collect();
        let f = least_squares(&p).unwrap();
        assert!((f.slope - 8.0).abs() < 1.0, "{f:?}");
        assert!(f.is_growth(), "{f:?}");
    }

    #[test]
    fn flat_noisy_series_is_not_flagged() {
        // ±3 MiB of noise around 50 MiB: the slope can come out steep over 30 s, the fit is poor.
        let p: Vec<_> = times().map(|(i, m)| (m, 50.0 + 3.0 * noise(i))).collect();
        let f = least_squares(&p).unwrap();
        assert!(f.r2 < GROWTH_MIN_R2, "{f:?}");
        assert!(!f.is_growth(), "{f:?}");
    }
}
