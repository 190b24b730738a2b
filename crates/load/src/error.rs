//! Typed errors: bad plans (user input) and failed runs, each with a hint for the user.

use thiserror::Error;

/// A plan that cannot be run. Every variant names the flag at fault so the CLI
/// can print a message a user can act on without reading the source.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlanError {
    /// The URL is not `http(s)://HOST[:PORT][/PATH]` with an IP literal or localhost.
    #[error("invalid URL `{url}`: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What about it is wrong.
        reason: String,
    },
    /// `-c 0`.
    #[error("--connections must be at least 1 (got {0})")]
    ZeroConnections(u32),
    /// More threads than connections (every thread needs one), or none.
    #[error("--threads must be between 1 and the number of connections ({connections}), got {threads}")]
    BadThreads {
        /// The thread count asked for.
        threads: u32,
        /// The fewest connections any step has.
        connections: u32,
    },
    /// A rate that is not a positive finite number.
    #[error("--rate must be a positive number of requests per second (got {0})")]
    BadRate(f64),
    /// Text that `parse_duration` does not read.
    #[error("invalid duration `{0}`")]
    BadDuration(String),
    /// A ramp that does not parse or climbs nowhere.
    #[error("invalid --ramp `{0}`: expected START:STEP:STEP_DURATION:MAX[:HOLD], e.g. 100:100:5s:1000:10s")]
    BadRamp(String),
    /// An empty ladder or one with a zero count.
    #[error("invalid --conn-ladder `{0}`: expected a comma-separated list of positive connection counts, e.g. 16,64,256")]
    BadLadder(String),
    /// A header line without `Name:`.
    #[error("invalid header `{0}`: expected `Name: value`")]
    BadHeader(String),
    /// `--pipeline 0`.
    #[error("--pipeline must be at least 1 (got {0})")]
    BadPipeline(u32),
    /// `--requests-per-conn 0`.
    #[error("--requests-per-conn must be at least 1 (got {0})")]
    BadRequestsPerConn(u64),
    /// `-n 0`.
    #[error("-n/--requests must be at least 1 (got {0})")]
    BadRequests(u64),
    /// Two options that cannot be used together; the text names both and why.
    #[error("conflicting options: {0}")]
    Conflict(String),
    /// A request deck that is empty, names too many kinds, or has an entry that cannot be sent.
    #[error("invalid request deck: {0}")]
    BadDeck(String),
    /// `--cacert` names a file that cannot be read or holds no PEM certificate.
    #[error("cannot use the certificates in {}: {reason}", path.display())]
    BadCertificates {
        /// The file given.
        path: std::path::PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// Any other value out of range (the timeout, the method).
    #[error("invalid value: {0}")]
    Invalid(String),
}

impl PlanError {
    /// One line telling the user what to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            PlanError::BadUrl { .. } => {
                "use http://HOST[:PORT]/PATH or https://… with HOST an IPv4/IPv6 literal (IPv6 in brackets) or localhost"
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
            PlanError::BadCertificates { .. } => "give --cacert a PEM file with the server's certificate or its CA's (BEGIN CERTIFICATE)",
            PlanError::BadDeck(_) => {
                "a deck needs at least one entry, 1 to 65535 kind names, each entry's kind below their count and a path starting with /"
            }
            PlanError::Invalid(_) => "see --help for the accepted values",
        }
    }
}

/// A run that could not produce a report at all. Per-request failures are not
/// errors here: they are counted in `ErrorCounts`.
#[derive(Debug, Error)]
pub enum LoadError {
    /// The worker's poll or send timer could not be created.
    #[error("cannot create the event loop: {0}")]
    Poll(#[source] std::io::Error),
    /// The OS refused a worker thread.
    #[error("cannot start worker thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// A worker thread panicked: a bug.
    #[error("a worker thread panicked")]
    WorkerPanicked,
    /// A worker's TLS client could not be made from the plan's settings.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// A thread could not be pinned to a CPU of `--pin-cpus`.
    #[error("cannot pin thread to CPU {cpu}: {reason}")]
    Pin {
        /// The CPU index asked for.
        cpu: usize,
        /// Why the OS refused it.
        reason: String,
    },
}

impl LoadError {
    /// One line telling the user what to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            LoadError::Poll(_) | LoadError::Spawn(_) => "check the open-file and thread limits (ulimit -n / ulimit -u)",
            LoadError::WorkerPanicked => "this is a bug in bakeoff-load; please report it with the command line",
            LoadError::Tls(_) => "check the --cacert file and the --tls-version",
            LoadError::Pin { .. } => "check --pin-cpus against the CPUs this process may use (taskset -p $$)",
        }
    }
}
