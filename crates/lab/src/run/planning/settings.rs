//! The load settings every cell of a run is measured with, as the run's provenance stores them.

use bakeoff_model::plan::goal::PrimaryMetric;
use bakeoff_model::study::RampSetting;
use std::time::Duration;

/// How every cell is loaded and measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadSettings {
    /// How long a trial's load is measured (each step's length on a connection ladder).
    #[serde(serialize_with = "as_secs")]
    pub duration: Duration,
    /// Unmeasured load before each trial's measurement (a stack's manifest may ask for more).
    #[serde(serialize_with = "as_secs")]
    pub warmup: Duration,
    /// Keep-alive connections the load generator opens to the server.
    pub connections: u32,
    /// Load generator threads, each owning its share of the connections.
    pub client_threads: u32,
    /// Open model: requests per second (latency from intended send times).
    pub rate: Option<f64>,
    /// Rate ramp: a ladder, or `auto` (proxy study): one ladder per cell from the cells' own
    /// closed-model maxima, measured first (`bakeoff_model::study::auto_ladders`).
    pub ramp: Option<RampSetting>,
    /// After an open-model schedule, also measure the closed-model maximum (one more step).
    pub max_throughput: bool,
    /// Measure the store ceiling of the data scenarios (products, document).
    pub ceiling: bool,
    /// Concurrency sweep: one measured step per connection count, each `duration` long.
    pub conn_ladder: Option<Vec<u32>>,
    /// Reconnect after this many requests on a connection (None: keep every connection open).
    pub requests_per_conn: Option<u64>,
    /// Over TLS, a new connection resumes an earlier session (false: every handshake is full).
    pub tls_resumption: bool,
    /// HTTP/2 streams in flight per connection for the h2 and h2c cells (HTTP/1.1 cells keep one).
    pub streams: u32,
    /// How long a request may go unanswered before it counts as a timeout.
    #[serde(serialize_with = "as_secs")]
    pub timeout: Duration,
    /// Rounds every cell gets (blocks, under the block schedule); with `precision`, the least.
    pub trials: u32,
    /// How measurements are ordered: paired blocks of co-resident servers, or a server per trial.
    pub schedule: bakeoff_model::plan::schedule::Schedule,
    /// Under the block schedule, how many times the servers are started over the run's blocks;
    /// None: as the allocation chooses from `components` and what a launch and a block cost.
    pub launches: Option<u32>,
    /// The paired ratios' variance parts measured by the last run of the same study, which the
    /// launches are allocated by; None: the allocation's prior.
    pub components: Option<bakeoff_model::statistics::paired::Components>,
    /// Each ranked pair's variance parts, pooled pair by pair over the study's earlier runs: what
    /// the outlook forecasts the widest ratio from. Empty: the noise probe's pair stands for each.
    #[serde(skip)]
    pub pair_parts: Vec<bakeoff_model::statistics::paired::Components>,
    /// The CPUs the stacks' servers, and the services unless placed otherwise, are held on.
    pub server_cpus: Vec<usize>,
    /// The CPUs the load generator is pinned to.
    pub client_cpus: Vec<usize>,
    /// Where the upstream nginx runs: beside the proxy, or beside the load generator.
    pub proxy_placement: bakeoff_model::study::ProxyPlacement,
    /// Where the load clients, the servers and their services run.
    pub roles: bakeoff_model::plan::place::Roles,
    /// The metric cells are ranked by, and that `precision` applies to.
    pub rank_by: PrimaryMetric,
    /// Target relative half-width of every cell's 95% interval on `rank_by` (0.05 = ±5%).
    pub precision: Option<f64>,
    /// Time from the run's start after which no more precision rounds begin.
    #[serde(serialize_with = "opt_secs")]
    pub budget: Option<Duration>,
    /// POOL_SIZE: the database connections each server process may open (docs/stacks.md).
    pub pool_size: u32,
    /// Find each cell's SLO capacity for this objective after every trial's measurement.
    pub slo: Option<bakeoff_model::slo::Slo>,
    /// What one trial's SLO capacity search may cost.
    pub slo_budget: bakeoff_model::slo::SearchBudget,
    /// Latency at fixed fractions of each trial's closed-model capacity, after its measurement.
    pub latency_under_load: Option<bakeoff_model::slo::UnderLoad>,
    /// The scenario files the run measures (`--scenario FILE`, a study's `scenario_files`), one per
    /// name, kept with the run's settings as `scenario_files` (a run stored before there could be
    /// several kept its one file as `scenario_file`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scenario_files: Vec<ScenarioFile>,
}

