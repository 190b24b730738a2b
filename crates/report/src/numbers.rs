//! How numbers are written in human-facing formats (text, Markdown, HTML): one place, so the same
//! value reads the same everywhere. CSV and JSON write raw numbers instead.

use bakeoff_model::statistics::summary::{Estimate, Metric};

/// A latency in microseconds with a unit that keeps 3 significant digits: "812 µs", "1.23 ms", "2.50 s".
pub fn latency(us: f64) -> String {
    if !us.is_finite() {
        return "–".into();
    }
    let (per, unit) = latency_unit(us);
    format!("{} {unit}", sig3(us / per))
}

/// The unit a latency reads in: microseconds per unit, and its name.
fn latency_unit(us: f64) -> (f64, &'static str) {
    if us < 1_000.0 {
        (1.0, "µs")
    } else if us < 1_000_000.0 {
        (1_000.0, "ms")
    } else {
        (1_000_000.0, "s")
    }
}

/// A latency's median with its interval's ends in the median's unit, which need not be symmetric
/// (a tail over launches rarely is): "3.54 ms (2.90–4.10)"; the median alone without an interval.
/// The interval's coverage is the table's to state, once.
pub fn latency_range(e: &Estimate) -> String {
    if !e.median.is_finite() || e.trials < 2 {
        return latency(e.median);
    }
    let (per, unit) = latency_unit(e.median);
    format!("{} {unit} ({}–{})", sig3(e.median / per), sig3(e.ci_low / per), sig3(e.ci_high / per))
}

/// 3 significant digits, no exponent.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Three significant digits however small: a price of a million requests is often a fraction of a
/// cent ("0.0000990").
pub fn significant(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return format!("{v}");
    }
    let decimals = (2 - v.log10().floor() as i32).max(0) as usize;
    format!("{v:.decimals$}")
}

/// An integer-ish count with thousands separators: 128,748.
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A metric's median in its natural unit.
pub fn metric_value(m: Metric, v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    match m {
        Metric::P50Us
        | Metric::P90Us
        | Metric::P99Us
        | Metric::P999Us
        | Metric::P9999Us
        | Metric::MaxUs
        | Metric::MeanUs
        | Metric::Tm999Us
        | Metric::StddevUs => latency(v),
        Metric::RequestsPerSec => grouped(v),
        Metric::ErrorPercent => format!("{v:.2}%"),
        Metric::ServerCpuPercent | Metric::ClientCpuPercent => format!("{v:.0}%"),
        Metric::OtherCpuServerPercent | Metric::OtherCpuClientPercent | Metric::StealPercent => format!("{v:.1}%"),
        _ => sig3(v),
    }
}

/// The half-width of the interval as a percentage of the median: "±1.2%" for a 95% interval,
/// "±1.2% (75%)" when too few trials allow only a lower coverage; "(1 trial)" when there is none.
pub fn interval(e: &Estimate) -> String {
    if e.trials < 2 {
        "(1 trial)".into()
    } else if !e.ci_low.is_finite() || !e.ci_high.is_finite() {
        "".into()
    } else if e.confidence < bakeoff_model::statistics::robust::CONFIDENCE {
        format!("±{:.1}% ({:.0}%)", e.relative_half_width() * 100.0, e.confidence * 100.0)
    } else {
        format!("±{:.1}%", e.relative_half_width() * 100.0)
    }
}

/// "128,748 ±1.2%"
pub fn estimate(m: Metric, e: &Estimate) -> String {
    let i = interval(e);
    if i.is_empty() {
        metric_value(m, e.median)
    } else {
        format!("{} {}", metric_value(m, e.median), i)
    }
}

pub fn mib(bytes: u64) -> String {
    format!("{} MiB", sig3(bytes as f64 / (1024.0 * 1024.0)))
}

/// A step's name in a table: its target rate for an open-model step, else its label.
pub(crate) fn step_name(c: &bakeoff_model::statistics::summary::CellSummary) -> String {
    match c.target_rate {
        Some(r) => format!("{} req/s", grouped(r)),
        None => c.step_label.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_keep_three_digits() {
        assert_eq!(latency(812.4), "812 µs");
        assert_eq!(latency(1234.0), "1.23 ms");
        assert_eq!(latency(45_600.0), "45.6 ms");
        assert_eq!(latency(2_500_000.0), "2.50 s");
        assert_eq!(latency(f64::NAN), "–");
    }

    #[test]
    fn small_figures_keep_three_significant_digits() {
        assert_eq!((significant(0.000099), significant(0.5), significant(123.4)), ("0.0000990".into(), "0.500".into(), "123".into()));
    }

    #[test]
    fn a_latency_range_keeps_the_medians_unit() {
        let e = |median, ci_low, ci_high, trials, confidence| Estimate { median, ci_low, ci_high, trials, confidence };
        assert_eq!(latency_range(&e(3540.0, 2900.0, 130_000.0, 6, 0.969)), "3.54 ms (2.90–130)");
        assert_eq!(latency_range(&e(812.0, 700.0, 1500.0, 3, 0.75)), "812 µs (700–1500)");
        assert_eq!(latency_range(&e(812.0, 812.0, 812.0, 1, 0.0)), "812 µs");
        assert_eq!(latency_range(&Estimate::NONE), "–");
    }

    #[test]
    fn counts_are_grouped() {
        assert_eq!(grouped(128747.6), "128,748");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(-1000.0), "-1,000");
    }
}
