//! `bakeoff run`: resolves a study and flags into a plan, sets up and verifies the stacks, measures
//! every cell, stores each trial as it is made, then writes the HTML report and prints a summary.

use crate::args::RunArgs;
use crate::context;
use anyhow::{bail, Context, Result};
use bakeoff_lab::run::cells::WorkerCounts;
use bakeoff_lab::run::runner::{Event, Lab, LoadSettings};
use bakeoff_model::duration::parse_duration;
use bakeoff_model::results::{ResultSink, RunInfo};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::Study;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The settings of a run that no study or flag changed.
pub fn default_settings() -> LoadSettings {
    let (server_cpus, client_cpus) = bakeoff_lab::host::machine::default_cpu_split();
    LoadSettings {
        duration: Duration::from_secs(10),
        warmup: Duration::from_secs(3),
        connections: 64,
        client_threads: 1,
        rate: None,
        ramp: None,
        max_throughput: false,
        ceiling: true,
        requests_per_conn: None,
        timeout: Duration::from_secs(10),
        trials: 3,
        server_cpus,
        client_cpus,
    }
}

pub fn scenario_filter(ids: &[String]) -> Result<Option<Vec<Scenario>>> {
    if ids.is_empty() {
        return Ok(None);
    }
    let parsed: Result<Vec<Scenario>, String> = ids.iter().map(|s| s.parse()).collect();
    Ok(Some(parsed.map_err(|e| anyhow::anyhow!("--scenarios: {e}"))?))
}

pub fn new_run(root: &Path, study: &str, settings: serde_json::Value) -> RunInfo {
    let started_at = bakeoff_model::now_rfc3339();
    let compact: String = started_at.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    RunInfo {
        id: format!("{compact}-{}", std::process::id()),
        started_at,
        git_commit: bakeoff_lab::host::machine::git_commit(root),
        machine: bakeoff_lab::host::machine::machine_info(),
        study: study.into(),
        settings,
        services: vec![],
    }
}

/// The scratch directory of a run: fixtures and every server's log. Removed afterwards unless
/// something failed or `--keep` was given.
pub struct Workspace {
    pub dir: PathBuf,
    pub data: PathBuf,
    keep: bool,
}

impl Workspace {
    pub fn create(run_id: &str, keep: bool) -> Result<Workspace> {
        let dir = std::env::temp_dir().join(format!("bakeoff-{run_id}"));
        let data = dir.join("data");
        bakeoff_lab::contract::fixtures::write_all(&data).context("writing fixtures")?;
        Ok(Workspace { dir, data, keep })
    }

