//! Study files: which stacks, scenarios and load a study uses, the article it reproduces (its tables as
//! data) and the article's findings as claims, judged against the measured summaries.

mod article;
mod cells;
mod claims;
mod compare;
mod judge;
mod judge_paired;
mod placement;
mod ramp;
mod soak;

pub use article::{Article, ArticleTable, Axis, Figure, Unit};
pub use cells::{CellRef, StepRef, WorkerCount};
pub use claims::{claims_from_stored, Check, Claim, SpreadMeasure, Trend};
pub use compare::{compare, ArticleComparison, FigureComparison, RowComparison, TableComparison};
pub use judge::{judge, ClaimResult, ClaimVerdict, Evidence, Measured, TREND_MIN_MINUTES};
pub use judge_paired::PairedValues;
pub use placement::ProxyPlacement;
pub use ramp::{auto_ladders, RampSetting, AUTO_STEPS, SUSTAINED_SHARE};
pub use soak::{Soak, SOAK_MIN};

use crate::duration::parse_duration;
use crate::error::InputError;
pub use crate::plan::goal::{parse_percent, AaCell, PrimaryMetric};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// A study file (studies/*.toml): what to measure, how, and what the measurements should show.
/// Every setting left out takes the run's default or flag.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    /// The study's name, as runs record it.
    pub name: String,
    /// One paragraph on what it asks.
    #[serde(default)]
    pub description: String,
    /// The stacks measured, e.g. `rust/actix`.
    pub stacks: Vec<String>,
    /// The scenarios measured (empty: every one each stack implements).
    #[serde(default)]
    pub scenarios: Vec<Scenario>,
    /// Scenario files measured as `file:NAME` by the stacks whose manifests declare it, paths
    /// relative to the project root, e.g. `["scenarios/shop.toml"]`; a stack that declares a file
    /// the run is not given has no cell of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenario_files: Vec<std::path::PathBuf>,
    /// The stack variants measured (empty: each stack's default).
    #[serde(default)]
    pub variants: Vec<String>,
    /// Worker counts: numbers, or "all" for one worker per server CPU.
    #[serde(default)]
    pub workers: Vec<WorkerCount>,
    /// Worker counts for some stacks instead of `workers`, e.g. `"python/werkzeug-uwsgi" = [64]`.
    #[serde(default)]
    pub stack_workers: std::collections::BTreeMap<String, Vec<u32>>,
    /// Trials per cell.
    pub trials: Option<u32>,
    /// How measurements are ordered: `blocks` (paired, co-resident servers; the default) or
    /// `trials` (a fresh server per trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::plan::schedule::Schedule>,
    /// Under the block schedule, server starts over the run's blocks (default: 3 from 6 blocks on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u32>,
    /// Measured length of a trial, e.g. "10s".
    pub duration: Option<String>,
    /// Unmeasured lead-in of a trial, e.g. "2s".
    pub warmup: Option<String>,
    /// Load generator connections.
    pub connections: Option<u32>,
    /// A constant arrival rate, req/s (the open model).
    pub rate: Option<f64>,
    /// A ladder of rates.
    pub ramp: Option<RampSetting>,
    /// A concurrency sweep: one measured step per connection count, each `duration` long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_ladder: Option<Vec<u32>>,
    /// Requests before the load generator replaces a connection.
    pub requests_per_conn: Option<u64>,
    /// HTTP/2 streams in flight per connection for the cells served over h2 or h2c (default 1:
    /// the same concurrency as HTTP/1.1's connections); HTTP/1.1 cells keep one request each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
    /// Over TLS, whether a new connection resumes an earlier session (default true, as HTTP
    /// clients do); false makes every handshake a full one, for the cost of handshakes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_resumption: Option<bool>,
    /// What a core costs (`core-hour=0.04`): the reports then price a million requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<crate::plan::price::CorePrice>,
    /// POOL_SIZE: database connections per server process (default 8).
    pub pool_size: Option<u32>,
    /// After an open-model schedule, also measure the closed-model maximum.
    #[serde(default)]
    pub max_throughput: bool,
    /// Where nginx runs in a proxy study: beside the proxy (`shared`) or beside the load generator
    /// (`own-cpu`, the proxy alone on the server CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_placement: Option<ProxyPlacement>,
    /// Where the load clients, the servers and their services run (default: all on this machine).
    #[serde(default, skip_serializing_if = "crate::plan::place::Roles::is_local")]
    pub hosts: crate::plan::place::Roles,
    /// The metric cells are ranked by; both primary metrics are always shown.
    #[serde(default)]
    pub rank_by: PrimaryMetric,
    /// Keep adding rounds until every cell's 95% interval on `rank_by` is within this, e.g. "5%".
    pub precision: Option<String>,
    /// The time the run may spend reaching `precision`, e.g. "8m".
    pub budget: Option<String>,
    /// A cell measured twice per round to show the machine's noise floor, e.g. "rust/actix hello".
    pub aa: Option<String>,
    /// Find each cell's SLO capacity for this objective, e.g. "p99<=10ms" (errors below 0.1%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<String>,
    /// Latency at fixed fractions of each cell's measured capacity, in the open model, e.g.
    /// `{ percent = [25, 50, 75, 90, 100], step = "1s" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_under_load: Option<crate::slo::UnderLoadOption>,
    /// A few cells measured far longer than the others, for memory and throughput over time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<Soak>,
    /// The article this study reproduces, its tables as data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub article: Option<Article>,
    /// What the measurements should show, each judged after the run.
    #[serde(default)]
    pub claims: Vec<Claim>,
}

