//! The result types of a run: what the lab measures and hands to a `ResultSink`, what the store keeps
//! and what every report format reads. One source of truth for result fields.

use crate::error::SinkError;
use crate::scenario::Scenario;
use crate::status::RunStatus;
use bakeoff_load::LoadReport;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// One invocation of `bakeoff run`, with the provenance a reader needs to reproduce it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub id: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub git_commit: Option<String>,
    pub machine: MachineInfo,
    /// The study name, or "adhoc" for a run from flags.
    pub study: String,
    /// The resolved settings of the run (durations, connections, trials, CPU sets...), as JSON.
    pub settings: serde_json::Value,
    /// Services used by the run, e.g. "postgres 15.18", "mongo-java-server 1.45 (memory backend)".
    pub services: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MachineInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: u32,
    pub kernel: String,
    pub memory_bytes: u64,
    pub os: String,
}

/// A cell is one stack x scenario x variant x worker count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct CellKey {
    pub stack: String,
    pub scenario: Scenario,
    pub variant: String,
    pub workers: u32,
    /// The second arm of an A/A measurement: the same cell measured again in every round, so the
    /// two arms show what the machine alone changes between identical measurements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub twin: bool,
}

/// Cells sort by stack, then scenario id as text (the order every report has always listed them
/// in), then variant and workers, an A/A twin right after its cell. Every field takes part, as in
/// `Eq`: maps keyed by cells (summaries, precision rounds, comparisons) keep the twin apart.
impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> Ordering {
        (&self.stack, self.scenario.id(), &self.variant, self.workers, self.twin).cmp(&(
            &other.stack,
            other.scenario.id(),
            &other.variant,
            other.workers,
            other.twin,
        ))
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl CellKey {
    pub fn label(&self) -> String {
        let variant = if self.variant == "default" { String::new() } else { format!("[{}]", self.variant) };
        let twin = if self.twin { " (A/A twin)" } else { "" };
        format!("{}{} {} w{}{twin}", self.stack, variant, self.scenario, self.workers)
    }
}

/// One sample of the server's whole process tree.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ProcessSample {
    /// Milliseconds since the measurement started (negative during warm-up).
    pub t_ms: i64,
    pub rss_bytes: u64,
    /// Proportional set size; 0 where smaps_rollup cannot be read.
    pub pss_bytes: u64,
    /// Cumulative user+system CPU seconds of the tree (including reaped children).
    pub cpu_s: f64,
    pub processes: u32,
}

impl ProcessSample {
    /// A sample of the measurement proper: after the warm-up, with the server's tree alive. The lab's
    /// usage and growth warning and the reports' memory series all read only these.
    pub fn is_measured(&self) -> bool {
        self.t_ms >= 0 && self.processes > 0
    }
}

/// The unit /proc counts CPU time in (USER_HZ, 100 per second on Linux): the meter's resolution.
pub const PROC_TICK_S: f64 = 0.01;

/// What the server used during the measured part of one trial, derived from the samples.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ServerUsage {
    pub cpu_s: f64,
    /// Percent of one core, averaged over the measurement.
    pub cpu_percent: f64,
    pub cpu_us_per_request: f64,
    pub peak_rss_bytes: u64,
    pub mean_rss_bytes: u64,
    pub peak_pss_bytes: u64,
    pub mean_pss_bytes: u64,
    /// Fitted memory growth (RSS) over the measurement, MiB per minute.
    pub rss_slope_mib_per_min: f64,
}

/// One measured repetition of a cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrialRecord {
    pub run_id: String,
    pub cell: CellKey,
    pub trial: u32,
    pub started_at: String,
    pub load: LoadReport,
    pub server: ServerUsage,
    pub samples: Vec<ProcessSample>,
    /// Lab-level warnings (server died, background CPU noise...), beside the load generator's own.
    pub warnings: Vec<LabWarning>,
    /// What else the machine did during the measurement; None in runs stored before it was kept.
    #[serde(default)]
    pub noise: Option<crate::noise::TrialNoise>,
    /// Wall time of the whole trial (start, warm-up, measurement, stop), seconds: what it cost.
    #[serde(default)]
    pub elapsed_s: f64,
    /// The SLO capacity search run after the measurement, when the run set an objective.
    #[serde(default)]
    pub slo: Option<crate::slo::SloSearch>,
    /// Under the block schedule, which launch of the servers this slice ran in (0-based); the
    /// trial number is then the block. None for a trial that started its own server.
    #[serde(default)]
    pub launch: Option<u32>,
}

