//! Typed errors of the lab for things a user must fix: each says what is wrong, where, and the fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("{file}: {problem}\n  hint: {hint}")]
    Manifest { file: PathBuf, problem: String, hint: String },

    #[error("no stack named `{name}`\n  hint: known stacks: {known}")]
    UnknownStack { name: String, known: String },

    #[error("{0}\n  hint: run `bakeoff stacks` to see what each stack implements")]
    Selection(String),

    #[error("setup of {stack} failed: `{command}` exited with {status}\n{log_tail}\n  hint: the whole log is {log}")]
    Setup { stack: String, command: String, status: String, log_tail: String, log: PathBuf },

    #[error("{stack} did not become ready: {reason}\n--- last lines of its log ({log}) ---\n{log_tail}")]
    NotReady { stack: String, reason: String, log: PathBuf, log_tail: String },

    #[error("service {service} failed: {reason}\n  hint: {hint}")]
    Service { service: String, reason: String, hint: String },

    #[error("the results could not be saved: {0}\n  hint: check the results file and the free space beside it")]
    Sink(String),

    #[error("{what}: {problem}\n  hint: {hint}")]
    Input { what: String, problem: String, hint: String },
}

impl LabError {
    pub(crate) fn manifest(file: impl Into<PathBuf>, problem: impl Into<String>, hint: impl Into<String>) -> Self {
        LabError::Manifest { file: file.into(), problem: problem.into(), hint: hint.into() }
    }
}

/// A study file's problem keeps its wording and hint.
impl From<bakeoff_model::InputError> for LabError {
    fn from(e: bakeoff_model::InputError) -> Self {
        LabError::Input { what: e.what, problem: e.problem, hint: e.hint }
    }
}
