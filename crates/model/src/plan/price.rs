//! What a core costs, for the price of a request: `core-hour=0.04` (a study's `price`, `--price`),
//! the price of one core for one hour in the reader's own currency. A request's price is then its
//! server CPU time at that rate.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The price of one core for one hour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct CorePrice {
    /// Price units per core-hour.
    pub per_core_hour: f64,
}

crate::serde_as_text!(CorePrice);

impl CorePrice {
    /// The price of a million requests that each take `cpu_us` µs of server CPU.
    pub fn per_million(self, cpu_us: f64) -> f64 {
        // A million requests of c µs take c seconds of one core: c / 3600 core-hours.
        cpu_us / 3600.0 * self.per_core_hour
    }
}

impl fmt::Display for CorePrice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core-hour={}", self.per_core_hour)
    }
}

impl FromStr for CorePrice {
    type Err = String;

    fn from_str(s: &str) -> Result<CorePrice, String> {
        let bad = || format!("price `{s}`: expected core-hour=PRICE, e.g. core-hour=0.04");
        let (unit, value) = s.split_once('=').ok_or_else(bad)?;
        if unit.trim() != "core-hour" {
            return Err(bad());
        }
        let per_core_hour: f64 = value.trim().parse().map_err(|_| bad())?;
        if !(per_core_hour.is_finite() && per_core_hour > 0.0) {
            return Err(format!("price `{s}`: the price of a core-hour must be above 0"));
        }
        Ok(CorePrice { per_core_hour })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_hour_prices_a_million_requests_by_their_cpu() {
        let p: CorePrice = "core-hour=0.04".parse().unwrap();
        // A million requests of 36 µs: 36 core-seconds, a hundredth of a core-hour.
        assert!((p.per_million(36.0) - 0.0004).abs() < 1e-12);
        assert_eq!(p.to_string().parse::<CorePrice>(), Ok(p));
        for bad in ["0.04", "hour=0.04", "core-hour=", "core-hour=-1", "core-hour=x"] {
            assert!(bad.parse::<CorePrice>().is_err(), "{bad}");
        }
    }
}
