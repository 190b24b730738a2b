//! The measured lifecycle of every cell: verify each stack variant, then for each trial (stacks
//! interleaved so drift hits all alike) start -> ready -> warm-up -> measure while sampling the
//! server's process tree -> stop -> store. Every step is bounded; a failing cell never stops the run.

use crate::contract::verify::{self, LiveData, Target};
use crate::error::LabError;
use crate::host::noise::{Measured, NoiseProbe};
use crate::host::process::{free_port, Launch, ServerProcess};
use crate::host::sampler::{self, Sampler, SAMPLE_INTERVAL};
use crate::run::cells::Cell;
use crate::services::{postgres::SqliteFile, ServiceContext, Services};
use crate::stacks::manifest::{Database, Stack, StackKind, Variant};
use bakeoff_model::goal::PrimaryMetric;
use bakeoff_model::noise::TrialNoise;
use bakeoff_model::results::{CellKey, CheckScope, LabWarning, ProcessSample, ResultSink, RunInfo, StoreKind, TrialRecord, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::{auto_ladders, RampSetting};
use bakeoff_model::RunStatus;
use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How every cell is loaded and measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadSettings {
    #[serde(serialize_with = "as_secs")]
    pub duration: Duration,
    #[serde(serialize_with = "as_secs")]
    pub warmup: Duration,
    pub connections: u32,
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
    pub requests_per_conn: Option<u64>,
    #[serde(serialize_with = "as_secs")]
    pub timeout: Duration,
    /// Rounds every cell gets; with `precision`, the least it gets.
    pub trials: u32,
    pub server_cpus: Vec<usize>,
    pub client_cpus: Vec<usize>,
    /// Where the upstream nginx runs: beside the proxy, or beside the load generator.
    pub proxy_placement: bakeoff_model::study::ProxyPlacement,
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
}

/// POOL_SIZE when neither a study nor a flag sets it.
pub const DEFAULT_POOL_SIZE: u32 = 8;

/// What a run reports as it goes.
pub enum Event<'a> {
    /// A stack's setup finished (cached, done or failed).
    SetupFinished {
        stack: &'a str,
        outcome: &'a Result<crate::stacks::setup::SetupOutcome, LabError>,
    },
    RunStarting {
        run: &'a RunInfo,
        cells: usize,
        trials: u32,
        scratch: &'a Path,
    },
    /// The scratch folder (fixtures, server logs) is kept: something failed, or it was asked for.
    ScratchKept(&'a Path),
    ServiceStarting(&'a str),
    /// A cell's ladder for `--ramp auto`, from its closed-model maximum measured first.
    RampCalibrated {
        cell: &'a CellKey,
        ramp: &'a bakeoff_load::Ramp,
        max: f64,
    },
    CeilingMeasured(&'a bakeoff_model::results::CeilingRecord),
    CeilingFailed {
        store: StoreKind,
        error: String,
    },
    Verified(&'a VerifyReport),
    TrialStarting {
        cell: &'a CellKey,
        trial: u32,
        trials: u32,
    },
    TrialDone(&'a TrialRecord),
    /// The CPU-cost pairs run again on the warm server after a cell's first trial; a failed one is
    /// also the trial's `cost_after_load` warning.
    CostRechecked {
        cell: &'a CellKey,
        checks: &'a [bakeoff_model::results::Check],
    },
    /// Another round for the cells whose interval is still wider than the precision target.
    PrecisionRound {
        round: u32,
        cells: usize,
    },
    /// The budget would be overrun by another round; `pending` cells missed the target.
    BudgetSpent {
        pending: usize,
    },
    CellFailed {
        cell: &'a CellKey,
        error: String,
    },
    /// The server answered but its process tree was still busy when its ready timeout ran out
    /// (`cores`: CPU use over the last quarter second); the warm-up starts anyway.
    StillBusyAfterStart {
        stack: &'a str,
        cores: f64,
    },
}

pub struct Lab<'a> {
    pub project_root: PathBuf,
    pub run_dir: PathBuf,
    pub data_dir: PathBuf,
    pub external_docstore: Option<String>,
    pub settings: LoadSettings,
    pub sink: &'a mut dyn ResultSink,
    pub events: &'a mut dyn FnMut(Event<'_>),
    pub cancel: &'a AtomicBool,
    pub services: Services,
}

/// The outcome of a run: verifications and how many trials were stored.
pub struct RunOutcome {
    pub verifications: Vec<VerifyReport>,
    pub trials_stored: usize,
    pub failed_cells: Vec<(CellKey, String)>,
    pub interrupted: bool,
}

impl<'a> Lab<'a> {
    fn service_ctx(&self) -> ServiceContext<'_> {
        self.service_ctx_on(&self.settings.server_cpus)
    }

    fn service_ctx_on<'c>(&'c self, cpus: &'c [usize]) -> ServiceContext<'c> {
        ServiceContext {
            project_root: &self.project_root,
            run_dir: &self.run_dir,
            data_dir: &self.data_dir,
            cpus,
            external_docstore: self.external_docstore.as_deref(),
        }
    }

    /// The CPUs of the upstream nginx: the server's, or with `own-cpu` placement the client's.
    fn upstream_cpus(&self) -> &[usize] {
        if self.settings.proxy_placement.upstream_on_client() {
            &self.settings.client_cpus
        } else {
            &self.settings.server_cpus
        }
    }

    fn ensure_services(&mut self, stack: &Stack, scenarios: &[Scenario], variant: &Variant) -> Result<(), LabError> {
        let mut kinds: Vec<_> = scenarios.iter().flat_map(|&s| stack.services_for(s, variant)).collect();
        kinds.sort();
        kinds.dedup();
        for k in &kinds {
            let running = match k {
                bakeoff_model::scenario::ServiceKind::Postgres => self.services.postgres.is_some(),
                bakeoff_model::scenario::ServiceKind::Docstore => self.services.docstore.is_some(),
                bakeoff_model::scenario::ServiceKind::Nginx => self.services.nginx.is_some(),
            };
            if !running {
                (self.events)(Event::ServiceStarting(k.id()));
            }
        }
        let mut services = std::mem::take(&mut self.services);
        let (upstream, others): (Vec<_>, Vec<_>) = kinds.into_iter().partition(|k| *k == bakeoff_model::scenario::ServiceKind::Nginx);
        let result = services
            .ensure(&others, &self.service_ctx())
            .and_then(|()| services.ensure(&upstream, &self.service_ctx_on(self.upstream_cpus())));
        self.services = services;
        result
    }

    /// The environment a stack starts with.
    fn stack_env(&self, stack: &Stack, variant: &Variant, port: u16, workers: u32, cell_dir: &Path) -> BTreeMap<String, String> {
        let mut env = self.services.env();
        env.extend(crate::stacks::setup::build_env(&stack.name));
        env.insert("PORT".into(), port.to_string());
        env.insert("WORKERS".into(), workers.to_string());
        env.insert("POOL_SIZE".into(), self.settings.pool_size.to_string());
        env.insert("DATA_DIR".into(), self.data_dir.display().to_string());
        env.insert("RUN_DIR".into(), cell_dir.display().to_string());
        let db = match (variant.database, &self.services.postgres) {
            (Some(Database::Postgres), Some(pg)) => pg.url.clone(),
            _ => format!("sqlite://{}", cell_dir.join("products.sqlite").display()),
        };
        env.insert("DATABASE_URL".into(), db);
        env.extend(variant.env.clone());
        env
    }

    fn cell_dir(&self, label: &str) -> PathBuf {
        self.run_dir.join("cells").join(label)
    }

    /// A new directory for one start of `stack` [`variant`], and its label: `<n>-<stack>-<variant>`,
    /// n counting the run's starts. Verification and every trial get labels of this one form, so
    /// nothing a stack sees (RUN_DIR, the SQLite path in DATABASE_URL) says whether it is being
    /// verified or measured, nor which scenario the load will request; [`Lab::note_cell`] records
    /// what each start was for.
    fn new_cell(&self, stack: &Stack, variant: &Variant) -> String {
        let cells = self.run_dir.join("cells");
        let started = std::fs::read_dir(&cells).map(|d| d.filter_map(Result::ok).filter(|e| e.path().is_dir()).count()).unwrap_or(0);
        let label = format!("{:03}-{}-{}", started + 1, stack.name.replace('/', "-"), variant.name);
        std::fs::create_dir_all(self.cell_dir(&label)).ok();
        label
    }

    /// Appends what the start `label` was for to the run's index of cell directories
    /// (`cells/index.txt`, beside their server logs), once its server has stopped, so a running
    /// stack never finds what its own start is for.
    fn note_cell(&self, label: &str, what: &str) {
        use std::io::Write;
        let index = self.run_dir.join("cells").join("index.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(index) {
            let _ = writeln!(f, "{label}\t{what}");
        }
    }

    /// Starts the stack (a baseline has no process: its address is the upstream's).
    fn start_stack(
        &mut self,
        stack: &Stack,
        variant: &Variant,
        workers: u32,
        label: &str,
    ) -> Result<(Option<ServerProcess>, SocketAddr), LabError> {
        if stack.kind == StackKind::Baseline {
            let nginx = self
                .services
                .nginx
                .as_ref()
                .ok_or_else(|| LabError::Selection(format!("{} is a baseline but no upstream runs", stack.name)))?;
            return Ok((None, nginx.addr));
        }
        let cell_dir = self.cell_dir(label);
        // Each cell gets its own copy of the SQLite database, so a variant that changes the file
        // (WAL mode) or a crashed probe cannot leak into the next cell.
        let db = cell_dir.join("products.sqlite");
        std::fs::copy(self.data_dir.join("products.sqlite"), &db).map_err(|e| LabError::Input {
            what: db.display().to_string(),
            problem: format!("cannot copy the SQLite fixture: {e}"),
            hint: "check free space in the temporary directory".into(),
        })?;
        let port = free_port();
        let env = self.stack_env(stack, variant, port, workers, &cell_dir);
        let mut server = ServerProcess::start(Launch {
            name: &stack.name,
            command: &stack.start_command,
            dir: &stack.dir,
            env: &env,
            cpus: &self.settings.server_cpus,
            log: cell_dir.join("server.log"),
        })?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        // Ready means answering: an HTTP stack's `/` (a 404 counts), or nginx's smallest body
        // through a proxy, so a proxy that listens but cannot reach its upstream is not ready.
        let probe = if stack.kind == StackKind::Proxy { "/bytes/12" } else { "/" };
        let answered = server.wait_answering(addr, probe, stack.ready_timeout)?;
        if let Some(cores) = server.wait_quiet(stack.ready_timeout.saturating_sub(answered)) {
            (self.events)(Event::StillBusyAfterStart { stack: &stack.name, cores });
        }
        Ok((Some(server), addr))
    }

    /// Starts one stack variant and checks every chosen scenario's contract.
    pub fn verify_variant(&mut self, stack: &Stack, variant: &Variant, scenarios: &[Scenario], workers: u32) -> VerifyReport {
        let failed = |reason: String| VerifyReport {
            stack: stack.name.clone(),
            variant: variant.name.clone(),
            checks: vec![bakeoff_model::results::Check {
                scenario: CheckScope::Stack,
                verdict: bakeoff_model::results::Verdict::Fail,
                what: "the stack starts and listens".into(),
                url: String::new(),
                reason,
            }],
        };
        if let Err(e) = self.ensure_services(stack, scenarios, variant) {
            return failed(e.to_string());
        }
        let label = self.new_cell(stack, variant);
        let ids: Vec<&str> = scenarios.iter().map(|s| s.id()).collect();
        let what = format!("verify {} [{}] ({}), WORKERS={workers}", stack.name, variant.name, ids.join(", "));
        let (server, addr) = match self.start_stack(stack, variant, workers, &label) {
            Ok(s) => s,
            Err(e) => {
                self.note_cell(&label, &what);
                return failed(e.to_string());
            }
        };
        let server_pid = server.as_ref().map(ServerProcess::pid);
        let mut report = self.with_target(stack, variant, &label, addr, scenarios, server_pid, verify::verify);
        let Some(mut server) = server else {
            self.note_cell(&label, &what);
            return report;
        };
        if let Some(status) = server.exited() {
            report.checks.push(bakeoff_model::results::Check {
                scenario: CheckScope::Stack,
                verdict: bakeoff_model::results::Verdict::Fail,
                what: "the server stays up during verification".into(),
                url: format!("http://{addr}/"),
                reason: format!("it exited with {status}; see {}", server.log.display()),
            });
        }
        for left in server.stop(Duration::from_secs(5)) {
            report.checks.push(bakeoff_model::results::Check {
                scenario: CheckScope::Stack,
                verdict: bakeoff_model::results::Verdict::Fail,
                what: "nothing the stack started outlives its stop".into(),
                url: format!("http://{addr}/"),
                reason: format!(
                    "{left} was still running after SIGTERM and SIGKILL to the server's process group (it left the group, e.g. \
                     with setsid); the lab killed it. Keep every process in the group and stop them all on SIGTERM"
                ),
            });
        }
        self.note_cell(&label, &what);
        report
    }

    /// Calls `f` with the verifier's view of a running stack: its address, scenarios, process and
    /// the live-data handles of its stores.
    #[allow(clippy::too_many_arguments)]
    fn with_target<R>(
        &self,
        stack: &Stack,
        variant: &Variant,
        label: &str,
        addr: SocketAddr,
        scenarios: &[Scenario],
        server_pid: Option<u32>,
        f: impl FnOnce(&Target<'_>) -> R,
    ) -> R {
        let sqlite = match &stack.products_probe {
            Some(p) => SqliteFile { path: self.cell_dir(label).join(&p.sqlite), key: p.key.clone() },
            None => SqliteFile { path: self.cell_dir(label).join("products.sqlite"), key: "id".into() },
        };
        let products: Option<&dyn LiveData> = match variant.database {
            Some(Database::Postgres) => self.services.postgres.as_ref().map(|p| p as &dyn LiveData),
            _ => Some(&sqlite),
        };
        f(&Target {
            stack: &stack.name,
            variant: &variant.name,
            addr,
            scenarios,
            products,
            documents: self.services.docstore.as_ref().map(|d| d as &dyn LiveData),
            upstream: self.services.nginx.as_ref().map(|n| n.addr),
            server_pid,
            client_cpus: &self.settings.client_cpus,
            warmup: stack.warmup.unwrap_or_default(),
        })
    }

    /// After the measurement, on the warm server (if it still runs): the live-data probes again (a
    /// cache that starts late is stale now), after the cell's first trial the CPU-cost pairs again
    /// (work that stops after N requests costs nothing now; once per cell bounds what it costs),
    /// then the stop, which names any process left behind.
    fn after_measuring(
        &self,
        cell: &Cell<'_>,
        trial: u32,
        label: &str,
        addr: SocketAddr,
        server: Option<&mut ServerProcess>,
        died: bool,
    ) -> (Vec<LabWarning>, Vec<bakeoff_model::results::Check>) {
        let probes = if died {
            Vec::new()
        } else {
            self.with_target(cell.stack, cell.variant, label, addr, &[cell.scenario], None, verify::probe_again)
        };
        let mut warnings: Vec<LabWarning> = probes
            .into_iter()
            .filter(|c| c.verdict == bakeoff_model::results::Verdict::Fail)
            .map(|c| LabWarning::StaleAfterLoad { scenario: cell.scenario, reason: c.reason })
            .collect();
        let mut again = Vec::new();
        if trial == 1 && !died {
            let pid = server.as_deref().map(ServerProcess::pid);
            again = self.with_target(cell.stack, cell.variant, label, addr, &[cell.scenario], pid, verify::cost_again);
            // A warning (the machine could not measure, or the rounds disagree) passes, as in
            // verification: only a failure says the work stopped.
            warnings.extend(
                again
                    .iter()
                    .filter(|c| c.verdict == bakeoff_model::results::Verdict::Fail)
                    .map(|c| LabWarning::CostAfterLoad { scenario: cell.scenario, reason: c.reason.clone() }),
            );
        }
        if let Some(s) = server {
            let left = s.stop(Duration::from_secs(5));
            if !left.is_empty() {
                warnings.push(LabWarning::ProcessesLeftBehind { processes: left.iter().map(|l| l.to_string()).collect() });
            }
        }
        (warnings, again)
    }

    /// Measures one trial of one cell.
    pub fn measure(&mut self, cell: &Cell<'_>, trial: u32) -> Result<TrialRecord, LabError> {
        let label = self.new_cell(cell.stack, cell.variant);
        let measured = self.measure_in(cell, trial, &label);
        // The server has stopped (or was dropped, which stops it) on every path out.
        self.note_cell(&label, &format!("trial {trial} of {}", cell.key().label()));
        measured
    }

    /// One trial in the cell directory `label`.
    fn measure_in(&mut self, cell: &Cell<'_>, trial: u32, label: &str) -> Result<TrialRecord, LabError> {
        let begun = Instant::now();
        self.ensure_services(cell.stack, &[cell.scenario], cell.variant)?;
        let key = cell.key();
        let trial_cpus: Vec<usize> = self.settings.server_cpus.iter().chain(&self.settings.client_cpus).copied().collect();
        let noisy = crate::host::quiet::wait(&trial_cpus, crate::host::quiet::MAX_WAIT);
        let (mut server, addr) = self.start_stack(cell.stack, cell.variant, cell.workers, label)?;
        // A baseline's measured process is the upstream itself.
        let measured_pid = match (&server, &self.services.nginx) {
            (Some(s), _) => s.pid(),
            (None, Some(n)) => n.pid(),
            (None, None) => unreachable!("start_stack checked the upstream"),
        };
        let warmup = self.settings.warmup.max(cell.stack.warmup.unwrap_or_default());
        let plan = self.load_plan(cell, addr, warmup)?;
        let started_at = bakeoff_model::now_rfc3339();
        let zero = Instant::now() + warmup;
        let sampler = Sampler::start(measured_pid, zero, SAMPLE_INTERVAL, &self.settings.client_cpus);
        let services = self.services.pids();
        let services_before: Vec<f64> = services.iter().map(|&p| sampler::tree_cpu_seconds(p)).collect();
        let probe = NoiseProbe::start();
        let mut load = bakeoff_load::run_with_cancel(&plan, self.cancel);
        // An SLO search starts from the closed-model maximum, so an open schedule measures it too.
        let wants_max = self.settings.max_throughput || self.settings.slo.is_some();
        if let (Ok(report), true) = (&mut load, wants_max && plan.is_open()) {
            self.append_closed_max(report, cell, addr)?;
        }
        let samples = sampler.finish();
        let noise = self.trial_noise(probe, measured_pid, &services, &services_before, &samples);
        // After the measurement's CPU and noise are accounted, on the same warm server.
        let slo = match (&load, &self.settings.slo) {
            (Ok(report), Some(objective)) => self.search_slo(objective, cell, addr, report)?,
            _ => None,
        };
        let died = server.as_mut().and_then(|s| s.exited());
        let (after, rechecked) = self.after_measuring(cell, trial, label, addr, server.as_mut(), died.is_some());
        if !rechecked.is_empty() {
            (self.events)(Event::CostRechecked { cell: &key, checks: &rechecked });
        }
        let load = load.map_err(|e| LabError::Input {
            what: key.label(),
            problem: format!("load generator: {e}"),
            hint: "check the load flags".into(),
        })?;
        let requests: u64 = load.steps.iter().map(|s| s.requests).sum();
        let server_usage = sampler::usage(&samples, requests);
        let mut warnings = Vec::new();
        if let Some(status) = died {
            warnings.push(LabWarning::ServerDied { exit: status.to_string() });
        }
        warnings.extend(noise_warnings(&noise));
        warnings.extend(after);
        if let Some(cores) = noisy {
            warnings.push(LabWarning::NotQuietBeforeTrial { cpu_percent: cores * 100.0 });
        }
        if let Some(reproduces) = &cell.variant.reproduces {
            warnings.push(LabWarning::DeliberateBug { reproduces: reproduces.clone() });
        }
        if let Some(fit) = bakeoff_model::growth::rss_fit(&samples).filter(|f| f.is_growth()) {
            warnings.push(LabWarning::MemoryGrowth { mib_per_min: fit.slope });
        }
        // A baseline's measured process is the upstream nginx, which WORKERS does not size.
        if cell.stack.kind != StackKind::Baseline {
            let cores_used = server_usage.cpu_percent / 100.0;
            warnings.extend(LabWarning::workers_check(cell.workers, cores_used, self.settings.server_cpus.len() as u32));
        }
        let elapsed_s = begun.elapsed().as_secs_f64();
        Ok(TrialRecord {
            run_id: String::new(),
            cell: key,
            trial,
            started_at,
            load,
            server: server_usage,
            samples,
            warnings,
            noise: Some(noise),
            elapsed_s,
            slo,
        })
    }

    /// The trial's noise: the measured tree is the server's plus the services' it uses (their CPU
    /// is the cell's work, counted on the CPUs each runs on: nginx on the client's with `own-cpu`
    /// placement); everything else on the server's or client's CPUs is noise.
    fn trial_noise(
        &self,
        probe: NoiseProbe,
        leader: u32,
        services: &[u32],
        services_before: &[f64],
        samples: &[ProcessSample],
    ) -> TrialNoise {
        let server_cpu = samples.last().map_or(0.0, |s| s.cpu_s) - samples.first().map_or(0.0, |s| s.cpu_s);
        let upstream = self.services.nginx.as_ref().map(|n| n.pid()).filter(|_| self.settings.proxy_placement.upstream_on_client());
        let (mut on_server, mut on_client) = (0.0, 0.0);
        let mut add = |pid: u32, cpu_s: f64| if Some(pid) == upstream { on_client += cpu_s } else { on_server += cpu_s };
        add(leader, server_cpu);
        // A baseline's measured tree is the upstream itself: counted once.
        for (&pid, before) in services.iter().zip(services_before).filter(|(&p, _)| p != leader) {
            add(pid, sampler::tree_cpu_seconds(pid) - before);
        }
        let mut pids: HashSet<u32> = sampler::group_members(leader).into_iter().collect();
        pids.extend(services.iter().flat_map(|&p| sampler::group_members(p)));
        probe.finish(&Measured {
            server_cpus: &self.settings.server_cpus,
            client_cpus: &self.settings.client_cpus,
            server_cpu_s: on_server,
            client_cpu_s: on_client,
            server_pids: &pids,
        })
    }

    /// Runs the closed model at the same connection count right after an open schedule and adds
    /// its step (label "max", no target rate) to the report: the cell's maximum throughput.
    fn append_closed_max(&self, report: &mut bakeoff_load::LoadReport, cell: &Cell<'_>, addr: SocketAddr) -> Result<(), LabError> {
        let mut closed = self.settings.clone();
        closed.ramp = None;
        closed.rate = None;
        let plan = self.plan_with(&closed, cell, addr, Duration::ZERO)?;
        let max = bakeoff_load::run_with_cancel(&plan, self.cancel).map_err(|e| LabError::Input {
            what: cell.key().label(),
            problem: format!("load generator: {e}"),
            hint: "check the load flags".into(),
        })?;
        for mut step in max.steps {
            step.label = "max".into();
            report.steps.push(step);
        }
        report.warnings.extend(max.warnings);
        report.client.cpu_user_s += max.client.cpu_user_s;
        report.client.cpu_system_s += max.client.cpu_system_s;
        Ok(())
    }

    fn load_plan(&self, cell: &Cell<'_>, addr: SocketAddr, warmup: Duration) -> Result<bakeoff_load::LoadPlan, LabError> {
        match (cell.soak, &cell.ramp) {
            // A soak cell measures its own length, in one closed or open step.
            (Some(soak), _) => self.plan_with(&LoadSettings { duration: soak.duration, ..self.settings.clone() }, cell, addr, warmup),
            // A ladder calibrated for this cell (`--ramp auto`).
            (None, Some(r)) => {
                self.plan_with(&LoadSettings { ramp: Some(RampSetting::Ladder(r.clone())), ..self.settings.clone() }, cell, addr, warmup)
            }
            (None, None) => self.plan_with(&self.settings, cell, addr, warmup),
        }
    }

    pub(crate) fn plan_with(
        &self,
        s: &LoadSettings,
        cell: &Cell<'_>,
        addr: SocketAddr,
        warmup: Duration,
    ) -> Result<bakeoff_load::LoadPlan, LabError> {
        let url = format!("http://{addr}{}", cell.scenario.load_path());
        let mut b = bakeoff_load::LoadPlan::builder(&url)
            .connections(s.connections)
            .threads(s.client_threads)
            .duration(s.duration)
            .warmup(warmup)
            .timeout(s.timeout)
            .pin_cpus(s.client_cpus.clone());
        if let Some(rate) = s.rate {
            b = b.rate(rate);
        }
        match &s.ramp {
            Some(RampSetting::Ladder(ramp)) => b = b.ramp(ramp.clone()),
            Some(RampSetting::Auto) => {
                return Err(LabError::Selection("`--ramp auto` is calibrated before any cell is measured; this is a bug".into()))
            }
            None => {}
        }
        if let Some(l) = &s.conn_ladder {
            b = b.conn_ladder(l.clone());
        }
        if let Some(k) = s.requests_per_conn {
            b = b.requests_per_conn(k);
        }
        b.build().map_err(|e| LabError::Input {
            what: "load settings".into(),
            problem: e.to_string(),
            hint: "check --connections, --duration and --rate".into(),
        })
    }

    /// Verifies every stack variant of `cells`, then measures the passing cells `trials` times,
    /// interleaving cells within each trial round; stores every trial as soon as it is measured.
    pub fn run(&mut self, run: &RunInfo, cells: &[Cell<'_>]) -> anyhow::Result<RunOutcome> {
        let started = Instant::now();
        self.sink.begin_run(run)?;
        self.sink.record_what_ran(&run.id, &crate::run::what_ran::what_ran(&self.project_root, cells, self.settings.pool_size))?;
        let mut outcome = RunOutcome { verifications: Vec::new(), trials_stored: 0, failed_cells: Vec::new(), interrupted: false };
        let mut measurable: Vec<&Cell<'_>> = Vec::new();
        let mut verified: BTreeMap<(String, String), VerifyReport> = BTreeMap::new();
        for cell in cells {
            if self.cancel.load(Ordering::Relaxed) {
                break;
            }
            let id = (cell.stack.name.clone(), cell.variant.name.clone());
            if !verified.contains_key(&id) {
                let scenarios: Vec<Scenario> =
                    cells.iter().filter(|c| c.stack.name == id.0 && c.variant.name == id.1).map(|c| c.scenario).collect();
                let report = self.verify_variant(cell.stack, cell.variant, &dedup(scenarios), cell.workers);
                self.sink.record_verification(&run.id, &report)?;
                (self.events)(Event::Verified(&report));
                outcome.verifications.push(report.clone());
                verified.insert(id.clone(), report);
            }
            if verified[&id].passed_scenario(cell.scenario) {
                measurable.push(cell);
            }
        }
        let calibrated;
        if self.settings.ramp == Some(RampSetting::Auto) {
            calibrated = self.calibrate_ramps(&measurable, &mut outcome.failed_cells)?;
            measurable = calibrated.iter().collect();
        }
        if self.settings.ceiling && !self.cancel.load(Ordering::Relaxed) {
            self.measure_ceilings(&run.id, &measurable)?;
        }
        self.measure_rounds(run, &measurable, started, &mut outcome)?;
        outcome.interrupted |= self.cancel.load(Ordering::Relaxed);
        let status = if outcome.interrupted { RunStatus::Interrupted } else { RunStatus::Complete };
        self.sink.finish_run(&run.id, &status)?;
        Ok(outcome)
    }
}

impl Lab<'_> {
    /// Measures the backing stores' own throughput for the data scenarios' queries (the store
    /// ceiling), once per store the measured cells use. A failure is reported, not fatal: the
    /// stacks' numbers stand without it.
    fn measure_ceilings(&mut self, run_id: &str, cells: &[&Cell<'_>]) -> anyhow::Result<()> {
        use crate::services::ceiling::{self, CeilingStore};
        let products = |db: Option<Database>| {
            cells.iter().any(|c| {
                c.scenario == Scenario::Products && (c.variant.database == Some(Database::Postgres)) == (db == Some(Database::Postgres))
            })
        };
        let mut wanted: Vec<StoreKind> = Vec::new();
        if products(Some(Database::Sqlite)) {
            wanted.push(StoreKind::Sqlite);
        }
        if products(Some(Database::Postgres)) {
            wanted.push(StoreKind::Postgres);
        }
        if cells.iter().any(|c| c.scenario == Scenario::Document) {
            wanted.push(StoreKind::Docstore);
        }
        let sqlite = self.data_dir.join("products.sqlite");
        // A soak's long duration is for the stacks: the store's own rate is known within seconds.
        let duration = self.settings.duration.min(CEILING_MAX);
        let (connections, cpus) = (self.settings.connections, self.settings.server_cpus.clone());
        for kind in wanted {
            let store = match kind {
                StoreKind::Postgres => self.services.postgres.as_ref().map(CeilingStore::Postgres),
                StoreKind::Docstore => self.services.docstore.as_ref().map(CeilingStore::Docstore),
                StoreKind::Sqlite => Some(CeilingStore::Sqlite(&sqlite)),
            };
            let Some(store) = store else { continue };
            match ceiling::measure(store, run_id, connections, duration, &cpus) {
                Ok(record) => {
                    self.sink.record_ceiling(&record)?;
                    (self.events)(Event::CeilingMeasured(&record));
                }
                Err(e) => (self.events)(Event::CeilingFailed { store: kind, error: e.to_string() }),
            }
        }
        Ok(())
    }

    /// Replaces `--ramp auto` by one ladder per cell (`auto_ladders`): each cell's closed-model
    /// maximum is measured now, then all ladders share their rates and each climbs to what its cell
    /// sustains, so proxies are compared at common rates and none is measured queueing.
    fn calibrate_ramps<'c>(&mut self, cells: &[&Cell<'c>], failed: &mut Vec<(CellKey, String)>) -> anyhow::Result<Vec<Cell<'c>>> {
        if !cells.iter().any(|c| c.stack.kind == StackKind::Baseline) {
            Err(LabError::Selection(
                "`--ramp auto` compares each proxy with the baseline at common rates: add the c/baseline stack".into(),
            ))?;
        }
        let saved = self.settings.clone();
        self.settings.ramp = None;
        self.settings.rate = None;
        self.settings.max_throughput = false;
        self.settings.duration = saved.duration.min(Duration::from_secs(5));
        let mut maxima = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            let probe = self.measure(cell, 0);
            let max = probe.map(|t| t.load.steps.iter().map(|s| s.requests_per_sec).fold(0.0, f64::max));
            match max {
                Ok(m) if m >= 10.0 => maxima.push((i, m)),
                // A cell that cannot be calibrated is not measured; the others keep their ladders.
                other => {
                    let error = match other {
                        Ok(m) => format!("reached only {m:.0} req/s while calibrating `--ramp auto`; see its server log"),
                        Err(e) => format!("calibrating `--ramp auto`: {e}"),
                    };
                    (self.events)(Event::CellFailed { cell: &cell.key(), error: error.clone() });
                    failed.push((cell.key(), error));
                }
            }
        }
        self.settings = saved;
        let step_duration = Duration::from_secs(self.settings.duration.as_secs().max(1));
        let ladders = auto_ladders(&maxima, |&i| cells[i].stack.kind == StackKind::Baseline, step_duration);
        let mut out: Vec<Cell<'c>> = Vec::new();
        for ((i, ramp), (_, max)) in ladders.into_iter().zip(&maxima) {
            (self.events)(Event::RampCalibrated { cell: &cells[i].key(), ramp: &ramp, max: *max });
            out.push(Cell { ramp: Some(ramp), ..cells[i].clone() });
        }
        // What the run's settings record: the reference's ladder (each trial keeps its own rates).
        let reference = out.iter().find(|c| c.stack.kind == StackKind::Baseline).and_then(|c| c.ramp.clone());
        self.settings.ramp = reference.map(RampSetting::Ladder);
        Ok(out)
    }
}

/// The store ceiling measures at most this long, whatever the run's duration.
const CEILING_MAX: Duration = Duration::from_secs(10);

/// Other processes may use this share of one core (server and client CPUs together) before a
/// trial is flagged as noisy.
const NOISE_LIMIT_PERCENT: f64 = 10.0;
/// The hypervisor may steal this share of one core before a trial is flagged.
const STEAL_LIMIT_PERCENT: f64 = 5.0;

fn noise_warnings(noise: &TrialNoise) -> Vec<LabWarning> {
    let mut out = Vec::new();
    if noise.other_percent() > NOISE_LIMIT_PERCENT {
        out.push(LabWarning::BackgroundNoise { cpu_percent: noise.other_percent() });
    }
    if noise.steal_percent() > STEAL_LIMIT_PERCENT {
        out.push(LabWarning::CpuSteal { cpu_percent: noise.steal_percent() });
    }
    out
}

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

fn dedup(mut v: Vec<Scenario>) -> Vec<Scenario> {
    v.sort();
    v.dedup();
    v
}
