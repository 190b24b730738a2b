//! A run's status as the store keeps it. Text in the store and in JSON ("running", "complete",
//! "interrupted", "failed: REASON"), one enum everywhere else.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How a run ended, or that it has not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum RunStatus {
    /// From `begin_run` until `finish_run`; a run still showing it after its process is gone was
    /// killed.
    Running,
    /// The run reached its planned end.
    Complete,
    /// Stopped by Ctrl-C; every trial measured before is kept.
    Interrupted,
    /// Stopped by an error, with the reason.
    Failed(String),
}

impl RunStatus {
    /// False for a run whose process never called `finish_run`.
    pub fn is_finished(&self) -> bool {
        *self != RunStatus::Running
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunStatus::Running => f.write_str("running"),
            RunStatus::Complete => f.write_str("complete"),
            RunStatus::Interrupted => f.write_str("interrupted"),
            RunStatus::Failed(reason) => write!(f, "failed: {reason}"),
        }
    }
}

impl FromStr for RunStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "running" => Ok(RunStatus::Running),
            "complete" => Ok(RunStatus::Complete),
            "interrupted" => Ok(RunStatus::Interrupted),
            _ => match s.strip_prefix("failed: ") {
                Some(reason) => Ok(RunStatus::Failed(reason.to_string())),
                None => Err(format!("unknown run status `{s}`; known: running, complete, interrupted, failed: <reason>")),
            },
        }
    }
}

crate::serde_as_text!(RunStatus);

#[cfg(test)]
mod tests {
    use super::RunStatus;

    #[test]
    fn every_status_reads_back_from_its_text() {
        for s in [RunStatus::Running, RunStatus::Complete, RunStatus::Interrupted, RunStatus::Failed("no stacks".into())] {
            assert_eq!(s.to_string().parse::<RunStatus>().unwrap(), s);
            assert_eq!(serde_json::to_value(&s).unwrap(), s.to_string());
        }
        assert!("done".parse::<RunStatus>().unwrap_err().contains("unknown run status `done`"));
    }
}
