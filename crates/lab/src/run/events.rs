//! What a run reports as it goes: one event per step of the lifecycle, for a front end to show.

use crate::error::LabError;
use bakeoff_model::plan::schedule::Lengthening;
use bakeoff_model::records::results::{CellKey, RunInfo, StoreKind, TrialRecord, VerifyReport};
use std::path::Path;

/// What a run reports as it goes.
pub enum Event<'a> {
    /// A stack's setup finished (cached, done or failed).
    SetupFinished {
        /// The stack set up.
        stack: &'a str,
        /// Cached, done (with how long it took) or the error that stopped it.
        outcome: &'a Result<crate::stacks::setup::SetupOutcome, LabError>,
    },
    /// Where a stack's setup is while it runs: its phase, or a line its build printed.
    SetupProgress {
        /// The stack being set up.
        stack: &'a str,
        /// The phase it entered, or the line its command printed.
        progress: crate::stacks::setup::SetupProgress<'a>,
    },
    /// The machine's noise floor, measured now (`reused`: a recent `bakeoff doctor`'s), before a
    /// run with a precision target.
    NoiseFloor {
        /// The floor.
        floor: &'a crate::run::schedule::noise_probe::NoiseFloor,
        /// It was measured earlier (within hours) and kept, not measured for this run.
        reused: bool,
    },
    /// The noise floor's A/A measurement is starting; it takes about `expected`.
    NoiseProbeStarting {
        /// How long it usually takes.
        expected: std::time::Duration,
        /// Where it measures when the run places its roles on hosts (None: this machine).
        site: Option<String>,
    },
    /// The noise floor could not be measured; the run goes on without an outlook.
    NoiseProbeSkipped(String),
    /// What the run's precision target needs on this machine, and what its budget reaches.
    PrecisionOutlook(&'a crate::run::schedule::noise_probe::Outlook),
    /// The run's measurements are planned: how many trials (slices) in all, and how long the run is
    /// estimated to take from here (verification included), before precision rounds.
    Planned {
        /// Trials of every cell, soak cells' own included.
        trials: usize,
        /// The estimate of the whole run from its plan.
        estimate: std::time::Duration,
        /// The plan's time for all those trials, the sum of their `weight`s (`TrialStarting`).
        work: std::time::Duration,
    },
    /// The run is about to measure: its cells are planned and its scratch folder exists.
    RunStarting {
        /// The run's provenance (id, commit, machine, settings).
        run: &'a RunInfo,
        /// How many cells it measures.
        cells: usize,
        /// Trials per cell as the settings ask (soak cells have their own; precision rounds may add more).
        trials: u32,
        /// The scratch folder: fixtures, server and service logs.
        scratch: &'a Path,
    },
    /// The scratch folder (fixtures, server logs) is kept: something failed, or it was asked for.
    ScratchKept(&'a Path),
    /// A backing service is starting (its id, e.g. `postgres`).
    ServiceStarting(&'a str),
    /// A cell's ladder for `--ramp auto`, from its closed-model maximum measured first.
    RampCalibrated {
        /// The cell calibrated.
        cell: &'a CellKey,
        /// The ladder of target rates its trials will step through.
        ramp: &'a bakeoff_load::Ramp,
        /// Its closed-model maximum in requests/s.
        max: f64,
    },
    /// A store's ceiling (its own throughput for a scenario's query from a native client) was measured
    /// and saved.
    CeilingMeasured(&'a bakeoff_model::records::results::CeilingRecord),
    /// A store's ceiling could not be measured; the run goes on without it.
    CeilingFailed {
        /// The store.
        store: StoreKind,
        /// Why it could not be measured.
        error: String,
    },
    /// A stack variant's verification report, saved before any cell is measured.
    Verified(&'a VerifyReport),
    /// A trial of a cell is starting.
    TrialStarting {
        /// The cell.
        cell: &'a CellKey,
        /// Its number, from 1 (a precision round's number is the trial's).
        trial: u32,
        /// The trials the settings ask for, or this one's number once precision rounds add more.
        trials: u32,
        /// The plan's time for this trial, its share of its launch's start and warm-up included: a
        /// 90 s soak weighs 90 times a 1 s slice, so what is left is weighed by it, not counted.
        weight: std::time::Duration,
    },
    /// A trial was measured and saved.
    TrialDone(&'a TrialRecord),
    /// The CPU-cost pairs run again on the warm server after a cell's first trial; a failed one is
    /// also the trial's `cost_after_load` warning.
    CostRechecked {
        /// The cell whose server was checked again.
        cell: &'a CellKey,
        /// The pairs' checks.
        checks: &'a [bakeoff_model::records::results::Check],
    },
    /// Another round for the cells whose interval is still wider than the precision target.
    PrecisionRound {
        /// The round's number (it is the number of the trial each cell gets).
        round: u32,
        /// How many cells the round measures.
        cells: usize,
        /// The trials it adds (under the block schedule a launch of a few blocks per cell).
        trials: usize,
        /// The plan's time for them, the sum of their weights.
        work: std::time::Duration,
    },
    /// A cell's slices are too short for it: from its next launch on they are `factor` times the
    /// run's length.
    SlicesLengthened {
        /// The cell.
        cell: &'a CellKey,
        /// Its slices' length over the run's.
        factor: u32,
        /// What its slices so far showed.
        why: Lengthening,
    },
    /// A block schedule's joint slice left connections unanswered (each cell had its share of
    /// the server CPUs): from the next block on it is `factor` times the run's slice; the cells'
    /// solo slices are unchanged.
    JointLengthened {
        /// The cells it loads at once (a scenario may have one joint slice per worker count).
        cells: &'a [CellKey],
        /// Its length over the run's slice.
        factor: u32,
    },
    /// Under the at-once schedule, a cell is loaded in a slice of its own in each block, not with
    /// its peers; under the block schedule, it has no joint slice, so its ratios rest on its solo
    /// slices (said once, at its first launch).
    LoadedInTurn {
        /// The cell.
        cell: &'a CellKey,
        /// Why it cannot be loaded with the others.
        why: bakeoff_model::plan::schedule::InTurn,
        /// The run's schedule.
        schedule: bakeoff_model::plan::schedule::Schedule,
    },
    /// Another round of `pending` cells would overrun the budget: they keep the precision they
    /// reached (under the block schedule, scenarios nearer their target may still get one).
    BudgetSpent {
        /// Cells whose interval is still wider than the target.
        pending: usize,
    },
    /// A cell could not be measured (its server, its calibration or its load failed); the run goes on.
    CellFailed {
        /// The cell.
        cell: &'a CellKey,
        /// What went wrong.
        error: String,
    },
    /// The server answered but its process tree was still busy when its ready timeout ran out
    /// (`cores`: CPU use over the last quarter second); the warm-up starts anyway.
    StillBusyAfterStart {
        /// The stack started.
        stack: &'a str,
        /// Cores its process tree used over the last quarter second.
        cores: f64,
    },
}
