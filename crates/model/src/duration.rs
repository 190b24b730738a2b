//! Human durations in manifests, studies and flags: the load generator's syntax (`500ms`, `30s`,
//! `5m`, `1h`; a bare number is seconds), with the lab's error wording.

use std::time::Duration;

/// Reads a duration, or says what to write instead.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    bakeoff_load::parse_duration(s).map_err(|_| format!("`{s}` is not a duration; write e.g. 500ms, 10s or 5m"))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn units_and_errors() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("not a duration"));
    }
}
