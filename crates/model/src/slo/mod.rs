//! A latency objective (`p99<=10ms`, errors below 0.1%) and SLO capacity: the highest open-model
//! rate whose corrected latency (counted from each request's scheduled send time) meets it, found by
//! a bounded search (`search`) and summarised per cell over trials (`summary`); and latency under
//! load, at fixed fractions of the capacity a launch measured (`under_load`), summarised over
//! launches with intervals and the knee's range (`curve`).

mod curve;
mod search;
mod summary;
mod under_load;

pub use curve::{knee, knee_range, summarize_curves, CellCurve, CurvePoint, KneeRange, KNEE_FACTOR};
pub use search::{search, SearchBudget, SloSearch, SloStep, StepMiss, FIRST_FRACTION};
pub use summary::{summarize_slo, CellSlo};
pub use under_load::{LoadCurve, LoadPoint, UnderLoad, UnderLoadOption, MAX_FRACTION};

use crate::records::metric::Metric;
use bakeoff_load::LatencyStats;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The share of failed requests an objective tolerates unless told otherwise: below 0.1%.
pub const DEFAULT_MAX_ERROR_RATE: f64 = 0.001;

/// The percentiles an objective can bound: each is resolved by the HDR histograms of a short step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Percentile {
    /// The median.
    #[serde(rename = "p50")]
    P50,
    /// The 90th percentile.
    #[serde(rename = "p90")]
    P90,
    /// The 99th percentile.
    #[serde(rename = "p99")]
    P99,
    /// The 99.9th percentile.
    #[serde(rename = "p99.9")]
    P999,
}

impl Percentile {
    /// Every percentile an objective can bound.
    pub const ALL: [Percentile; 4] = [Percentile::P50, Percentile::P90, Percentile::P99, Percentile::P999];

    /// As written in an objective and printed: `p99.9`.
    pub fn id(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P99 => "p99",
            Percentile::P999 => "p99.9",
        }
    }

    /// The cell metric of this percentile.
    pub fn metric(self) -> Metric {
        match self {
            Percentile::P50 => Metric::P50Us,
            Percentile::P90 => Metric::P90Us,
            Percentile::P99 => Metric::P99Us,
            Percentile::P999 => Metric::P999Us,
        }
    }

    /// This percentile of a step's latency, µs.
    pub fn of(self, l: &LatencyStats) -> f64 {
        match self {
            Percentile::P50 => l.p50_us,
            Percentile::P90 => l.p90_us,
            Percentile::P99 => l.p99_us,
            Percentile::P999 => l.p999_us,
        }
    }
}

/// A service-level objective: `percentile` of corrected latency at most `limit`, and fewer than
/// `max_error_rate` of the attempts failed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// The percentile bounded.
    pub percentile: Percentile,
    /// Its upper bound, included.
    #[serde(rename = "limit_us", with = "micros")]
    pub limit: Duration,
    /// A fraction: 0.001 = 0.1%.
    pub max_error_rate: f64,
}

impl Slo {
    /// The limit in microseconds, the unit of the load report's latencies.
    pub fn limit_us(&self) -> f64 {
        self.limit.as_secs_f64() * 1e6
    }
}

/// Written as parsed: `p99<=10ms`, `p99.9<=500us`, `p50<=1s`; the unit that shows the limit whole.
impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = self.limit.as_micros();
        let limit = if us.is_multiple_of(1_000_000) {
            format!("{}s", us / 1_000_000)
        } else if us.is_multiple_of(1_000) {
            format!("{}ms", us / 1_000)
        } else {
            format!("{us}us")
        };
        write!(f, "{}<={limit}", self.percentile.id())?;
        if self.max_error_rate != DEFAULT_MAX_ERROR_RATE {
            write!(f, ", errors<{}%", 100.0 * self.max_error_rate)?;
        }
        Ok(())
    }
}

/// Why an objective did not parse; each says what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub enum SloParseError {
    /// Not `PERCENTILE<=LIMIT`.
    Shape(String),
    /// Written with `<` instead of `<=`.
    Strict(String),
    /// A percentile that cannot be bounded.
    Percentile(String),
    /// A limit that is not a positive duration.
    Limit(String),
}

