//! A run read back whole from a store: what every report format reads, exactly as the lab handed
//! it over, so the reports depend on the model and not on how it is stored.

use crate::records::results::{CeilingRecord, RunInfo, TrialRecord, VerifyReport};
use crate::records::status::RunStatus;
use serde::{Deserialize, Serialize};

/// Everything stored about one run: what every report format reads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunData {
    /// The run's provenance and settings.
    pub run: RunInfo,
    /// `Running` when it never finished: the process was killed, or is still going.
    pub status: RunStatus,
    /// RFC 3339 UTC; None while `Running`.
    pub finished_at: Option<String>,
    /// In the order they were recorded.
    pub verifications: Vec<VerifyReport>,
    /// In the order they were recorded (the lab interleaves stacks, so this is measurement order).
    pub trials: Vec<TrialRecord>,
    /// Store ceilings measured for the run, in the order they were recorded (empty for runs made
    /// before schema version 2, or without products/document cells).
    #[serde(default)]
    pub ceilings: Vec<CeilingRecord>,
    /// What ran for each stack variant (empty for runs made before schema version 3).
    #[serde(default)]
    pub what_ran: Vec<crate::records::profile::WhatRan>,
}

impl RunData {
    /// False for a run whose process never called `finish_run`.
    pub fn is_finished(&self) -> bool {
        self.status.is_finished()
    }
}
