//! Durations as people type them on a command line or in a ramp: `500ms`, `10s`, `2m`, `1.5s`.

use std::time::Duration;

use crate::error::PlanError;

/// Parses `500ms`, `10s`, `2m`, `1h`, `1.5s`, `250us`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, PlanError> {
    let t = s.trim();
    let err = || PlanError::BadDuration(s.to_string());
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| err())?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(err()),
    };
    if !secs.is_finite() || !(0.0..=1e7).contains(&secs) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["", "s", "ten", "10x", "-1s", "1e400"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
