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

    /// The units are the load generator's (its own tests cover them); this wording is the model's.
    #[test]
    fn the_load_generators_syntax_with_the_models_wording() {
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("5 parsecs").unwrap_err(), "`5 parsecs` is not a duration; write e.g. 500ms, 10s or 5m");
    }
}