impl Study {
    /// The study of a run from flags alone: the given stacks and nothing else (defaults and flags
    /// set the rest; no claims).
    pub fn adhoc(stacks: Vec<String>) -> Study {
        Study {
            name: "adhoc".into(),
            description: String::new(),
            stacks,
            scenarios: vec![],
            scenario_files: vec![],
            variants: vec![],
            workers: vec![],
            stack_workers: Default::default(),
            trials: None,
            schedule: None,
            launches: None,
            duration: None,
            warmup: None,
            connections: None,
            rate: None,
            ramp: None,
            conn_ladder: None,
            requests_per_conn: None,
            streams: None,
            tls_resumption: None,
            price: None,
            pool_size: None,
            max_throughput: false,
            proxy_placement: None,
            hosts: Default::default(),
            rank_by: PrimaryMetric::default(),
            precision: None,
            budget: None,
            aa: None,
            slo: None,
            latency_under_load: None,
            soak: None,
            article: None,
            claims: vec![],
        }
    }

    /// Reads and checks a study file; every problem says where and how to fix it.
    pub fn load(path: &Path) -> Result<Study, InputError> {
        let err = |problem: String, hint: &str| InputError { what: path.display().to_string(), problem, hint: hint.into() };
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(format!("cannot read: {e}"), "give the path of a study file, e.g. studies/quick.toml"))?;
        let study: Study = toml::from_str(&text).map_err(|e| err(e.to_string().trim().to_string(), "compare with studies/quick.toml"))?;
        study.check().map_err(|(problem, hint)| err(problem, hint))?;
        Ok(study)
    }

    /// What is wrong with the study beyond its syntax, with the fix.
    fn check(&self) -> Result<(), (String, &'static str)> {
        if let Some(p) = &self.precision {
            parse_percent(p).map_err(|e| (format!("`precision`: {e}"), "write e.g. precision = \"5%\""))?;
        }
        if let Some(slo) = &self.slo {
            slo.parse::<crate::slo::Slo>().map_err(|e| (format!("`slo`: {}", e.problem()), e.hint()))?;
        }
        if let Some(aa) = &self.aa {
            let cell: AaCell = aa.parse().map_err(|e| (format!("`aa`: {e}"), "name one of the study's cells"))?;
            if !self.stacks.contains(&cell.stack) {
                return Err((format!("`aa` names `{}`, which the study does not run", cell.stack), "add it to `stacks` or fix `aa`"));
            }
        }
        for (field, v) in [("duration", &self.duration), ("warmup", &self.warmup), ("budget", &self.budget)] {
            if let Some(v) = v {
                parse_duration(v).map_err(|e| (format!("`{field}`: {e}"), "write e.g. \"10s\""))?;
            }
        }
        for (stack, counts) in &self.stack_workers {
            if !self.stacks.contains(stack) {
                return Err((
                    format!("`stack_workers` names `{stack}`, which the study does not run"),
                    "add it to `stacks` or remove the line",
                ));
            }
            if counts.is_empty() || counts.contains(&0) {
                return Err((format!("`stack_workers.\"{stack}\"` must list worker counts of 1 or more"), "write e.g. [64]"));
            }
        }
        if let Some(l) = &self.conn_ladder {
            if l.is_empty() || l.contains(&0) || self.ramp.is_some() || self.rate.is_some() {
                return Err((
                    "`conn_ladder` needs connection counts of 1 or more, and no `rate` or `ramp`".into(),
                    "write e.g. conn_ladder = [1, 16, 64, 256]",
                ));
            }
        }
        if let Some(u) = &self.latency_under_load {
            u.resolve().map_err(|e| {
                (format!("`latency_under_load`: {e}"), "write e.g. latency_under_load = { percent = [25, 50, 75, 90, 100], step = \"1s\" }")
            })?;
        }
        self.check_soak()?;
        self.check_claims()?;
        self.check_article()
    }

    fn check_soak(&self) -> Result<(), (String, &'static str)> {
        let Some(soak) = &self.soak else { return Ok(()) };
        if let Some(p) = soak.problem() {
            return Err(p);
        }
        // Soak cells are planned on their own: their variants need not be among `variants`.
        soak.cells.iter().try_for_each(|cell| self.check_cell("`soak.cells`", cell))
    }

    fn check_claims(&self) -> Result<(), (String, &'static str)> {
        for c in &self.claims {
            if let Some((problem, hint)) = c.problem() {
                return Err((format!("claim `{}`: {problem}", c.statement), hint));
            }
            for cell in c.check.cells().iter().filter(|_| c.testable) {
                self.check_cell(&format!("claim `{}`", c.statement), cell)?;
            }
        }
        Ok(())
    }

    fn check_article(&self) -> Result<(), (String, &'static str)> {
        let Some(a) = &self.article else { return Ok(()) };
        if !self.stacks.contains(&a.reference) {
            return Err((format!("the article's reference `{}` is not a stack of the study", a.reference), "name one of `stacks`"));
        }
        for t in &a.tables {
            let figures =
                t.figures().map_err(|e| (format!("article table `{}`: {e}", t.title), "see the tables of studies/seed-000-rest.toml"))?;
            for cell in figures.iter().filter_map(|f| f.cell.as_ref()) {
                self.check_cell(&format!("article table `{}`", t.title), cell)?;
            }
        }
        Ok(())
    }

    /// A cell named by a claim or a figure must be one the study measures.
    fn check_cell(&self, what: &str, cell: &CellRef) -> Result<(), (String, &'static str)> {
        if !self.stacks.contains(&cell.stack) {
            return Err((
                format!("{what} names `{}`, which the study does not run", cell.stack),
                "add the stack to `stacks` or fix the name",
            ));
        }
        match &cell.scenario {
            Some(s) if !self.scenarios.is_empty() && !self.scenarios.contains(s) => {
                Err((format!("{what} names scenario `{s}`, which the study does not measure"), "add it to `scenarios` or fix the name"))
            }
            Some(_) => Ok(()),
            None => Err((format!("{what}: a cell has no scenario"), "give it a `scenario`")),
        }
    }

    /// The worker counts of the study's cells on a machine with `server_cpus` server CPUs: `workers`
    /// (1 when unset; "all" resolved, duplicates dropped), with `stack_workers` replacing them for the
    /// stacks it names.
    pub fn worker_counts(&self, server_cpus: u32) -> WorkerCounts {
        let mut default: Vec<u32> = self.workers.iter().map(|w| w.resolve(server_cpus)).collect();
        default.sort_unstable();
        default.dedup();
        if default.is_empty() {
            default.push(1);
        }
        WorkerCounts { default, per_stack: self.stack_workers.clone() }
    }

    /// The trial duration (checked by `load`).
    pub fn duration(&self) -> Option<Duration> {
        self.duration.as_deref().and_then(|d| parse_duration(d).ok())
    }

    /// The warmup (checked by `load`).
    pub fn warmup(&self) -> Option<Duration> {
        self.warmup.as_deref().and_then(|d| parse_duration(d).ok())
    }

    /// The time budget for reaching `precision` (checked by `load`).
    pub fn budget(&self) -> Option<Duration> {
        self.budget.as_deref().and_then(|d| parse_duration(d).ok())
    }

    /// The precision target as a fraction (checked by `load`).
    pub fn precision(&self) -> Option<f64> {
        self.precision.as_deref().and_then(|p| parse_percent(p).ok())
    }

    /// The SLO objective (checked by `load`).
    pub fn slo(&self) -> Option<crate::slo::Slo> {
        self.slo.as_deref().and_then(|s| s.parse().ok())
    }

    /// Latency under load (checked by `load`).
    pub fn latency_under_load(&self) -> Option<crate::slo::UnderLoad> {
        self.latency_under_load.as_ref().and_then(|u| u.resolve().ok())
    }

    /// The A/A cell (checked by `load`).
    pub fn aa(&self) -> Option<AaCell> {
        self.aa.as_deref().and_then(|a| a.parse().ok())
    }
}

/// The worker counts of a run: one list for every stack, or another for some stacks (a prefork
/// server that holds one keep-alive connection per process needs a process per connection, where a
/// threaded or evented one serves them all with one worker).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerCounts {
    /// Counts for every stack without a list of its own.
    pub default: Vec<u32>,
    /// Stack name -> its own list, replacing `default` for that stack.
    pub per_stack: std::collections::BTreeMap<String, Vec<u32>>,
}

impl WorkerCounts {
    /// The same counts for every stack.
    pub fn same(counts: &[u32]) -> WorkerCounts {
        WorkerCounts { default: counts.to_vec(), per_stack: std::collections::BTreeMap::new() }
    }

    /// The counts `stack` is measured with.
    pub fn for_stack(&self, stack: &str) -> &[u32] {
        self.per_stack.get(stack).unwrap_or(&self.default)
    }
}

#[cfg(test)]
mod article_tests;
#[cfg(test)]
mod judge_tests;
#[cfg(test)]
mod study_tests;
