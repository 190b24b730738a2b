//! A rate ramp as studies and flags give it: a ladder, or `auto`, parsed once.

use serde::{Deserialize, Serialize};

/// A rate ramp as a study or `--ramp` gives it: a ladder, or `auto` (the proxy study), which the
/// lab turns into a ladder from 40% to 100% of the baseline stack's closed-model maximum, measured
/// first. Parsed once; stored as the same text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum RampSetting {
    Auto,
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
