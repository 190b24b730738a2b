//! Memory growth: a least-squares line through a memory series, flagged as growth when it is both
//! steep and a good fit (a noisy flat line can have a steep but meaningless slope over a short
//! measurement; R² tells the two apart). The lab's warnings and the reports both use this.

use crate::records::results::ProcessSample;

/// Growth is flagged above this slope...
pub const GROWTH_MIB_PER_MIN: f64 = 1.0;
/// ...when the line explains at least this share of the variance...
pub const GROWTH_MIN_R2: f64 = 0.5;
/// ...and the fitted line rises at least this much over the measurement (start-up allocation in a
/// five-second trial is a steep slope but not a leak).
pub const GROWTH_MIN_TOTAL_MIB: f64 = 2.0;

/// A fitted line y = intercept + slope * x.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Rise of y per unit of x (MiB per minute for memory series).
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Coefficient of determination; 0 when y does not vary at all.
    pub r2: f64,
    /// The x range the line was fitted over (minutes for memory series).
    pub span: f64,
}

impl Fit {
    /// Steep, a good fit, and a real rise over the span: the three thresholds above.
    pub fn is_growth(&self) -> bool {
        self.slope > GROWTH_MIB_PER_MIN && self.r2 > GROWTH_MIN_R2 && self.slope * self.span >= GROWTH_MIN_TOTAL_MIB
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// The RSS series of a trial's measured samples (`ProcessSample::is_measured`): MiB against minutes.
pub fn rss_points(samples: &[ProcessSample]) -> Vec<(f64, f64)> {
    samples.iter().filter(|s| s.is_measured()).map(|s| (s.t_ms as f64 / 60_000.0, s.rss_bytes as f64 / MIB)).collect()
}

/// The fitted RSS line of a trial's measured samples: what the lab warns about and the reports flag.
pub fn rss_fit(samples: &[ProcessSample]) -> Option<Fit> {
    least_squares(&rss_points(samples))
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
    let (lo, hi) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    Some(Fit { slope, intercept: my - slope * mx, r2, span: hi - lo })
}

/// A fitted slope with its 95% interval from the fit's standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlopeInterval {
    /// The least-squares slope.
    pub slope: f64,
    /// Lower end of its 95% interval.
    pub low: f64,
    /// Upper end of its 95% interval.
    pub high: f64,
    /// The x range fitted over (minutes for memory series).
    pub span: f64,
}

/// The least-squares slope and its 95% interval; None with fewer than 8 points (too few for the
/// interval to mean anything) or no spread in x.
pub fn slope_interval(points: &[(f64, f64)]) -> Option<SlopeInterval> {
    if points.len() < 8 {
        return None;
    }
    let fit = least_squares(points)?;
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let residual: f64 = points.iter().map(|p| (p.1 - fit.intercept - fit.slope * p.0).powi(2)).sum();
    let se = (residual / (n - 2.0) / sxx).sqrt();
    let t = crate::statistics::robust::t_975(n - 2.0);
    Some(SlopeInterval { slope: fit.slope, low: fit.slope - t * se, high: fit.slope + t * se, span: fit.span })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_leak_is_growth_and_a_noisy_flat_line_is_not() {
        let leak: Vec<(f64, f64)> = (0..40).map(|i| (i as f64 / 60.0, 50.0 + 0.2 * i as f64)).collect();
        assert!(least_squares(&leak).unwrap().is_growth());
        let flat: Vec<(f64, f64)> = (0..40).map(|i| (i as f64 / 60.0, 50.0 + if i % 2 == 0 { 0.5 } else { -0.5 })).collect();
        assert!(!least_squares(&flat).unwrap().is_growth());
        // Steep and clean but tiny: 1 MiB of start-up allocation within five seconds.
        let startup: Vec<(f64, f64)> = (0..20).map(|i| (i as f64 / 240.0, 50.0 + 0.05 * i as f64)).collect();
        assert!(!least_squares(&startup).unwrap().is_growth());
    }
}
