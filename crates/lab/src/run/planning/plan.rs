//! A run's plan, resolved below any front end: the settings merged as embedded defaults < study <
//! flags, the stacks found and selected, and the cells they make. A command line, a test or another
//! front end asks with a `RunRequest` and gets the same `RunPlan`.

use crate::error::LabError;
use crate::run::planning::cells::{self, Cell};
use crate::run::planning::files;
use crate::run::LoadSettings;
use crate::stacks::adhoc::{self, AdHocRecord, AdHocSpec};
use crate::stacks::catalog;
use crate::stacks::manifest::Stack;
use bakeoff_model::plan::goal::{AaCell, PrimaryMetric};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::Slo;
use bakeoff_model::study::{RampSetting, Study, WorkerCount, WorkerCounts};
use std::path::PathBuf;
use std::time::Duration;

/// The study a run without `--study` and without a stack selection uses.
pub(crate) const DEFAULT_STUDY: &str = "studies/quick.toml";

/// What a front end chose; empty lists leave the choice to the study (or to every stack's own).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Stacks by name (`language/name`).
    pub stacks: Vec<String>,
    /// Scenarios to measure.
    pub scenarios: Vec<Scenario>,
    /// Variants by name.
    pub variants: Vec<String>,
    /// Worker counts for every stack, replacing the study's (and its per-stack ones).
    pub workers: Vec<u32>,
}

/// Settings a front end sets over the study's; `None` keeps the study's (or the default).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// What a core costs, over the study's `price` (the reports price a million requests).
    pub price: Option<bakeoff_model::plan::price::CorePrice>,
    /// How long a trial's load is measured.
    pub duration: Option<Duration>,
    /// Unmeasured load before each trial.
    pub warmup: Option<Duration>,
    /// Keep-alive connections of the load.
    pub connections: Option<u32>,
    /// Load generator threads (the study cannot set them).
    pub client_threads: Option<u32>,
    /// Trials per cell (1 to 100).
    pub trials: Option<u32>,
    /// `--schedule`: paired blocks or a server per trial.
    pub schedule: Option<bakeoff_model::plan::schedule::Schedule>,
    /// `--launches`: server starts over the blocks.
    pub launches: Option<u32>,
    /// Open model: requests per second; replaces the study's connection ladder.
    pub rate: Option<f64>,
    /// A ladder of rates, or `auto`; replaces the study's connection ladder.
    pub ramp: Option<RampSetting>,
    /// Reconnect after this many requests on a connection.
    pub requests_per_conn: Option<u64>,
    /// `--streams`: HTTP/2 streams in flight per connection of the h2 and h2c cells.
    pub streams: Option<u32>,
    /// POOL_SIZE passed to stacks.
    pub pool_size: Option<u32>,
    /// Also measure the closed-model maximum after an open-model schedule; the study may ask for it too.
    pub max_throughput: bool,
    /// Skip the store ceiling of the data scenarios.
    pub no_ceiling: bool,
    /// CPUs for the servers.
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs for the load generator.
    pub client_cpus: Option<Vec<usize>>,
    /// Where nginx runs in a proxy study.
    pub proxy_placement: Option<bakeoff_model::study::ProxyPlacement>,
    /// `--client`: load clients on hosts of their own, over the study's.
    pub clients: Vec<bakeoff_model::plan::place::Place>,
    /// `--server-host`: where the servers start, over the study's.
    pub server_host: Option<bakeoff_model::plan::place::Place>,
    /// `--services-host`: where the services start, over the study's.
    pub services_host: Option<bakeoff_model::plan::place::Place>,
    /// One cell under load this long, one trial.
    pub soak: Option<Duration>,
    /// The metric cells are ranked by and precision applies to.
    pub rank_by: Option<PrimaryMetric>,
    /// Target relative half-width of the ranking metric's interval (0.05 = ±5%).
    pub precision: Option<f64>,
    /// Time after which no more precision rounds begin (needs a precision target).
    pub budget: Option<Duration>,
    /// The cell measured twice per round (A/A).
    pub aa: Option<AaCell>,
    /// Find each cell's SLO capacity for this objective.
    pub slo: Option<Slo>,
}

