//! How a run orders its measurements: the paired block schedule (servers of a scenario side by side,
//! short slices in a fresh random order per block) or one fresh server per trial.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The measurement schedule of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Every cell of a scenario runs co-resident and warm; each block measures every cell once
    /// for one slice, in a fresh random order, so a slow stretch of the machine hits all alike;
    /// the servers are relaunched a few times per run so start-to-start variation is sampled.
    #[default]
    Blocks,
    /// Each trial starts a fresh server per cell, warms it, measures it and stops it, cells in a
    /// fixed order per round.
    Trials,
}

impl Schedule {
    /// The name a study or `--schedule` takes.
    pub fn id(self) -> &'static str {
        match self {
            Schedule::Blocks => "blocks",
            Schedule::Trials => "trials",
        }
    }
}

/// Why the block schedule lengthened a cell's slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lengthening {
    /// It varies more on its own than its scenario's peers (its values' spread within their
    /// launches), which longer slices average down.
    OwnSpread,
    /// Its slices ended with connections that had no response yet, so their rate counted the
    /// slice's edge rather than the server.
    StarvedConnections,
}

impl Lengthening {
    /// What the cell's shorter slices showed, as progress and reports say it.
    pub fn reason(self) -> &'static str {
        match self {
            Lengthening::OwnSpread => "varied more on its own than its peers",
            Lengthening::StarvedConnections => "its slices ended with connections still unanswered",
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "blocks" => Ok(Schedule::Blocks),
            "trials" => Ok(Schedule::Trials),
            other => Err(format!("unknown schedule `{other}`: write blocks (paired, the default) or trials (a fresh server per trial)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_wrong_one_says_what_to_write() {
        for s in [Schedule::Blocks, Schedule::Trials] {
            assert_eq!(s.id().parse::<Schedule>(), Ok(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.id());
        }
        assert!("paired".parse::<Schedule>().unwrap_err().contains("write blocks"));
    }
}
