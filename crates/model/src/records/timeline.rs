//! A trial over time: requests/s per second of its measurement (from the load generator's timeline)
//! beside the server's RSS, and how the late part of a long trial compares with its early part (a
//! soak's throughput trend). The judge of claims and every report format read these.

use crate::records::results::TrialRecord;

/// The share of a trial at each end that `late_over_early` compares.
pub const TREND_WINDOW: f64 = 0.25;

/// Requests/s against minutes since the measurement started, one point per whole second of the last
/// step (a soak has one step; a ramp's last step is its top). A last second the measurement ended in
/// is left out: its count covers only part of a second and would read as a drop.
pub fn rps_points(trial: &TrialRecord) -> Vec<(f64, f64)> {
    let Some(step) = trial.load.steps.last() else { return vec![] };
    let whole = step.timeline.iter().filter(|p| f64::from(p.second) + 1.0 <= step.duration_s + 1e-6);
    whole.map(|p| (f64::from(p.second) / 60.0, p.requests as f64)).collect()
}

/// The last `TREND_WINDOW` of `points` over the first, as the Hodges-Lehmann ratio of their
/// per-second values with its Mann-Whitney 95% interval (nominal: neighbouring seconds correlate):
/// below 1 when the series declined. One is added to every count so that a second without a
/// response still counts (a shift of under 0.1% at the hundreds of requests/s a soak serves).
/// None with fewer than 8 points.
pub fn late_over_early(points: &[(f64, f64)]) -> Option<crate::statistics::robust::CoveredRatio> {
    if points.len() < 8 {
        return None;
    }
    let n = ((points.len() as f64 * TREND_WINDOW).floor() as usize).max(1);
    let counts = |w: &[(f64, f64)]| w.iter().map(|p| p.1 + 1.0).collect::<Vec<f64>>();
    crate::statistics::robust::covered_ratio(
        &counts(&points[..n]),
        &counts(&points[points.len() - n..]),
        crate::statistics::robust::CONFIDENCE,
    )
}

/// The span of a series in its x unit (minutes here).
pub fn span(points: &[(f64, f64)]) -> f64 {
    match (points.first(), points.last()) {
        (Some(a), Some(b)) => b.0 - a.0,
        _ => 0.0,
    }
}

/// Rows of a trial over time for a text table: at `rows` evenly spaced moments, the minute, the RSS
/// (MiB, the nearest sample) and requests/s (mean of the seconds since the previous row).
pub fn over_time_rows(trial: &TrialRecord, rows: usize) -> Vec<(f64, Option<f64>, Option<f64>)> {
    let rss = crate::statistics::growth::rss_points(&trial.samples);
    let rps = rps_points(trial);
    let end = span(&rps).max(span(&rss));
    if end <= 0.0 || rows == 0 {
        return vec![];
    }
    let nearest = |t: f64| rss.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs())).map(|p| p.1);
    (1..=rows)
        .map(|i| {
            let (from, to) = (end * (i - 1) as f64 / rows as f64, end * i as f64 / rows as f64);
            let window: Vec<f64> = rps.iter().filter(|p| p.0 >= from && (p.0 < to || i == rows)).map(|p| p.1).collect();
            let mean = (!window.is_empty()).then(|| window.iter().sum::<f64>() / window.len() as f64);
            (to, nearest(to), mean)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_over_early_compares_the_quarters_at_each_end() {
        let falling: Vec<(f64, f64)> = (0..120).map(|i| (i as f64 / 60.0, 1000.0 - 5.0 * i as f64)).collect();
        let r = late_over_early(&falling).unwrap();
        // First 30 seconds 1000 down to 855, last 30 550 down to 405: about 0.515, surely below 0.6.
        assert!((r.ratio - 478.5 / 928.5).abs() < 0.01 && r.high < 0.6 && r.confidence >= 0.95, "{r:?}");
        let flat: Vec<(f64, f64)> = (0..120).map(|i| (i as f64 / 60.0, 500.0)).collect();
        let r = late_over_early(&flat).unwrap();
        assert_eq!((r.ratio, r.low, r.high), (1.0, 1.0, 1.0));
        assert!(late_over_early(&flat[..5]).is_none(), "too short to say");
        let stalled: Vec<(f64, f64)> = (0..120).map(|i| (i as f64 / 60.0, if i < 90 { 500.0 } else { 0.0 })).collect();
        assert!(late_over_early(&stalled).unwrap().high < 0.01, "a server that stopped answering declined");
        assert_eq!(span(&flat), 119.0 / 60.0);
    }
}