/// Everything a run is asked.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The project folder (stacks/, services/, studies/).
    pub root: PathBuf,
    /// A study file; without one, a stack selection makes an ad-hoc run (defaults < flags) and no
    /// selection runs `DEFAULT_STUDY`.
    pub study: Option<PathBuf>,
    /// The stacks, scenarios, variants and workers the front end chose.
    pub selection: Selection,
    /// Settings the front end sets over the study's.
    pub overrides: Overrides,
    /// A MongoDB URL to use instead of starting the bundled document store.
    pub docstore: Option<String>,
    /// Keep the scratch folder (fixtures, server logs) even when everything passed.
    pub keep: bool,
    /// Ad-hoc stacks (a start command each), measured after the selected ones like any stack.
    pub adhoc: Vec<AdHocSpec>,
    /// Scenario files given by the front end (`--scenario FILE`), besides the study's
    /// `scenario_files`: each becomes scenario `file:NAME` for the stacks that declare it.
    pub scenario_files: Vec<crate::run::planning::settings::ScenarioFile>,
    /// How to reach the agents of client hosts, when the run places any.
    pub host_access: Option<crate::run::roles::HostAccess>,
}

/// A resolved run: what will be set up, verified and measured, and how.
#[derive(Debug)]
pub struct RunPlan {
    pub(crate) root: PathBuf,
    pub(crate) study: Study,
    pub(crate) settings: LoadSettings,
    pub(crate) workers: WorkerCounts,
    /// The selected stacks, in selection order.
    pub(crate) stacks: Vec<Stack>,
    scenarios: Option<Vec<Scenario>>,
    variants: Option<Vec<String>>,
    pub(crate) docstore: Option<String>,
    pub(crate) keep: bool,
    /// Manifests that did not load (other stacks still run).
    pub problems: Vec<LabError>,
    /// The cell measured a second time in every round (A/A), from the flags or the study.
    pub(crate) aa: Option<AaCell>,
    /// The study's soak cells; none when `--soak` makes the whole run one soak.
    pub(crate) soak: Option<bakeoff_model::study::Soak>,
    /// What each ad-hoc stack ran, for the run's settings.
    adhoc: Vec<AdHocRecord>,
    /// How to reach the agents of client hosts.
    pub(crate) host_access: Option<crate::run::roles::HostAccess>,
}

/// Without CPUs given by flags, a run whose worker counts are all fixed numbers gives the client
/// every CPU its servers do not need (`cpu_split_for`), rather than half the machine: a client
/// held to half of a large machine is the bottleneck of any fast stack.
fn size_cpus(settings: &mut LoadSettings, study: &Study, req: &RunRequest) {
    if req.overrides.server_cpus.is_some() || req.overrides.client_cpus.is_some() {
        return;
    }
    let fixed = |w: &WorkerCount| match w {
        WorkerCount::Count(n) => Some(*n),
        WorkerCount::AllServerCpus => None,
    };
    let counts: Option<Vec<u32>> = if req.selection.workers.is_empty() {
        let per_stack = study.stack_workers.values().flatten().map(|&n| Some(n));
        study.workers.iter().map(fixed).chain(per_stack).collect()
    } else {
        Some(req.selection.workers.clone())
    };
    // No count at all is one worker, as `worker_counts` makes it.
    let Some(most) = counts.map(|c| c.into_iter().max().unwrap_or(1)) else { return };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (settings.server_cpus, settings.client_cpus) = crate::machine::provenance::cpu_split_for(cpus, most);
    if req.overrides.client_threads.is_none() {
        settings.client_threads = settings.client_cpus.len().max(1) as u32;
    }
}

