//! Human durations in flags and manifests: `500ms`, `30s`, `5m`, `1h`; a bare number means seconds.

use std::time::Duration;

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("`{s}` is not a duration; write e.g. 500ms, 10s, 5m"))?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("`{s}` has an unknown unit `{unit}`; use ms, s, m or h")),
    };
    if !secs.is_finite() || secs < 0.0 || secs > 7.0 * 86400.0 {
        return Err(format!("`{s}` is out of range (0 to 7 days)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn units_and_errors() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("fast").unwrap_err().contains("not a duration"));
    }
}
