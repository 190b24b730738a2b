//! RFC 3339 UTC timestamps from the system clock (humantime formats them; seconds are enough for
//! provenance and keep stored runs comparable as text).

use std::time::SystemTime;

/// Now as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_rfc3339() -> String {
    format_at(SystemTime::now())
}

fn format_at(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn formats_known_instants() {
        let at = |s: u64| super::format_at(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_700_000_000), "2023-11-14T22:13:20Z");
    }
}