/// Resolves a request: loads the study (or makes the ad-hoc one), merges the settings, finds and
/// selects the stacks, and checks that the selection makes at least one cell.
pub fn plan_run(req: RunRequest) -> Result<RunPlan, LabError> {
    let mut study = resolve_study(&req)?;
    study.price = req.overrides.price.or(study.price);
    let mut settings = merge_settings(&study, &req.overrides)?;
    size_cpus(&mut settings, &study, &req);
    let study_file = req.study.as_deref().map_or(DEFAULT_STUDY.into(), |p| p.display().to_string());
    settings.scenario_files = files::gather(&req.root, &study, &study_file, req.scenario_files.clone())?;
    let study_aa = study.aa();
    let found = catalog::discover(&req.root.join("stacks"));
    let pick = |flag: &[String], from_study: &[String]| if flag.is_empty() { from_study.to_vec() } else { flag.to_vec() };
    // The ad-hoc study lists the ad-hoc stacks too; the catalogue holds only the others.
    let adhoc_names: Vec<String> = req.adhoc.iter().map(AdHocSpec::stack_name).collect();
    let named: Vec<String> = pick(&req.selection.stacks, &study.stacks).into_iter().filter(|n| !adhoc_names.contains(n)).collect();
    let mut stacks: Vec<Stack> =
        if named.is_empty() && !req.adhoc.is_empty() { Vec::new() } else { found.select(&named)?.into_iter().cloned().collect() };
    for spec in &req.adhoc {
        let stack = adhoc::ephemeral(spec)?;
        if stacks.iter().any(|s| s.name == stack.name) {
            return Err(LabError::Input {
                what: "--name".into(),
                problem: format!("two stacks are named {}", stack.name),
                hint: "give each command its own --name".into(),
            });
        }
        stacks.push(stack);
    }
    let (scenarios, chosen_by) = if req.selection.scenarios.is_empty() {
        (study.scenarios.clone(), format!("{study_file}: `scenarios`"))
    } else {
        (req.selection.scenarios.clone(), "--scenarios".to_string())
    };
    files::check_chosen(&scenarios, &settings.scenario_files, &chosen_by)?;
    let files_from = if study.scenario_files.is_empty() { "--scenario".to_string() } else { format!("{study_file}: `scenario_files`") };
    files::check_declared(&stacks, &settings.scenario_files, &files_from)?;
    let variants = pick(&req.selection.variants, &study.variants);
    // --workers applies to every stack; without it the study's counts (and its per-stack ones).
    let workers = if req.selection.workers.is_empty() {
        study.worker_counts(settings.server_cpus.len() as u32)
    } else {
        WorkerCounts::same(&req.selection.workers)
    };
    let soak = if req.overrides.soak.is_some() { None } else { study.soak.clone() };
    let plan = RunPlan {
        root: req.root,
        study,
        settings,
        workers,
        stacks,
        scenarios: (!scenarios.is_empty()).then_some(scenarios),
        variants: (!variants.is_empty()).then_some(variants),
        docstore: req.docstore,
        keep: req.keep,
        problems: found.problems,
        aa: req.overrides.aa.clone().or(study_aa),
        soak,
        adhoc: req.adhoc.iter().map(AdHocSpec::record).collect(),
        host_access: req.host_access,
    };
    let cells = plan.cells()?.len();
    if req.overrides.soak.is_some() && cells != 1 {
        return Err(LabError::Input {
            what: "--soak".into(),
            problem: format!("it keeps one cell under load, but the selection has {cells} cells"),
            hint: "pick one stack, one scenario and one variant".into(),
        });
    }
    Ok(plan)
}

impl RunPlan {
    /// The merged settings every cell is measured with.
    pub fn settings(&self) -> &LoadSettings {
        &self.settings
    }