/// A scenario file as a run measures it: the checked file and its deck, drawn once so that every
/// cell gets the same requests; stored as its name, text and hash, so a report shows exactly what
/// was measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScenarioFile {
    /// The file's name, its scenario's `file:NAME`.
    pub name: String,
    /// FNV-1a 64 of its text.
    pub text_hash: String,
    /// Its text, whole.
    pub text: String,
    /// FNV-1a 64 of its database's files (schema and seed), when it declares a `[database]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_hash: Option<String>,
    /// The checked file.
    #[serde(skip)]
    pub workload: std::sync::Arc<bakeoff_model::workload::Workload>,
    /// Its deck, as the load generator sends it.
    #[serde(skip)]
    pub deck: bakeoff_load::Deck,
}

impl ScenarioFile {
    /// `workload` with its deck drawn; a deck that cannot be drawn (a `unique` data file with too
    /// few rows) is the error.
    pub fn new(workload: bakeoff_model::workload::Workload) -> Result<ScenarioFile, String> {
        let deck = workload.load_deck()?;
        Ok(ScenarioFile {
            name: workload.name.clone(),
            text_hash: workload.text_hash(),
            text: workload.text.clone(),
            database_hash: workload.database_hash(),
            workload: std::sync::Arc::new(workload),
            deck,
        })
    }

    /// Reads, checks and draws the file at `path`; `what` names who asked for it (`--scenario`, a
    /// study file), so the error says where to fix it, then which file and line.
    pub fn load(path: &std::path::Path, what: &str) -> Result<ScenarioFile, crate::error::LabError> {
        let bad = |problem: String, hint: String| crate::error::LabError::Input { what: what.into(), problem, hint };
        let workload = bakeoff_model::workload::Workload::load(path).map_err(|e| {
            let hint = if path.exists() {
                e.hint
            } else {
                "give the path of a scenario file, e.g. scenarios/shop.toml (a study's paths are the project root's)".into()
            };
            bad(format!("scenario file {}: {}", e.what, e.problem), hint)
        })?;
        ScenarioFile::new(workload).map_err(|e| {
            bad(
                format!("scenario file {}: the deck cannot be drawn: {e}", path.display()),
                "add rows to the data file, pick cycle or random, or lower `deck`".into(),
            )
        })
    }

    /// Its scenario.
    pub fn scenario(&self) -> bakeoff_model::scenario::Scenario {
        bakeoff_model::scenario::Scenario::File(bakeoff_model::scenario::FileScenario::named(&self.name))
    }
}

/// POOL_SIZE when neither a study nor a flag sets it.
pub const DEFAULT_POOL_SIZE: u32 = 8;

fn opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// Durations in stored settings read as seconds, e.g. `"duration": 10.0`.
fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The settings of a run that no study or flag changed: 10 s trials after 3 s of warm-up, 64
/// connections, 3 trials in blocks, the server and the client on the two halves of the CPUs.
impl LoadSettings {
    /// Whether these settings let cells share the server CPUs in blocks: a plain closed-model
    /// measurement, with no ramp, connection ladder, SLO search or closed maximum after it.
    pub(crate) fn allows_blocks(&self) -> bool {
        self.ramp.is_none() && self.conn_ladder.is_none() && self.slo.is_none() && !self.max_throughput
    }

    /// The file of a `file:NAME` scenario, when the run was given it.
    pub fn scenario_file(&self, scenario: bakeoff_model::scenario::Scenario) -> Option<&ScenarioFile> {
        self.scenario_files.iter().find(|f| f.scenario() == scenario)
    }
}

impl Default for LoadSettings {
    fn default() -> LoadSettings {
        let (server_cpus, client_cpus) = crate::machine::provenance::default_cpu_split();
        LoadSettings {
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(3),
            connections: 64,
            client_threads: 1,
            rate: None,
            ramp: None,
            max_throughput: false,
            ceiling: true,
            conn_ladder: None,
            requests_per_conn: None,
            tls_resumption: true,
            streams: 1,
            timeout: Duration::from_secs(10),
            trials: 3,
            schedule: Default::default(),
            launches: None,
            components: None,
            pair_parts: Vec::new(),
            server_cpus,
            client_cpus,
            proxy_placement: Default::default(),
            roles: Default::default(),
            rank_by: PrimaryMetric::default(),
            precision: None,
            budget: None,
            pool_size: DEFAULT_POOL_SIZE,
            slo: None,
            slo_budget: Default::default(),
            latency_under_load: None,
            scenario_files: Vec::new(),
        }
    }
}
