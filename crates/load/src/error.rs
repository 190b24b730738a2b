//! Typed errors: bad plans (user input) and failed runs, each with a hint for the user.

use thiserror::Error;

/// A plan that cannot be run. Every variant names the flag at fault so the CLI
/// can print a message a user can act on without reading the source.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlanError {
    #[error("invalid URL `{url}`: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("--connections must be at least 1 (got {0})")]
    ZeroConnections(u32),
    #[error("--threads must be between 1 and the number of connections ({connections}), got {threads}")]
    BadThreads { threads: u32, connections: u32 },
    #[error("--rate must be a positive number of requests per second (got {0})")]
    BadRate(f64),
    #[error("invalid duration `{0}`")]
    BadDuration(String),
    #[error("invalid --ramp `{0}`: expected START:STEP:STEP_DURATION:MAX[:HOLD], e.g. 100:100:5s:1000:10s")]
    BadRamp(String),
    #[error("invalid --conn-ladder `{0}`: expected a comma-separated list of positive connection counts, e.g. 16,64,256")]
    BadLadder(String),
    #[error("invalid header `{0}`: expected `Name: value`")]
    BadHeader(String),
    #[error("--pipeline must be at least 1 (got {0})")]
    BadPipeline(u32),
    #[error("--requests-per-conn must be at least 1 (got {0})")]
    BadRequestsPerConn(u64),
    #[error("-n/--requests must be at least 1 (got {0})")]
    BadRequests(u64),
    #[error("conflicting options: {0}")]
    Conflict(String),
    #[error("invalid value: {0}")]
    Invalid(String),
}

impl PlanError {
    /// One line telling the user what to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            PlanError::BadUrl { .. } => {
                "use http://HOST[:PORT]/PATH with HOST an IPv4/IPv6 literal (IPv6 in brackets) or localhost; https is not supported"
            }
            PlanError::ZeroConnections(_) => "pass -c N with N >= 1",
            PlanError::BadThreads { .. } => "each thread needs at least one connection: lower -t or raise -c",
            PlanError::BadRate(_) => "pass --rate R with R > 0, or omit --rate for a closed (as fast as possible) run",
            PlanError::BadDuration(_) => "durations are a number with a unit: 500ms, 10s, 2m, 1h (a bare number means seconds)",
            PlanError::BadRamp(_) => "START and STEP are req/s, STEP_DURATION and HOLD durations, MAX >= START",
            PlanError::BadLadder(_) => "give at least one count, each >= the thread count",
            PlanError::BadHeader(_) => "write headers as -H 'Name: value'",
            PlanError::BadPipeline(_) => "--pipeline 1 means no pipelining",
            PlanError::BadRequestsPerConn(_) => "omit --requests-per-conn for unlimited keep-alive",
            PlanError::BadRequests(_) => "omit -n to run for a duration instead",
            PlanError::Conflict(_) => "pick one of the conflicting options",
            PlanError::Invalid(_) => "see --help for the accepted values",
        }
    }
}

/// A run that could not produce a report at all. Per-request failures are not
/// errors here: they are counted in `ErrorCounts`.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("cannot create the event loop: {0}")]
    Poll(#[source] std::io::Error),
    #[error("cannot start worker thread: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("a worker thread panicked")]
    WorkerPanicked,
    #[error("cannot pin thread to CPU {cpu}: {reason}")]
    Pin { cpu: usize, reason: String },
}

impl LoadError {
    pub fn hint(&self) -> &'static str {
        match self {
            LoadError::Poll(_) | LoadError::Spawn(_) => "check the open-file and thread limits (ulimit -n / ulimit -u)",
            LoadError::WorkerPanicked => "this is a bug in bakeoff-load; please report it with the command line",
            LoadError::Pin { .. } => "check --pin-cpus against the CPUs this process may use (taskset -p $$)",
        }
    }
}
