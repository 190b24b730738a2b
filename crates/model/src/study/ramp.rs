//! A rate ramp as studies and flags give it: a ladder, or `auto`, parsed once; and how `auto` becomes
//! one ladder per cell from the cells' own measured maxima.

use serde::{Deserialize, Serialize};

/// A rate ramp as a study or `--ramp` gives it: a ladder, or `auto` (the proxy study), which the
/// lab turns into one ladder per cell from the cells' closed-model maxima, measured first (see
/// `auto_ladders`). Parsed once; stored as the same text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum RampSetting {
    /// One ladder per cell, from its own closed-model maximum.
    Auto,
    /// The same ladder for every cell.
    Ladder(bakeoff_load::Ramp),
}

impl std::fmt::Display for RampSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RampSetting::Auto => f.write_str("auto"),
            RampSetting::Ladder(r) => r.fmt(f),
        }
    }
}

impl std::str::FromStr for RampSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim() == "auto" {
            return Ok(RampSetting::Auto);
        }
        bakeoff_load::Ramp::parse(s)
            .map(RampSetting::Ladder)
            .map_err(|_| format!("`{s}` is not a ramp; write START:STEP:STEP_DURATION:MAX[:HOLD] (e.g. 1000:1000:5s:10000) or auto"))
    }
}

crate::serde_as_text!(RampSetting);

/// A cell's ladder reaches at most this share of its own closed-model maximum: at the maximum
/// itself an open-model rate is not sustained and the latencies measure a queue.
pub const SUSTAINED_SHARE: f64 = 0.9;
/// The fastest compared cell's ladder has this many steps.
pub const AUTO_STEPS: u32 = 6;

/// One ladder per cell for `ramp = "auto"`: every ladder starts at the same rate and climbs by the
/// same step, so all cells meet at common rates, and each climbs up to `SUSTAINED_SHARE` of its own
/// maximum (at least one step); the step is the fastest compared cell's top over `AUTO_STEPS`. The
/// reference cell (a proxy study's baseline) climbs as high as the fastest compared cell, so every
/// rate any cell runs has a reference beside it. Rates are whole requests per second.
pub fn auto_ladders<K: Clone>(
    maxima: &[(K, f64)],
    is_reference: impl Fn(&K) -> bool,
    step_duration: std::time::Duration,
) -> Vec<(K, bakeoff_load::Ramp)> {
    let compared: Vec<f64> = maxima.iter().filter(|(k, _)| !is_reference(k)).map(|(_, m)| *m).collect();
    // With nothing but the reference, it is its own fastest.
    let all: Vec<f64> = maxima.iter().map(|(_, m)| *m).collect();
    let fastest = if compared.is_empty() { &all } else { &compared }.iter().copied().fold(0.0, f64::max);
    let step = (SUSTAINED_SHARE * fastest / f64::from(AUTO_STEPS)).floor().max(1.0);
    let top_of = |max: f64| ((SUSTAINED_SHARE * max / step).floor().max(1.0)) * step;
    let highest = maxima.iter().filter(|(k, _)| !is_reference(k)).map(|(_, m)| top_of(*m)).fold(step, f64::max);
    maxima
        .iter()
        .map(|(k, m)| {
            let top = if is_reference(k) { highest } else { top_of(*m) };
            (k.clone(), bakeoff_load::Ramp { start: step, step, step_duration, max: top, hold: None })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn auto_ladders_meet_at_common_rates_and_each_climbs_to_its_own_sustained_rate() {
        let maxima = [("nginx", 50_000.0), ("haproxy", 28_600.0), ("python", 12_500.0), ("rust", 14_853.0)];
        let ladders = auto_ladders(&maxima, |k| *k == "nginx", Duration::from_secs(4));
        let get = |name: &str| ladders.iter().find(|(k, _)| *k == name).unwrap().1.clone();
        // 90% of HAProxy's 28,600 over 6 steps: a step of 4,290.
        assert_eq!(get("haproxy").step, 4290.0);
        assert!(ladders.iter().all(|(_, r)| r.start == 4290.0 && r.step == 4290.0), "every ladder shares its rates");
        assert_eq!(get("haproxy").max, 6.0 * 4290.0);
        // Python sustains 90% of 12,500 = 11,250: two steps.
        assert_eq!(get("python").max, 2.0 * 4290.0);
        assert_eq!(get("rust").max, 3.0 * 4290.0);
        // The baseline goes as high as the fastest proxy, not to its own maximum.
        assert_eq!(get("nginx").max, 6.0 * 4290.0);
        // A cell slower than one step still gets the first, common, rate.
        let slow = auto_ladders(&[("a", 60_000.0), ("b", 1_000.0)], |_| false, Duration::from_secs(1));
        assert_eq!(slow[1].1.max, slow[1].1.start);
    }
}
