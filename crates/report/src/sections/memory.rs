//! Server memory over time: the RSS series of each cell and a least-squares slope in MiB/min, flagged
//! as growth when it is both steep and a good fit (a noisy flat line can have a steep but meaningless
//! slope over a short measurement; R² tells the two apart).

use bakeoff_model::records::results::{CellKey, TrialRecord};
use std::collections::BTreeMap;

use bakeoff_model::statistics::growth::{least_squares, Fit};

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
    bakeoff_model::statistics::growth::rss_points(&trial.samples)
}

/// A trial's slope (for picking the median one), the trial, its points and its fit.
type FittedTrial<'a> = (f64, &'a TrialRecord, Vec<(f64, f64)>, Option<Fit>);

/// One series per cell that has samples, in cell order.
pub fn memory_series(trials: &[TrialRecord]) -> Vec<MemorySeries> {
    let mut cells: BTreeMap<&CellKey, Vec<&TrialRecord>> = BTreeMap::new();
    for t in trials {
        cells.entry(&t.cell).or_default().push(t);
    }
    cells
        .into_iter()
        .filter_map(|(cell, ts)| {
            let mut fitted: Vec<FittedTrial> = ts
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
        assert!(f.r2 < bakeoff_model::statistics::growth::GROWTH_MIN_R2, "{f:?}");
        assert!(!f.is_growth(), "{f:?}");
    }
}
