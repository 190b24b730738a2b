//! The result types of a run: what the lab measures and hands to a `ResultSink`, what the store keeps
//! and what every report format reads. One source of truth for result fields.

use crate::error::SinkError;
pub use crate::records::lab_warning::{LabWarning, WORKERS_SLACK_CORES};
use crate::records::status::RunStatus;
use crate::scenario::Scenario;
use bakeoff_load::LoadReport;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// One invocation of `bakeoff run`, with the provenance a reader needs to reproduce it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    /// The run's id: its start time and a suffix, e.g. "20240501T120000Z-demo".
    pub id: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// The checkout's commit; None outside a git checkout.
    pub git_commit: Option<String>,
    /// The machine it ran on.
    pub machine: MachineInfo,
    /// The study name, or "adhoc" for a run from flags.
    pub study: String,
    /// The resolved settings of the run (durations, connections, trials, CPU sets...), as JSON.
    pub settings: serde_json::Value,
    /// Services used by the run, e.g. "postgres 15.18", "mongo-java-server 1.45 (memory backend)".
    pub services: Vec<String>,
}

impl RunInfo {
    /// A run starting now on `machine`, outside any checkout and with no services yet.
    pub fn starting_now(id: &str, study: &str, machine: MachineInfo, settings: serde_json::Value) -> Self {
        RunInfo {
            id: id.into(),
            started_at: crate::now_rfc3339(),
            git_commit: None,
            machine,
            study: study.into(),
            settings,
            services: vec![],
        }
    }
}

/// The machine a run measured on, as reports print it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MachineInfo {
    /// Its host name.
    pub hostname: String,
    /// The CPU's model name.
    pub cpu_model: String,
    /// Online CPU cores.
    pub cores: u32,
    /// The kernel release.
    pub kernel: String,
    /// Physical memory.
    pub memory_bytes: u64,
    /// The operating system's name and version.
    pub os: String,
}

/// A cell is one stack x scenario x variant x worker count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct CellKey {
    /// The stack, e.g. "rust-actix".
    pub stack: String,
    /// The scenario served.
    pub scenario: Scenario,
    /// The stack's variant ("default" unless its manifest has more).
    pub variant: String,
    /// The WORKERS the server was given.
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
    /// `"rust-actix[postgres] products w2"`, `" (A/A twin)"` after a twin: how every report names a cell.
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
    /// Resident set size of the tree.
    pub rss_bytes: u64,
    /// Proportional set size; 0 where smaps_rollup cannot be read.
    pub pss_bytes: u64,
    /// Cumulative user+system CPU seconds of the tree (including reaped children).
    pub cpu_s: f64,
    /// Processes in the tree; 0 once it is gone.
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
    /// User+system CPU seconds of the server tree over the measurement.
    pub cpu_s: f64,
    /// Percent of one core, averaged over the measurement.
    pub cpu_percent: f64,
    /// CPU microseconds per completed request.
    pub cpu_us_per_request: f64,
    /// Highest RSS of the tree.
    pub peak_rss_bytes: u64,
    /// Mean RSS of the tree.
    pub mean_rss_bytes: u64,
    /// Highest PSS of the tree (0 where it cannot be read).
    pub peak_pss_bytes: u64,
    /// Mean PSS of the tree (0 where it cannot be read).
    pub mean_pss_bytes: u64,
    /// Fitted memory growth (RSS) over the measurement, MiB per minute.
    pub rss_slope_mib_per_min: f64,
}

/// One measured repetition of a cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrialRecord {
    /// The run it belongs to.
    pub run_id: String,
    /// The cell measured.
    pub cell: CellKey,
    /// Its round, from 1.
    pub trial: u32,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// What the load generator measured.
    pub load: LoadReport,
    /// What the server used.
    pub server: ServerUsage,
    /// The server tree sampled over the trial, warm-up included.
    pub samples: Vec<ProcessSample>,
    /// Lab-level warnings (server died, background CPU noise...), beside the load generator's own.
    pub warnings: Vec<LabWarning>,
    /// What else the machine did during the measurement; None in runs stored before it was kept.
    #[serde(default)]
    pub noise: Option<crate::records::noise::TrialNoise>,
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
    /// The server tree's CPU in each step of a multi-step plan (a rate ramp, a concurrency
    /// ladder, a closed maximum after an open schedule), from the samples inside the step's
    /// window; empty for a single step, whose figures are the trial's.
    #[serde(default)]
    pub step_usage: Vec<StepUsage>,
    /// Latency at fixed fractions of the capacity this trial measured, when the run asked for it.
    #[serde(default)]
    pub under_load: Option<crate::slo::LoadCurve>,
    /// Under the block schedule, what the cell answered in the block's joint slice (loaded at the
    /// same time as its peers); None where it had none (loaded in turn, another schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<crate::records::joint::JointSlice>,
}

