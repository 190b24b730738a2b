//! bakeoff's lab: scenarios and their fixtures, stack manifests, backing services, verification,
//! and the measured lifecycle of every cell. It drives the load generator in-process and hands its
//! results to a `ResultSink`; it knows nothing of how results are stored or shown.

pub mod results;
pub mod summary;
pub mod catalog;
pub mod ceiling;
pub mod cells;
pub mod duration;
pub mod error;
pub mod fixtures;
pub mod growth;
pub mod machine;
pub mod manifest;
pub mod process;
pub mod runner;
pub mod sampler;
pub mod scenario;
pub mod services;
pub mod setup;
pub mod study;
pub mod verify;

/// The current UTC time as RFC 3339 (seconds), without a date library.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_414), (2025, 11, 22));
    }
}