/// Measurement-quality problems the lab sees around the load generator.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LabWarning {
    /// The server process tree exited during measurement.
    ServerDied { exit: String },
    /// CPU used by processes that are neither the server nor the client.
    BackgroundNoise { cpu_percent: f64 },
    /// The trials of a cell disagree by more than the tolerance.
    TrialsDisagree { metric: String, spread_percent: f64 },
    /// Memory grew steadily during the measurement.
    MemoryGrowth { mib_per_min: f64 },
    /// The hypervisor took CPU time from the server's or the client's CPUs.
    CpuSteal { cpu_percent: f64 },
    /// A cell's interval on the primary metric stayed wider than the run's precision target.
    PrecisionMissed { metric: String, achieved_percent: f64, target_percent: f64, trials: u32, confidence_percent: f64 },
    /// The server kept more cores busy than its workers while more server CPUs were available:
    /// it ignores WORKERS (or runs handlers outside them), so it had more parallelism than its peers.
    WorkersExceeded { workers: u32, cores_used: f64, server_cpus: u32 },
    /// Processes the server started were still running after its process group got SIGTERM and
    /// SIGKILL (they left the group, e.g. with `setsid`); the lab killed them. Each is
    /// "pid N (`command`)".
    ProcessesLeftBehind { processes: Vec<String> },
    /// The live-data probe, run again on the warm server right after the measurement, failed:
    /// the answers measured were (at least in part) cached.
    StaleAfterLoad { scenario: Scenario, reason: String },
    /// The CPU-cost check, run again on the warm server right after the cell's first trial,
    /// failed: under the load the work stopped costing what verification measured (an answer
    /// cached after N requests, work done only while the verifier's light URL is seen).
    CostAfterLoad { scenario: Scenario, reason: String },
    /// Other processes kept using the trial's CPUs through the lab's bounded wait for quiet before
    /// the trial (`cpu_percent` of one core, over the wait's last quarter second).
    NotQuietBeforeTrial { cpu_percent: f64 },
    /// The variant reproduces a bug on purpose (its manifest's `reproduces`): measured and shown to
    /// tell what the bug costs, never ranked, called fastest or compared with peers.
    DeliberateBug { reproduces: String },
    /// Under the block schedule the server kept using CPU while the others were measured
    /// (`cpu_percent` of one core while idle): a timer, a collector or a pool that would tax its
    /// co-resident peers' slices.
    BusyWhileIdle { cpu_percent: f64 },
}

/// The `kind` of `LabWarning::DeliberateBug`, which a cell's reasons for not being ranked start with.
pub const DELIBERATE_BUG: &str = "deliberate_bug";

/// How many cores beyond WORKERS a server may keep busy before it counts as not honouring WORKERS:
/// helper threads (a runtime's timers, a front that only relays) use a little; a server that runs
/// handlers on every CPU uses whole cores.
pub const WORKERS_SLACK_CORES: f64 = 0.5;

impl LabWarning {
    /// The worker check: a warning when the server tree kept more than WORKERS + `WORKERS_SLACK_CORES`
    /// cores busy while more server CPUs than WORKERS were available (with no spare CPU it cannot
    /// exceed its share, so nothing is measured).
    pub fn workers_check(workers: u32, cores_used: f64, server_cpus: u32) -> Option<LabWarning> {
        (server_cpus > workers && cores_used > workers as f64 + WORKERS_SLACK_CORES).then_some(LabWarning::WorkersExceeded {
            workers,
            cores_used,
            server_cpus,
        })
    }