/// The server's CPU during one step of a trial.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct StepUsage {
    /// Percent of one core over the step.
    pub cpu_percent: f64,
    /// CPU microseconds per request completed in the step.
    pub cpu_us_per_request: f64,
}

/// The verification outcome of one check.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The check passed.
    Pass,
    /// Passed with a reservation the reason states.
    Warn,
    /// Failed: the scenario (or the stack) is not measured.
    Fail,
}

/// What a check is about: one scenario, or the whole stack (it starts, it stays up). Stored and
/// serialized as the scenario id, or `*` for the whole stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum CheckScope {
    /// The whole stack: a failure keeps every scenario from being measured.
    Stack,
    /// One scenario.
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

/// One verification check of a stack variant: what was checked, where, and how it went.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    /// The scenario checked, or the whole stack.
    pub scenario: CheckScope,
    /// Its outcome.
    pub verdict: Verdict,
    /// What was checked, e.g. "body is Hello World!".
    pub what: String,
    /// The URL requested.
    pub url: String,
    /// Why it failed or warned; on pass empty, or the figure a measuring check measured.
    pub reason: String,
}

/// Every check of one stack variant, all at once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerifyReport {
    /// The stack verified.
    pub stack: String,
    /// Its variant.
    pub variant: String,
    /// Every check, passed or not.
    pub checks: Vec<Check>,
}

impl VerifyReport {
    /// The worst verdict of any check (pass when there is none).
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
    /// The run it belongs to.
    pub run_id: String,
    /// The store measured.
    pub store: StoreKind,
    /// Products or document.
    pub scenario: Scenario,
    /// The native client, e.g. "pgbench 15.18", "rusqlite (in-process, SQLite 3.45.0)".
    pub client: String,
    /// Connections the client used (the run's connection count).
    pub connections: u32,
    /// How long it measured, seconds.
    pub duration_s: f64,
    /// Queries completed.
    pub queries: u64,
    /// Queries per second: the ceiling.
    pub queries_per_sec: f64,
    /// Mean query latency, µs.
    pub mean_latency_us: f64,
    /// 99th percentile latency, µs, where the client reports it.
    pub p99_latency_us: Option<f64>,
}

/// The backing stores a ceiling is measured for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// SQLite, in process.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// The MongoDB-protocol document store.
    Docstore,
}

impl StoreKind {
    /// Every store, in the order reports list them.
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
    /// A run starts: its provenance and settings.
    fn begin_run(&mut self, run: &RunInfo) -> Result<(), SinkError>;
    /// A stack variant was verified.
    fn record_verification(&mut self, run_id: &str, report: &VerifyReport) -> Result<(), SinkError>;
    /// A trial was measured.
    fn record_trial(&mut self, trial: &TrialRecord) -> Result<(), SinkError>;
    /// The run ended, completely or not.
    fn finish_run(&mut self, run_id: &str, status: &RunStatus) -> Result<(), SinkError>;
    /// A store ceiling measured for the run (products: sqlite/postgres; document: docstore). Sinks
    /// that do not keep ceilings ignore it.
    fn record_ceiling(&mut self, _c: &CeilingRecord) -> Result<(), SinkError> {
        Ok(())
    }
    /// What ran for each stack variant of the run (versions, server model, workers, pool,
    /// libraries). Sinks that do not keep it ignore it.
    fn record_what_ran(&mut self, _run_id: &str, _what: &[crate::records::profile::WhatRan]) -> Result<(), SinkError> {
        Ok(())
    }
}

/// A sink that keeps everything in memory: for library users and tests.
#[derive(Debug, Default)]
pub struct MemorySink {
    /// Runs begun.
    pub runs: Vec<RunInfo>,
    /// Verifications recorded.
    pub verifications: Vec<VerifyReport>,
    /// Trials recorded.
    pub trials: Vec<TrialRecord>,
    /// Runs finished, with their status.
    pub finished: Vec<(String, RunStatus)>,
    /// Store ceilings recorded.
    pub ceilings: Vec<CeilingRecord>,
    /// What ran, per stack variant.
    pub what_ran: Vec<crate::records::profile::WhatRan>,
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
    fn record_what_ran(&mut self, _run_id: &str, what: &[crate::records::profile::WhatRan]) -> Result<(), SinkError> {
        self.what_ran.extend_from_slice(what);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