    /// Sets what the study's earlier runs measured: each ranked pair's variance parts, pooled pair
    /// by pair. The outlook forecasts the widest ratio from them, and the launches are allocated
    /// by the noisiest pair's parts instead of the prior.
    pub fn set_pair_parts(&mut self, pairs: Vec<bakeoff_model::statistics::paired::Components>) {
        let total = |c: &bakeoff_model::statistics::paired::Components| c.launch_sd.powi(2) + c.block_sd.powi(2);
        self.settings.components = pairs.iter().copied().max_by(|a, b| total(a).total_cmp(&total(b)));
        self.settings.pair_parts = pairs;
    }

    /// The study's name (`quick` for the default study, `adhoc` for flags alone).
    pub fn study_name(&self) -> &str {
        &self.study.name
    }

    /// Every cell of the plan: stack x scenario x variant x workers.
    pub(crate) fn cells(&self) -> Result<Vec<Cell<'_>>, LabError> {
        let stacks: Vec<&Stack> = self.stacks.iter().collect();
        let files = files::scenarios(&self.settings.scenario_files);
        let mut cells = cells::plan_with_files(&stacks, self.scenarios.as_deref(), self.variants.as_deref(), &self.workers, &files)?;
        self.keep_file_protocols(&mut cells)?;
        if let Some(soak) = &self.soak {
            let cpus = self.settings.server_cpus.len() as u32;
            let lowest = self.workers.default.iter().copied().min().unwrap_or(1);
            cells::add_soak(&mut cells, &stacks, soak, soak.workers(cpus, lowest))?;
        }
        if let Some(aa) = &self.aa {
            cells::add_aa_twin(&mut cells, aa)?;
        }
        Ok(cells)
    }

    /// A scenario file travels in its own `protocol`: only the variants that serve that protocol
    /// measure it. A file no selected variant serves that way is the error.
    fn keep_file_protocols(&self, cells: &mut Vec<Cell<'_>>) -> Result<(), LabError> {
        for file in &self.settings.scenario_files {
            let scenario = file.scenario();
            let protocol = file.workload.protocol;
            let before = cells.iter().filter(|c| c.scenario == scenario).count();
            cells.retain(|c| c.scenario != scenario || c.variant.protocol == protocol);
            if before > 0 && !cells.iter().any(|c| c.scenario == scenario) {
                return Err(LabError::Selection(format!(
                    "scenario file `{}` travels over {protocol} (its `protocol`), which no selected variant serving it speaks: \
                     choose a variant of that protocol (docs/stacks.md, \"Protocols\"), give `bench --protocol {protocol}`, \
                     or remove `protocol` from the file",
                    file.name
                )));
            }
        }
        Ok(())
    }

    /// The resolved settings as the run records them (the store's `settings_json`).
    pub(crate) fn settings_json(&self) -> serde_json::Value {
        serde_json::json!({
            "load": &self.settings,
            "study": &self.study,
            "workers": self.workers.default,
            "stack_workers": self.workers.per_stack,
            "cpu_placement": crate::machine::cgroup::describe_placement(),
            "adhoc": &self.adhoc,
        })
    }
}

/// The study file, or for flags alone an ad-hoc study of the selected stacks: nothing of the default
/// study (its stacks, variants, workers, claims) leaks into a run that did not ask for it.
fn resolve_study(req: &RunRequest) -> Result<Study, LabError> {
    if req.study.is_none() && !(req.selection.stacks.is_empty() && req.adhoc.is_empty()) {
        let mut names = req.selection.stacks.clone();
        names.extend(req.adhoc.iter().map(AdHocSpec::stack_name));
        return Ok(Study::adhoc(names));
    }
    let path = req.study.clone().unwrap_or_else(|| req.root.join(DEFAULT_STUDY));
    Ok(Study::load(&path)?)
}