    /// The serialized `kind` tag: what a report groups repeated warnings by.
    pub fn kind(&self) -> &'static str {
        match self {
            LabWarning::ServerDied { .. } => "server_died",
            LabWarning::BackgroundNoise { .. } => "background_noise",
            LabWarning::TrialsDisagree { .. } => "trials_disagree",
            LabWarning::MemoryGrowth { .. } => "memory_growth",
            LabWarning::CpuSteal { .. } => "cpu_steal",
            LabWarning::PrecisionMissed { .. } => "precision_missed",
            LabWarning::WorkersExceeded { .. } => "workers_exceeded",
            LabWarning::ProcessesLeftBehind { .. } => "processes_left_behind",
            LabWarning::StaleAfterLoad { .. } => "stale_after_load",
            LabWarning::CostAfterLoad { .. } => "cost_after_load",
            LabWarning::NotQuietBeforeTrial { .. } => "not_quiet_before_trial",
            LabWarning::BusyWhileIdle { .. } => "busy_while_idle",
            LabWarning::DeliberateBug { .. } => DELIBERATE_BUG,
        }
    }

    /// How bad this instance is, comparable only within one kind (see `Warning::severity`).
    pub fn severity(&self) -> f64 {
        match self {
            LabWarning::ServerDied { .. } => 1.0,
            LabWarning::BackgroundNoise { cpu_percent } => *cpu_percent,
            LabWarning::TrialsDisagree { spread_percent, .. } => *spread_percent,
            LabWarning::MemoryGrowth { mib_per_min } => *mib_per_min,
            LabWarning::CpuSteal { cpu_percent } => *cpu_percent,
            LabWarning::PrecisionMissed { achieved_percent, .. } => *achieved_percent,
            LabWarning::WorkersExceeded { workers, cores_used, .. } => cores_used - *workers as f64,
            LabWarning::ProcessesLeftBehind { processes } => processes.len() as f64,
            LabWarning::StaleAfterLoad { .. } => 1.0,
            LabWarning::CostAfterLoad { .. } => 1.0,
            LabWarning::NotQuietBeforeTrial { cpu_percent } => *cpu_percent,
            LabWarning::BusyWhileIdle { cpu_percent } => *cpu_percent,
            LabWarning::DeliberateBug { .. } => 1.0,
        }
    }

    pub fn message(&self) -> String {
        match self {
            LabWarning::ServerDied { exit } => format!("server died during measurement ({exit})"),
            LabWarning::BackgroundNoise { cpu_percent } => {
                format!("other processes used {cpu_percent:.0}% CPU during measurement")
            }
            LabWarning::TrialsDisagree { metric, spread_percent } => {
                format!("trials disagree on {metric} by {spread_percent:.1}%")
            }
            LabWarning::MemoryGrowth { mib_per_min } => format!("memory grows {mib_per_min:.2} MiB/min"),
            LabWarning::CpuSteal { cpu_percent } => format!("the hypervisor stole {cpu_percent:.0}% of a core during measurement"),
            LabWarning::PrecisionMissed { metric, achieved_percent, target_percent, trials, confidence_percent } => {
                if *confidence_percent < 95.0 {
                    format!(
                        "precision target missed: {trials} trials give {metric} an interval of only {confidence_percent:.0}% coverage (a 95% interval needs {} trials)",
                        crate::robust::MIN_TRIALS_FOR_INTERVAL
                    )
                } else {
                    format!(
                        "precision target missed: ±{achieved_percent:.1}% on {metric} after {trials} trials (target ±{target_percent:.1}%)"
                    )
                }
            }
            LabWarning::WorkersExceeded { workers, cores_used, server_cpus } => {
                format!("server used {cores_used:.2} cores with WORKERS={workers} ({server_cpus} server CPUs)")
            }
            LabWarning::ProcessesLeftBehind { processes } => {
                format!("left running after its stop (SIGTERM + SIGKILL to its process group): {}", processes.join(", "))
            }
            LabWarning::StaleAfterLoad { scenario, reason } => format!("{scenario}: answer went stale under load: {reason}"),
            LabWarning::CostAfterLoad { scenario, reason } => {
                format!("{scenario}: the work stopped costing what it claims under load (CPU-cost check rerun after the trial): {reason}")
            }
            LabWarning::NotQuietBeforeTrial { cpu_percent } => {
                format!(
                    "other processes used {cpu_percent:.0}% of a core on the trial's CPUs when it started, after the lab's bounded wait for quiet"
                )
            }
            LabWarning::DeliberateBug { reproduces } => format!("deliberate reproduction of a bug: {reproduces}"),
            LabWarning::BusyWhileIdle { cpu_percent } => {
                format!("the server used {cpu_percent:.1}% of a core while idle beside the others (block schedule), which its peers' slices paid for")
            }
        }
    }

    pub fn advice(&self) -> &'static str {
        match self {
            LabWarning::ServerDied { .. } => "see the server log in the run directory; the cell's numbers are partial",
            LabWarning::BackgroundNoise { .. } => "stop other work on the machine and rerun; noise hits cells unevenly",
            LabWarning::TrialsDisagree { .. } => "run more trials or longer ones; check for thermal or background noise",
            LabWarning::MemoryGrowth { .. } => "run `bakeoff run --soak 5m` on this cell to see whether it levels off",
            LabWarning::CpuSteal { .. } => "a virtual machine shares its host: rerun when the host is quieter, or use dedicated cores",
            LabWarning::PrecisionMissed { .. } => {
                "give the run a larger --budget, or quiet the machine; compare this cell only beyond its interval"
            }
            LabWarning::WorkersExceeded { .. } => {
                "the stack does not honour WORKERS (docs/stacks.md): fix its start command, or compare it on one server CPU"
            }
            LabWarning::ProcessesLeftBehind { .. } => {
                "a process outside the server's group ran beside the measurement (and would beside the next cells): keep every process in the group and stop them all on SIGTERM"
            }
            LabWarning::StaleAfterLoad { .. } => {
                "the stack caches what the contract says to read on every request (perhaps only once warm): read the store per request"
            }
            LabWarning::CostAfterLoad { .. } => {
                "the stack skips the contract's work once it has served some requests (a cache, a memo, a formula): do the work on every request, as docs/scenarios.md says"
            }
            LabWarning::NotQuietBeforeTrial { .. } => "stop other work on the machine (see `top`) and rerun; this trial started beside it",
            LabWarning::DeliberateBug { .. } => "compare it only with its own stack's fixed variant: that difference is what the bug costs",
            LabWarning::BusyWhileIdle { .. } => {
                "measure this scenario with `--schedule trials` (a fresh server per trial, alone), or find what the idle server does (a timer, a GC, a pool's keep-alive)"
            }
        }
    }

    /// Whether a trial with this warning describes a broken or unfair server: its cell is shown
    /// but never ranked, claimed about or called fastest.
    pub fn disqualifies(&self) -> bool {
        match self {
            // More cores than WORKERS is more resources than its peers had: an unfair comparison.
            LabWarning::ServerDied { .. }
            | LabWarning::ProcessesLeftBehind { .. }
            | LabWarning::StaleAfterLoad { .. }
            | LabWarning::CostAfterLoad { .. }
            | LabWarning::WorkersExceeded { .. }
            // A deliberate reproduction is measured to show what its bug costs, not to compete.
            | LabWarning::DeliberateBug { .. } => true,
            LabWarning::BackgroundNoise { .. }
            | LabWarning::CpuSteal { .. }
            | LabWarning::PrecisionMissed { .. }
            | LabWarning::TrialsDisagree { .. }
            | LabWarning::MemoryGrowth { .. }
            | LabWarning::NotQuietBeforeTrial { .. }
            | LabWarning::BusyWhileIdle { .. } => false,
        }
    }
}

