//! Typed errors of the lab for things a user must fix: each says what is wrong, where, and the fix.

use std::path::PathBuf;

/// What stopped the lab, worded for the user: the problem, where it is and a hint at the fix.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A stack's `stack.toml` cannot be read or breaks the format of docs/stacks.md.
    #[error("{file}: {problem}\n  hint: {hint}")]
    Manifest {
        /// The manifest file.
        file: PathBuf,
        /// What is wrong, naming the field.
        problem: String,
        /// How to fix it.
        hint: String,
    },

    /// A stack was asked for by a name the catalogue does not hold.
    #[error("no stack named `{name}`\n  hint: known stacks: {known}")]
    UnknownStack {
        /// The name asked for.
        name: String,
        /// The catalogue's names, comma-separated.
        known: String,
    },

    /// The stacks, scenarios, variants or cells asked for do not fit together (a variant a stack
    /// lacks, a scenario it does not implement, a baseline without its upstream).
    #[error("{0}\n  hint: run `bakeoff stacks` to see what each stack implements")]
    Selection(String),

    /// A stack's setup (its apt packages or a `[setup]` command) failed.
    #[error("setup of {stack} failed: `{command}` exited with {status}\n{log_tail}\n  hint: the whole log is {log}")]
    Setup {
        /// The stack being set up.
        stack: String,
        /// The command that failed.
        command: String,
        /// How it ended (exit status, timeout or the reason it could not run).
        status: String,
        /// The last lines of the setup log.
        log_tail: String,
        /// The setup log.
        log: PathBuf,
    },

    /// A server could not be started, died, or did not answer in time.
    #[error("{stack} did not become ready: {reason}\n--- last lines of its log ({log}) ---\n{log_tail}")]
    NotReady {
        /// The server's name (a stack, or a service's own server).
        stack: String,
        /// Why it is not ready.
        reason: String,
        /// The server's log.
        log: PathBuf,
        /// The last lines of that log.
        log_tail: String,
    },

    /// A backing service (PostgreSQL, the document store, nginx) could not be started or seeded.
    #[error("service {service} failed: {reason}\n  hint: {hint}")]
    Service {
        /// The service's name.
        service: String,
        /// What went wrong.
        reason: String,
        /// How to fix it.
        hint: String,
    },

    /// A run's results could not be handed to the result sink.
    #[error("the results could not be saved: {0}\n  hint: check the results file and the free space beside it")]
    Sink(String),

    /// Anything else the user or the machine must fix: a study file, a flag, a file that cannot
    /// be written, a load plan that cannot be built.
    #[error("{what}: {problem}\n  hint: {hint}")]
    Input {
        /// What the problem is in (a flag, a file, a study field).
        what: String,
        /// What is wrong.
        problem: String,
        /// How to fix it.
        hint: String,
    },
}

impl LabError {
    /// A [`LabError::Manifest`] from its parts.
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