/// Embedded defaults < study < flags.
fn merge_settings(study: &Study, o: &Overrides) -> Result<LoadSettings, LabError> {
    let mut s = LoadSettings::default();
    s.duration = o.duration.or(study.duration()).unwrap_or(s.duration);
    s.warmup = o.warmup.or(study.warmup()).unwrap_or(s.warmup);
    s.connections = o.connections.or(study.connections).unwrap_or(s.connections);
    s.trials = o.trials.or(study.trials).unwrap_or(s.trials);
    s.schedule = o.schedule.or(study.schedule).unwrap_or(s.schedule);
    // A study's launches spread its own blocks: with fewer blocks asked (`--trials 3` on a study of
    // five launches), each block keeps a launch of its own; `--launches` itself is checked below.
    s.launches = o.launches.or(study.launches.map(|l| if o.trials.is_some() { l.min(s.trials) } else { l }));
    s.rate = o.rate.or(study.rate);
    s.ramp = o.ramp.clone().or(study.ramp.clone());
    s.requests_per_conn = o.requests_per_conn.or(study.requests_per_conn);
    s.tls_resumption = study.tls_resumption.unwrap_or(s.tls_resumption);
    s.streams = o.streams.or(study.streams).unwrap_or(s.streams);
    s.pool_size = o.pool_size.or(study.pool_size).unwrap_or(s.pool_size);
    // A rate or ramp given as a flag replaces the study's concurrency sweep.
    if o.rate.is_none() && o.ramp.is_none() {
        s.conn_ladder = study.conn_ladder.clone();
    }
    s.max_throughput = o.max_throughput || study.max_throughput;
    s.ceiling = !o.no_ceiling;
    s.server_cpus = o.server_cpus.clone().unwrap_or(s.server_cpus);
    s.client_cpus = o.client_cpus.clone().unwrap_or(s.client_cpus);
    // The client gets one thread per CPU it has (every CPU the server does not use), so a
    // saturated client means this machine's client ceiling, not a thread count left at one.
    s.client_threads = o.client_threads.unwrap_or(s.client_cpus.len().max(1) as u32);
    s.proxy_placement = o.proxy_placement.or(study.proxy_placement).unwrap_or_default();
    s.roles = study.hosts.clone();
    if !o.clients.is_empty() {
        s.roles.client = o.clients.clone();
    }
    if let Some(server) = &o.server_host {
        s.roles.server = server.clone();
    }
    if let Some(services) = &o.services_host {
        s.roles.services = services.clone();
    }
    if let Some(soak) = o.soak {
        s.duration = soak;
        s.trials = 1;
    }
    s.rank_by = o.rank_by.unwrap_or(study.rank_by);
    s.precision = o.precision.or(study.precision());
    s.budget = o.budget.or(study.budget());
    s.slo = o.slo.or(study.slo());
    s.latency_under_load = study.latency_under_load();
    let bad = |what: &str, problem: String, hint: &str| LabError::Input { what: what.into(), problem, hint: hint.into() };
    if s.budget.is_some() && s.precision.is_none() {
        return Err(bad(
            "--budget",
            "it limits the rounds --precision adds, but no precision target is set".into(),
            "add --precision 5% (or a study's `precision`)",
        ));
    }
    if s.trials == 0 || s.trials > 100 {
        return Err(bad("--trials", format!("{} is out of range", s.trials), "use 1 to 100 (3 or more for confidence intervals)"));
    }
    if s.launches.is_some_and(|l| l == 0 || l > s.trials) {
        return Err(bad(
            "--launches",
            format!("{} launches for {} blocks", s.launches.unwrap_or(0), s.trials),
            "use 1 up to --trials: each launch measures at least one block",
        ));
    }
    if s.connections == 0 {
        return Err(bad("--connections", "must be at least 1".into(), "give the number of keep-alive connections, e.g. 64"));
    }
    if s.pool_size == 0 || s.pool_size > 1024 {
        return Err(bad(
            "--pool-size",
            format!("{} is out of range", s.pool_size),
            "use 1 to 1024 database connections per server process",
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(stacks: &[&str]) -> RunRequest {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        RunRequest {
            root,
            selection: Selection { stacks: stacks.iter().map(|s| s.to_string()).collect(), ..Default::default() },
            ..Default::default()
        }
    }

    #[test]
    fn the_default_study_runs_without_flags_and_flags_win_over_it() {
        let mut req = request(&[]);
        req.overrides.connections = Some(4);
        let plan = plan_run(req).unwrap();
        assert_eq!(plan.study.name, "quick");
        let study_duration = plan.study.duration().expect("quick.toml sets a duration");
        assert_ne!(study_duration, Duration::from_secs(10), "the test needs a study duration other than the default");
        assert_eq!(plan.settings.duration, study_duration, "the study's duration over the default 10 s");
        assert_eq!(plan.settings.connections, 4, "the flag over the study's 64");
        assert_eq!(plan.settings.timeout, Duration::from_secs(10), "the default, set by neither");
    }

    #[test]
    fn fewer_blocks_than_a_studys_launches_keep_a_launch_each_but_a_flag_beyond_them_is_refused() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let study = Study::load(&root.join("studies/seed-001-greeting.toml")).unwrap();
        assert!(study.launches.is_some_and(|l| l > 3), "the test needs a study of more than three launches");
        let three = Overrides { trials: Some(3), ..Default::default() };
        assert_eq!(merge_settings(&study, &three).unwrap().launches, Some(3));
        let mut req = request(&[]);
        req.overrides.trials = Some(3);
        req.overrides.launches = Some(5);
        let Err(err) = plan_run(req) else { panic!("five launches of three blocks were planned") };
        let err = err.to_string();
        assert!(err.contains("--launches") && err.contains("5 launches for 3 blocks"), "{err}");
    }

    #[test]
    fn stacks_without_a_study_are_an_adhoc_run_of_those_stacks_only() {
        let plan = plan_run(request(&["go/fasthttp"])).unwrap();
        assert_eq!((plan.study.name.as_str(), plan.study.stacks.as_slice()), ("adhoc", ["go/fasthttp".to_string()].as_slice()));
        assert!(plan.study.variants.is_empty() && plan.study.claims.is_empty());
        // Every variant of the stack is planned (the default study's `default`/`sqlite` filter is not inherited).
        let cells = plan.cells().unwrap();
        assert!(cells.iter().any(|c| c.variant.name == "postgres"), "{:?}", cells.iter().map(|c| c.key().label()).collect::<Vec<_>>());
        assert_eq!(plan.settings_json()["study"]["stacks"], serde_json::json!(["go/fasthttp"]));
    }

    #[test]
    fn the_proxy_placement_comes_from_the_flag_over_the_study_and_is_recorded() {
        use bakeoff_model::study::ProxyPlacement;
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut study = Study::load(&root.join("studies/seed-004-proxies.toml")).unwrap();
        assert_eq!(merge_settings(&Study::adhoc(vec![]), &Overrides::default()).unwrap().proxy_placement, ProxyPlacement::Shared);
        study.proxy_placement = Some(ProxyPlacement::OwnCpu);
        assert_eq!(merge_settings(&study, &Overrides::default()).unwrap().proxy_placement, ProxyPlacement::OwnCpu);
        let flag = Overrides { proxy_placement: Some(ProxyPlacement::Shared), ..Default::default() };
        assert_eq!(merge_settings(&study, &flag).unwrap().proxy_placement, ProxyPlacement::Shared, "the flag wins");
        let mut req = request(&[]);
        req.study = Some(root.join("studies/seed-004-proxies.toml"));
        req.overrides.proxy_placement = Some(ProxyPlacement::OwnCpu);
        assert_eq!(plan_run(req).unwrap().settings_json()["load"]["proxy_placement"], "own-cpu");
    }

    #[test]
    fn soak_needs_one_cell() {
        let mut req = request(&["go/fasthttp"]);
        req.overrides.soak = Some(Duration::from_secs(60));
        let err = plan_run(req).unwrap_err().to_string();
        assert!(err.contains("--soak") && err.contains("hint: pick one stack"), "{err}");
    }
}