/// The verification outcome of one check.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Warn,
    Fail,
}

/// What a check is about: one scenario, or the whole stack (it starts, it stays up). Stored and
/// serialized as the scenario id, or `*` for the whole stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum CheckScope {
    Stack,
    Scenario(Scenario),
}

impl CheckScope {
    /// Whether a failure of this check keeps `scenario` from being measured.
    pub fn covers(self, scenario: Scenario) -> bool {
        match self {
            CheckScope::Stack => true,
            CheckScope::Scenario(s) => s == scenario,
        }
    }
}

impl fmt::Display for CheckScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckScope::Stack => f.write_str("*"),
            CheckScope::Scenario(s) => f.write_str(s.id()),
        }
    }
}

impl FromStr for CheckScope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "*" {
            return Ok(CheckScope::Stack);
        }
        s.parse().map(CheckScope::Scenario)
    }
}

crate::serde_as_text!(CheckScope);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    pub scenario: CheckScope,
    pub verdict: Verdict,
    pub what: String,
    pub url: String,
    /// Why it failed or warned; on pass empty, or the figure a measuring check measured.
    pub reason: String,
}

/// Every check of one stack variant, all at once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerifyReport {
    pub stack: String,
    pub variant: String,
    pub checks: Vec<Check>,
}

