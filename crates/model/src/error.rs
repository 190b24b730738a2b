//! The model's errors, each saying what failed and what to do: input a user must fix (a study file),
//! and results a sink could not save.

use std::fmt;

/// Input a user must fix: what is wrong, where, and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {problem}\n  hint: {hint}")]
pub struct InputError {
    /// The file or field at fault.
    pub what: String,
    /// What is wrong with it.
    pub problem: String,
    /// How to fix it.
    pub hint: String,
}

/// Results a `ResultSink` could not save. A run stops on it: a trial that is not saved is, to every
/// report, a trial that was never measured.
#[derive(Debug, thiserror::Error)]
#[error("cannot save {saving}: {cause}\n  hint: {hint}")]
pub struct SinkError {
    /// What was being saved.
    pub saving: Saving,
    /// The sink's own error (for the store, a `StoreError`), kept whole so a caller can inspect it.
    pub cause: Box<dyn std::error::Error + Send + Sync>,
    /// What the user can do about it.
    pub hint: &'static str,
}

impl SinkError {
    /// `cause` happened while saving `saving`; `hint` says what to do.
    pub fn new(saving: Saving, cause: impl std::error::Error + Send + Sync + 'static, hint: &'static str) -> SinkError {
        SinkError { saving, cause: Box::new(cause), hint }
    }
}

/// What a sink was saving when it failed: one variant per `ResultSink` method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saving {
    /// The start of a run, with its provenance.
    Run {
        /// The run's id.
        run_id: String,
    },
    /// A stack variant's verification report.
    Verification {
        /// The run's id.
        run_id: String,
        /// The stack verified.
        stack: String,
        /// Its variant.
        variant: String,
    },
    /// One trial of one cell.
    Trial {
        /// The run's id.
        run_id: String,
        /// The cell, as `STACK[VARIANT] SCENARIO`.
        cell: String,
        /// The trial's number within its cell.
        trial: u32,
    },
    /// A store ceiling measured for the run.
    Ceiling {
        /// The run's id.
        run_id: String,
        /// The store measured.
        store: String,
    },
    /// What ran for each stack variant of the run.
    WhatRan {
        /// The run's id.
        run_id: String,
    },
    /// The end of a run, with its status.
    Finish {
        /// The run's id.
        run_id: String,
    },
}

impl fmt::Display for Saving {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Saving::Run { run_id } => write!(f, "the start of run {run_id}"),
            Saving::Verification { run_id, stack, variant } => write!(f, "the verification of {stack}[{variant}] in run {run_id}"),
            Saving::Trial { run_id, cell, trial } => write!(f, "trial {trial} of {cell} in run {run_id}"),
            Saving::Ceiling { run_id, store } => write!(f, "the {store} ceiling of run {run_id}"),
            Saving::WhatRan { run_id } => write!(f, "what ran in run {run_id}"),
            Saving::Finish { run_id } => write!(f, "the end of run {run_id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_error_says_what_was_saved_why_it_failed_and_what_to_do() {
        let cause = std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full");
        let saving = Saving::Trial { run_id: "r1".into(), cell: "rust/actix[default] hello".into(), trial: 3 };
        let e = SinkError::new(saving, cause, "free some space beside the results file");
        assert_eq!(
            e.to_string(),
            "cannot save trial 3 of rust/actix[default] hello in run r1: disk full\n  hint: free some space beside the results file"
        );
        assert!(e.cause.downcast_ref::<std::io::Error>().is_some(), "the cause is kept whole");
    }
}