    pub fn lab<'a>(
        &self,
        root: &Path,
        docstore: Option<String>,
        settings: LoadSettings,
        sink: &'a mut dyn ResultSink,
        events: &'a mut dyn FnMut(Event<'_>),
    ) -> Lab<'a> {
        Lab {
            project_root: root.to_path_buf(),
            run_dir: self.dir.clone(),
            data_dir: self.data.clone(),
            external_docstore: docstore,
            settings,
            sink,
            events,
            cancel: &context::CANCEL,
            services: Default::default(),
        }
    }

    /// Removes the scratch directory unless asked to keep it or something failed.
    pub fn finish(self, failed: bool) {
        if self.keep || failed {
            eprintln!("logs and data kept in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn duration_flag(flag: &str, v: &Option<String>, fallback: Option<Duration>) -> Result<Option<Duration>> {
    match v {
        Some(s) => Ok(Some(parse_duration(s).map_err(|e| anyhow::anyhow!("--{flag}: {e}"))?)),
        None => Ok(fallback),
    }
}

/// Merges defaults, the study and the flags (flags win).
fn settings(args: &RunArgs, study: &Study) -> Result<LoadSettings> {
    let mut s = default_settings();
    s.duration = duration_flag("duration", &args.duration, study.duration())?.unwrap_or(s.duration);
    s.warmup = duration_flag("warmup", &args.warmup, study.warmup())?.unwrap_or(s.warmup);
    s.connections = args.connections.or(study.connections).unwrap_or(s.connections);
    s.client_threads = args.threads;
    s.trials = args.trials.or(study.trials).unwrap_or(s.trials);
    s.rate = args.rate.or(study.rate);
    s.ramp = args.ramp.clone().or(study.ramp.clone());
    s.requests_per_conn = args.requests_per_conn.or(study.requests_per_conn);
    s.max_throughput = args.max_throughput || study.max_throughput;
    s.ceiling = !args.no_ceiling;
    if let Some(c) = &args.server_cpus {
        s.server_cpus = bakeoff_lab::host::machine::parse_cpu_list(c).map_err(|e| anyhow::anyhow!("--server-cpus: {e}"))?;
    }
    if let Some(c) = &args.client_cpus {
        s.client_cpus = bakeoff_lab::host::machine::parse_cpu_list(c).map_err(|e| anyhow::anyhow!("--client-cpus: {e}"))?;
    }
    if let Some(soak) = duration_flag("soak", &args.soak, None)? {
        s.duration = soak;
        s.trials = 1;
    }
    if s.trials == 0 || s.trials > 100 {
        bail!("--trials {} is out of range\n  hint: use 1 to 100 (3 or more for confidence intervals)", s.trials);
    }
    if s.connections == 0 {
        bail!("--connections must be at least 1");
    }
    Ok(s)
}

fn load_study(root: &Path, args: &RunArgs) -> Result<Study> {
    let path = args.study.clone().unwrap_or_else(|| root.join("studies/quick.toml"));
    let mut study = Study::load(&path)?;
    if args.study.is_none() && !args.selection.stacks.is_empty() {
        // Flags alone define an ad-hoc run; the default study's claims don't apply.
        study.name = "adhoc".into();
        study.claims.clear();
    }
    Ok(study)
}

pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let study = load_study(&root, args)?;
    let settings = settings(args, &study)?;
    let catalog = context::catalog(&root);
    let pick = |flag: &Vec<String>, from_study: &Vec<String>| if flag.is_empty() { from_study.clone() } else { flag.clone() };
    let stacks = catalog.select(&pick(&args.selection.stacks, &study.stacks))?;
    let scenarios = scenario_filter(&pick(&args.selection.scenarios, &study.scenarios))?;
    let variants = pick(&args.selection.variants, &study.variants);
    // --workers applies to every stack; without it the study's counts (and its per-stack ones).
    let workers = if args.workers.is_empty() { study.worker_counts() } else { WorkerCounts::same(&args.workers) };
    let variant_filter = (!variants.is_empty()).then_some(variants.as_slice());
    let cells = bakeoff_lab::run::cells::plan(&stacks, scenarios.as_deref(), variant_filter, &workers)?;
    if args.soak.is_some() && cells.len() != 1 {
        bail!(
            "--soak keeps one cell under load, but the selection has {} cells\n  hint: pick one stack, one scenario and one variant",
            cells.len()
        );
    }

    let failed_setups = crate::commands::setup::setup_stacks(&stacks, &root, false);
    if failed_setups > 0 {
        eprintln!("warning: {failed_setups} stack(s) failed to set up; their cells will fail verification");
    }
    context::install_ctrl_c();
    let settings_json = serde_json::json!({
        "load": &settings,
        "study": &study,
        "workers": workers.default,
        "stack_workers": workers.per_stack,
        "cpu_placement": bakeoff_lab::host::cgroup::describe_placement(),
    });
    let mut run = new_run(&root, &study.name, settings_json);
    let db = root.join(&args.db);
    let mut store = bakeoff_store::Store::open(&db)?;
    let ws = Workspace::create(&run.id, args.keep)?;
    eprintln!("run {} : {} cells x {} trials; scratch {}", run.id, cells.len(), settings.trials, ws.dir.display());
    let mut events = context::print_event;
    let mut lab = ws.lab(&root, args.selection.docstore.clone(), settings, &mut store, &mut events);
    run.services = services_preview(&cells);
    let outcome = lab.run(&run, &cells)?;
    drop(lab);
    let failed =
        !outcome.failed_cells.is_empty() || outcome.verifications.iter().any(|v| v.verdict() == bakeoff_model::results::Verdict::Fail);
    ws.finish(failed);

    let data = store.load_run(&run.id)?;
    println!("{}", bakeoff_report::render(&data, bakeoff_report::Format::Text));
    let html = root.join("results").join(format!("{}.html", run.id));
    std::fs::write(&html, bakeoff_report::render(&data, bakeoff_report::Format::Html))
        .with_context(|| format!("writing {}", html.display()))?;
    println!("results: {} (run {})\nHTML report: {}", db.display(), run.id, html.display());
    if outcome.interrupted {
        println!("interrupted: the trials measured so far are stored");
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The services the run's cells will start, named for the run's provenance before they start.
fn services_preview(cells: &[bakeoff_lab::run::cells::Cell<'_>]) -> Vec<String> {
    let mut kinds: Vec<&str> = cells.iter().flat_map(|c| c.stack.services_for(c.scenario, c.variant)).map(|k| k.id()).collect();
    kinds.sort();
    kinds.dedup();
    kinds.into_iter().map(String::from).collect()
}