impl VerifyReport {
    pub fn verdict(&self) -> Verdict {
        self.checks.iter().map(|c| c.verdict).max().unwrap_or(Verdict::Pass)
    }
    /// Whether `scenario` may be measured: no failing check covers it.
    pub fn passed_scenario(&self, scenario: Scenario) -> bool {
        !self.checks.iter().any(|c| c.scenario.covers(scenario) && c.verdict == Verdict::Fail)
    }
}

/// One store ceiling measurement of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CeilingRecord {
    pub run_id: String,
    pub store: StoreKind,
    /// Products or document.
    pub scenario: Scenario,
    /// The native client, e.g. "pgbench 15.18", "rusqlite (in-process, SQLite 3.45.0)".
    pub client: String,
    pub connections: u32,
    pub duration_s: f64,
    pub queries: u64,
    pub queries_per_sec: f64,
    pub mean_latency_us: f64,
    pub p99_latency_us: Option<f64>,
}

/// The backing stores a ceiling is measured for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    Sqlite,
    Postgres,
    Docstore,
}

impl StoreKind {
    pub const ALL: [StoreKind; 3] = [StoreKind::Sqlite, StoreKind::Postgres, StoreKind::Docstore];

    /// The serialized name, as stored and printed.
    pub fn id(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "sqlite",
            StoreKind::Postgres => "postgres",
            StoreKind::Docstore => "docstore",
        }
    }

    /// The scenario whose query the ceiling measures.
    pub fn scenario(self) -> Scenario {
        match self {
            StoreKind::Sqlite | StoreKind::Postgres => Scenario::Products,
            StoreKind::Docstore => Scenario::Document,
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for StoreKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        StoreKind::ALL.into_iter().find(|k| k.id() == s).ok_or_else(|| format!("unknown store `{s}`; known: sqlite, postgres, docstore"))
    }
}

/// Where results go as they are made; the store implements it. Called after every trial, so a crash
/// loses at most the trial in flight. A write that fails says what it was saving (`SinkError`).
pub trait ResultSink {
    fn begin_run(&mut self, run: &RunInfo) -> Result<(), SinkError>;
    fn record_verification(&mut self, run_id: &str, report: &VerifyReport) -> Result<(), SinkError>;
    fn record_trial(&mut self, trial: &TrialRecord) -> Result<(), SinkError>;
    fn finish_run(&mut self, run_id: &str, status: &RunStatus) -> Result<(), SinkError>;
    /// A store ceiling measured for the run (products: sqlite/postgres; document: docstore). Sinks
    /// that do not keep ceilings ignore it.
    fn record_ceiling(&mut self, _c: &CeilingRecord) -> Result<(), SinkError> {
        Ok(())
    }
    /// What ran for each stack variant of the run (versions, server model, workers, pool,
    /// libraries). Sinks that do not keep it ignore it.
    fn record_what_ran(&mut self, _run_id: &str, _what: &[crate::profile::WhatRan]) -> Result<(), SinkError> {
        Ok(())
    }
}

/// A sink that keeps everything in memory: for library users and tests.
#[derive(Debug, Default)]
pub struct MemorySink {
    pub runs: Vec<RunInfo>,
    pub verifications: Vec<VerifyReport>,
    pub trials: Vec<TrialRecord>,
    pub finished: Vec<(String, RunStatus)>,
    pub ceilings: Vec<CeilingRecord>,
    pub what_ran: Vec<crate::profile::WhatRan>,
}

