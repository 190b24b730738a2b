//! What a run reports as it goes: one event per step of the lifecycle, for a front end to show.

use crate::error::LabError;
use bakeoff_model::results::{CellKey, RunInfo, StoreKind, TrialRecord, VerifyReport};
use std::path::Path;

/// What a run reports as it goes.
pub enum Event<'a> {
    /// A stack's setup finished (cached, done or failed).
    SetupFinished {
        stack: &'a str,
        outcome: &'a Result<crate::stacks::setup::SetupOutcome, LabError>,
    },
    RunStarting {
        run: &'a RunInfo,
        cells: usize,
        trials: u32,
        scratch: &'a Path,
    },
    /// The scratch folder (fixtures, server logs) is kept: something failed, or it was asked for.
    ScratchKept(&'a Path),
    ServiceStarting(&'a str),
    /// A cell's ladder for `--ramp auto`, from its closed-model maximum measured first.
    RampCalibrated {
        cell: &'a CellKey,
        ramp: &'a bakeoff_load::Ramp,
        max: f64,
    },
    CeilingMeasured(&'a bakeoff_model::results::CeilingRecord),
    CeilingFailed {
        store: StoreKind,
        error: String,
    },
    Verified(&'a VerifyReport),
    TrialStarting {
        cell: &'a CellKey,
        trial: u32,
        trials: u32,
    },
    TrialDone(&'a TrialRecord),
    /// The CPU-cost pairs run again on the warm server after a cell's first trial; a failed one is
    /// also the trial's `cost_after_load` warning.
    CostRechecked {
        cell: &'a CellKey,
        checks: &'a [bakeoff_model::results::Check],
    },
    /// Another round for the cells whose interval is still wider than the precision target.
    PrecisionRound {
        round: u32,
        cells: usize,
    },
    /// The budget would be overrun by another round; `pending` cells missed the target.
    BudgetSpent {
        pending: usize,
    },
    CellFailed {
        cell: &'a CellKey,
        error: String,
    },
    /// The server answered but its process tree was still busy when its ready timeout ran out
    /// (`cores`: CPU use over the last quarter second); the warm-up starts anyway.
    StillBusyAfterStart {
        stack: &'a str,
        cores: f64,
    },
}