impl SloParseError {
    /// What is wrong with the text.
    pub fn problem(&self) -> String {
        match self {
            SloParseError::Shape(s) => format!("`{s}` is not an objective"),
            SloParseError::Strict(s) => format!("`{s}`: an objective is an upper bound that includes its limit"),
            SloParseError::Percentile(s) => format!("`{s}` is not a percentile an objective can bound"),
            SloParseError::Limit(s) => format!("`{s}` is not a latency limit"),
        }
    }

    /// What to write instead.
    pub fn hint(&self) -> &'static str {
        match self {
            SloParseError::Shape(_) => "write PERCENTILE<=LIMIT, e.g. p99<=10ms",
            SloParseError::Strict(_) => "write it with `<=`, e.g. p99<=10ms",
            SloParseError::Percentile(_) => "use p50, p90, p99 or p99.9, e.g. p99<=10ms",
            SloParseError::Limit(_) => "give a positive number with a unit: 10ms, 500us (or 500µs), 1s",
        }
    }
}

impl fmt::Display for SloParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n  hint: {}", self.problem(), self.hint())
    }
}

impl std::error::Error for SloParseError {}

impl FromStr for Slo {
    type Err = SloParseError;
    fn from_str(s: &str) -> Result<Slo, SloParseError> {
        let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let Some((left, right)) = compact.split_once("<=") else {
            return Err(if compact.contains('<') { SloParseError::Strict(s.into()) } else { SloParseError::Shape(s.into()) });
        };
        let percentile = Percentile::ALL.into_iter().find(|p| p.id() == left).ok_or_else(|| SloParseError::Percentile(left.to_string()))?;
        let limit = parse_limit(right).ok_or_else(|| SloParseError::Limit(right.to_string()))?;
        Ok(Slo { percentile, limit, max_error_rate: DEFAULT_MAX_ERROR_RATE })
    }
}

/// `10ms`, `500us`, `500µs`, `1.5s`: a bare number has no unit and is refused (10 what?).
fn parse_limit(s: &str) -> Option<Duration> {
    let (number, scale) =
        [("ms", 1e3), ("us", 1.0), ("µs", 1.0), ("s", 1e6)].iter().find_map(|&(unit, scale)| s.strip_suffix(unit).map(|n| (n, scale)))?;
    let v: f64 = number.parse().ok()?;
    let us = v * scale;
    (us.is_finite() && us >= 1.0).then(|| Duration::from_micros(us.round() as u64))
}

/// A limit stored as microseconds, e.g. `"limit_us": 10000`.
mod micros {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_micros() as u64)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_micros(u64::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_in_every_unit_and_print_as_written() {
        let s: Slo = "p99<=10ms".parse().unwrap();
        assert_eq!((s.percentile, s.limit, s.max_error_rate), (Percentile::P99, Duration::from_millis(10), 0.001));
        assert_eq!(s.to_string(), "p99<=10ms");
        assert_eq!(" p99.9 <= 500µs ".parse::<Slo>().unwrap().to_string(), "p99.9<=500us");
        assert_eq!("p50<=1s".parse::<Slo>().unwrap().limit, Duration::from_secs(1));
        assert_eq!("p90<=1.5ms".parse::<Slo>().unwrap().limit, Duration::from_micros(1500));
        let back: Slo = serde_json::from_value(serde_json::to_value(s).unwrap()).unwrap();
        assert_eq!(back, s);
        assert_eq!(serde_json::to_value(s).unwrap()["limit_us"], 10_000);
    }

    #[test]
    fn bad_objectives_say_what_to_write() {
        let err = |s: &str| s.parse::<Slo>().unwrap_err();
        assert_eq!(err("p99<10"), SloParseError::Strict("p99<10".into()));
        assert!(err("p99<10").to_string().contains("hint: write it with `<=`"));
        assert_eq!(err("p101<=1ms"), SloParseError::Percentile("p101".into()));
        assert!(err("p101<=1ms").to_string().contains("use p50, p90, p99 or p99.9"));
        assert_eq!(err("p99<=10"), SloParseError::Limit("10".into()), "a limit needs its unit");
        assert_eq!(err("p99<=0ms"), SloParseError::Limit("0ms".into()));
        assert_eq!(err("fast"), SloParseError::Shape("fast".into()));
    }
}