impl ResultSink for MemorySink {
    fn begin_run(&mut self, run: &RunInfo) -> Result<(), SinkError> {
        self.runs.push(run.clone());
        Ok(())
    }
    fn record_verification(&mut self, _run_id: &str, report: &VerifyReport) -> Result<(), SinkError> {
        self.verifications.push(report.clone());
        Ok(())
    }
    fn record_trial(&mut self, trial: &TrialRecord) -> Result<(), SinkError> {
        self.trials.push(trial.clone());
        Ok(())
    }
    fn finish_run(&mut self, run_id: &str, status: &RunStatus) -> Result<(), SinkError> {
        self.finished.push((run_id.into(), status.clone()));
        Ok(())
    }
    fn record_ceiling(&mut self, c: &CeilingRecord) -> Result<(), SinkError> {
        self.ceilings.push(c.clone());
        Ok(())
    }
    fn record_what_ran(&mut self, _run_id: &str, what: &[crate::profile::WhatRan]) -> Result<(), SinkError> {
        self.what_ran.extend_from_slice(what);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kind()` must be the serialized tag (what the JSON report and the store say), for every variant.
    #[test]
    fn lab_warning_kind_is_the_serialized_tag() {
        let all = [
            LabWarning::ServerDied { exit: "exit status: 1".into() },
            LabWarning::BackgroundNoise { cpu_percent: 12.0 },
            LabWarning::TrialsDisagree { metric: "requests/s".into(), spread_percent: 9.0 },
            LabWarning::MemoryGrowth { mib_per_min: 3.0 },
            LabWarning::CpuSteal { cpu_percent: 7.0 },
            LabWarning::PrecisionMissed {
                metric: "requests/s".into(),
                achieved_percent: 7.5,
                target_percent: 5.0,
                trials: 9,
                confidence_percent: 96.1,
            },
            LabWarning::WorkersExceeded { workers: 1, cores_used: 1.8, server_cpus: 2 },
            LabWarning::ProcessesLeftBehind { processes: vec!["pid 7 (`sleep 9`)".into()] },
            LabWarning::StaleAfterLoad { scenario: Scenario::Products, reason: "JSON differs".into() },
            LabWarning::CostAfterLoad { scenario: Scenario::Json, reason: "/json?n=1000 costs the same as n=1".into() },
            LabWarning::NotQuietBeforeTrial { cpu_percent: 40.0 },
        ];
        for w in &all {
            assert_eq!(serde_json::to_value(w).unwrap()["kind"], w.kind(), "{w:?}");
        }
    }

    #[test]
    fn names_as_stored_read_back_typed() {
        for k in StoreKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.id());
            assert_eq!(k.id().parse::<StoreKind>().unwrap(), k);
        }
        assert_eq!(serde_json::to_value(CheckScope::Stack).unwrap(), "*");
        assert_eq!(serde_json::from_value::<CheckScope>("json".into()).unwrap(), CheckScope::Scenario(Scenario::Json));
        assert!("nosuch".parse::<CheckScope>().is_err());
    }

    #[test]
    fn a_failing_whole_stack_check_stops_every_scenario() {
        let check = |scenario, verdict| Check { scenario, verdict, what: String::new(), url: String::new(), reason: String::new() };
        let mut r = VerifyReport {
            stack: "s".into(),
            variant: "default".into(),
            checks: vec![check(CheckScope::Scenario(Scenario::Json), Verdict::Fail)],
        };
        assert!(!r.passed_scenario(Scenario::Json) && r.passed_scenario(Scenario::Hello));
        r.checks.push(check(CheckScope::Stack, Verdict::Fail));
        assert!(!r.passed_scenario(Scenario::Hello));
    }

    #[test]
    fn cells_sort_by_scenario_text() {
        let key = |scenario| CellKey { stack: "s".into(), scenario, variant: "default".into(), workers: 1, twin: false };
        assert!(key(Scenario::Document) < key(Scenario::Hello), "document sorts before hello as text does");
        let twin = CellKey { twin: true, ..key(Scenario::Hello) };
        assert!(key(Scenario::Hello) < twin && twin < key(Scenario::Json), "a twin right after its cell");
        let map: std::collections::BTreeMap<CellKey, u32> = [(key(Scenario::Hello), 1), (twin.clone(), 2)].into();
        assert_eq!((map.len(), map[&twin]), (2, 2), "a twin is a cell of its own in a map");
    }

    #[test]
    fn the_worker_check_needs_spare_cpus_and_more_than_half_a_core_beyond_workers() {
        assert!(LabWarning::workers_check(1, 1.9, 2).is_some());
        assert!(LabWarning::workers_check(1, 1.4, 2).is_none(), "a relaying front or runtime threads");
        assert!(LabWarning::workers_check(1, 1.9, 1).is_none(), "one CPU: no spare to spread over");
        assert!(LabWarning::workers_check(2, 1.9, 2).is_none());
        assert!(LabWarning::workers_check(2, 2.9, 4).is_some());
    }
}
