//! A study's soak: a few cells kept under load far longer than the study's other cells, so memory and
//! throughput over time can be judged (an article's "memory grows without a limit"). The soak cells
//! are measured beside the others, each trial `duration` long, in the first `trials` rounds.

use super::cells::{CellRef, WorkerCount};
use crate::duration::parse_duration;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The study file's `[soak]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Soak {
    /// How long each soak trial measures, e.g. "3m".
    pub duration: String,
    /// Trials per soak cell (a claim needs 2 or more to be decided).
    #[serde(default = "two")]
    pub trials: u32,
    /// The soak cells' worker count (the study's lowest when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkerCount>,
    /// The cells soaked: stack, variant and scenario each.
    pub cells: Vec<CellRef>,
}

fn two() -> u32 {
    2
}

/// The soak's trials never run shorter than this: a trend needs minutes (see `TREND_MIN_MINUTES`).
pub const SOAK_MIN: Duration = Duration::from_secs(60);

impl Soak {
    /// The measured length of each soak trial (checked by `problem`).
    pub fn length(&self) -> Duration {
        parse_duration(&self.duration).unwrap_or(SOAK_MIN)
    }

    /// What is wrong with the section beyond its syntax, with the fix.
    pub fn problem(&self) -> Option<(String, &'static str)> {
        match parse_duration(&self.duration) {
            Err(e) => return Some((format!("`soak.duration`: {e}"), "write e.g. duration = \"3m\"")),
            Ok(d) if d < SOAK_MIN => {
                return Some((format!("`soak.duration` is {}s, under a minute", d.as_secs()), "a soak needs minutes: write e.g. \"3m\""))
            }
            Ok(_) => {}
        }
        if self.trials == 0 || self.trials > 10 {
            return Some((format!("`soak.trials = {}` is out of range", self.trials), "use 2 to 10 (1 cannot decide a claim)"));
        }
        if self.cells.is_empty() {
            return Some((
                "`soak.cells` is empty".into(),
                "name the cells to soak, e.g. { stack = \"go/pocketbase\", variant = \"cgo\", scenario = \"products\" }",
            ));
        }
        if let Some(c) = self.cells.iter().find(|c| c.variant.is_none() || c.scenario.is_none() || c.workers.is_some() || c.step.is_some())
        {
            return Some((
                format!("soak cell `{}` must give its variant and scenario, and no workers or step", c.describe()),
                "write { stack = \"...\", variant = \"...\", scenario = \"...\" }; the soak's `workers` applies to all",
            ));
        }
        None
    }

    /// The worker count of the soak cells on a machine whose server has `server_cpus` CPUs, `lowest`
    /// being the study's lowest count there.
    pub fn workers(&self, server_cpus: u32, lowest: u32) -> u32 {
        self.workers.map_or(lowest, |w| w.resolve(server_cpus))
    }
}
