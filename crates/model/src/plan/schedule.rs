//! How a run orders its measurements: the paired block schedule (servers of a scenario side by side,
//! short slices in a fresh random order per block), the same blocks with the cells loaded at once,
//! or one fresh server per trial.

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
    /// The block schedule, but each block loads the scenario's cells all at the same time, each
    /// from a load generator of its own, every server in a CPU group of equal share: a slow
    /// stretch of the machine then falls on all of them within the same second (duet
    /// benchmarking). What it measures is each server's rate on an equal share of the server
    /// CPUs beside the others, so its ratios are the ones to read, not the absolute rates.
    #[serde(rename = "at-once")]
    AtOnce,
    /// Each trial starts a fresh server per cell, warms it, measures it and stops it, cells in a
    /// fixed order per round.
    Trials,
}

impl Schedule {
    /// The name a study or `--schedule` takes.
    pub fn id(self) -> &'static str {
        match self {
            Schedule::Blocks => "blocks",
            Schedule::AtOnce => "at-once",
            Schedule::Trials => "trials",
        }
    }

    /// Whether cells are compared block by block (paired ratios), which both block schedules do.
    pub fn pairs_blocks(self) -> bool {
        matches!(self, Schedule::Blocks | Schedule::AtOnce)
    }
}

/// A slice long enough for a closed loop's connections lasts this many of their turns.
pub const TURNS_PER_SLICE: f64 = 2.0;

/// The factor over a slice of `base_s` a closed loop of `connections` answered `per_sec` needs
/// for its slices to last `TURNS_PER_SLICE` turns of its connections (a turn: the connections
/// over the rate, how long one waits for its next answer); 0 when that is unknown (no answer).
pub fn turns_factor(connections: u32, per_sec: f64, base_s: f64) -> u32 {
    match turn_seconds(connections, per_sec) {
        Some(turn_s) if base_s > 0.0 => (TURNS_PER_SLICE * turn_s / base_s).ceil() as u32,
        _ => 0,
    }
}

/// How long each of a closed loop's `connections` waits for its next answer at `per_sec`
/// answers a second; None when nothing was answered.
pub fn turn_seconds(connections: u32, per_sec: f64) -> Option<f64> {
    (per_sec > 0.0).then(|| f64::from(connections) / per_sec)
}

/// Why the block schedule lengthened a cell's slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lengthening {
    /// It varies more on its own than its scenario's peers (its values' spread within their
    /// launches), which longer slices average down.
    OwnSpread,
    /// Its slices ended with connections that had no response yet, or its connections' turns
    /// (as its warm-up measured them) were longer than half a slice, so a slice's rate would count
    /// the slice's edge rather than the server.
    StarvedConnections,
}

impl Lengthening {
    /// What the cell's shorter slices showed, as progress and reports say it.
    pub fn reason(self) -> &'static str {
        match self {
            Lengthening::OwnSpread => "varied more on its own than its peers",
            Lengthening::StarvedConnections => "its slices were too short to answer every connection",
        }
    }
}

/// Why the at-once schedule loads a cell in a slice of its own rather than with its peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InTurn {
    /// The load comes from client hosts, whose agents run one load at a time.
    ClientHosts,
    /// The servers run on a host of their own, whose CPU groups the lab does not set.
    ServerHost,
    /// No cgroup CPU controller gives each server an equal share here (it needs root and cgroup
    /// v1's `cpu` or v2's `cpu` controller): a server of more processes would take more.
    NoEqualShares,
    /// It uses a service its peers share (a database, an upstream nginx): loaded together they
    /// would contend for it, so its time is not its own.
    SharedService,
    /// It is the only cell of its scenario that could be loaded at once: it has no peer to share
    /// the block's slice with.
    NoPeer,
    /// Its connections wait so long for their turns that its own slices are longer than the
    /// run's: on a share of the server CPUs they would wait that many times longer, more than a
    /// joint slice lasts.
    LongTurns,
}

impl InTurn {
    /// Why, as progress and reports say it.
    pub fn reason(self) -> &'static str {
        match self {
            InTurn::ClientHosts => "the load comes from client hosts, which run one load at a time",
            InTurn::ServerHost => "the servers run on a host of their own, whose CPU shares the lab does not set",
            InTurn::NoEqualShares => "no cgroup CPU controller gives each server an equal share here (run as root)",
            InTurn::SharedService => "it uses a service its peers share, which loading them together would make them contend for",
            InTurn::NoPeer => "no other cell of its scenario can be loaded with it",
            InTurn::LongTurns => {
                "its connections wait so long for their turns that its slices are longer than the run's, and on a share of the server CPUs no joint slice would answer them"
            }
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
            "at-once" => Ok(Schedule::AtOnce),
            "trials" => Ok(Schedule::Trials),
            other => Err(format!(
                "unknown schedule `{other}`: write blocks (paired, the default), at-once (paired, the cells loaded together) or \
                 trials (a fresh server per trial)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_wrong_one_says_what_to_write() {
        for s in [Schedule::Blocks, Schedule::AtOnce, Schedule::Trials] {
            assert_eq!(s.id().parse::<Schedule>(), Ok(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.id());
        }
        assert!("paired".parse::<Schedule>().unwrap_err().contains("write blocks"));
        assert!(Schedule::AtOnce.pairs_blocks() && Schedule::Blocks.pairs_blocks() && !Schedule::Trials.pairs_blocks());
    }

    #[test]
    fn a_slow_servers_slices_last_two_turns_of_its_connections() {
        // 64 connections answered 30 times a second wait 2.13 s each for their turn: two turns
        // are 5 slices of 1 s, 3 of 2 s.
        assert_eq!(turns_factor(64, 30.0, 1.0), 5);
        assert_eq!(turns_factor(64, 30.0, 2.0), 3);
        // A fast server's turns are short: one slice holds many.
        assert_eq!(turns_factor(256, 200_000.0, 1.0), 1);
        assert_eq!(turns_factor(64, 0.0, 1.0), 0, "no answer: the rate says nothing");
    }
}
