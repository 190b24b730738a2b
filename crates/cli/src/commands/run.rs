//! `bakeoff run`: flags into a `RunRequest`, the lab plans and executes it (storing every trial as
//! it is made), then the text summary and the HTML report are written from the store.

use crate::args::RunArgs;
use crate::context;
use anyhow::{Context, Result};
use bakeoff_lab::run::{execute, plan_run, Overrides, RunRequest, Selection};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::forecast::{pool, MeasuredParts};
use bakeoff_model::statistics::paired::Components;
use std::path::Path;
use std::process::ExitCode;

/// The request the flags make; the lab merges it over the study (flags win).
pub(crate) fn request(args: &RunArgs, root: &Path) -> Result<RunRequest> {
    let req = RunRequest {
        root: root.to_path_buf(),
        study: args.study.clone(),
        selection: Selection {
            stacks: args.selection.stacks.clone(),
            scenarios: args.selection.scenarios.clone(),
            variants: args.selection.variants.clone(),
            workers: args.workers.clone(),
        },
        overrides: Overrides {
            duration: args.duration,
            warmup: args.warmup,
            connections: args.connections,
            client_threads: args.threads,
            trials: args.trials,
            schedule: args.schedule,
            launches: args.launches,
            rate: args.rate,
            ramp: args.ramp.clone(),
            requests_per_conn: args.requests_per_conn,
            streams: args.streams,
            price: args.price,
            pool_size: args.pool_size,
            max_throughput: args.max_throughput,
            no_ceiling: args.no_ceiling,
            server_cpus: args.server_cpus.clone().map(|c| c.0),
            client_cpus: args.client_cpus.clone().map(|c| c.0),
            proxy_placement: args.proxy_placement,
            soak: args.soak,
            rank_by: args.rank_by,
            precision: args.precision,
            budget: args.budget,
            aa: args.aa.clone(),
            slo: args.slo,
            clients: args.hosts.clients.clone(),
            server_host: args.hosts.server_host.clone(),
            services_host: args.hosts.services_host.clone(),
        },
        docstore: args.selection.docstore.clone(),
        keep: args.keep,
        adhoc: Vec::new(),
        scenario_files: Vec::new(),
        host_access: Some(args.hosts.access()?),
    };
    with_scenario(args, req)
}

/// `--scenario`: a scenario file (a `.toml` path or an existing file) becomes one of the run's
/// `file:NAME` scenarios, its deck drawn once for every cell; a built-in name joins `--scenarios`.
fn with_scenario(args: &RunArgs, mut req: RunRequest) -> Result<RunRequest> {
    let Some(given) = &args.selection.scenario else { return Ok(req) };
    match scenario_arg(given)? {
        ScenarioArg::BuiltIn(scenario) => req.selection.scenarios.push(scenario),
        ScenarioArg::File(file) => {
            req.selection.scenarios.push(file.scenario());
            req.scenario_files.push(file);
        }
    }
    Ok(req)
}

/// What `--scenario` names.
pub(crate) enum ScenarioArg {
    /// A built-in scenario by name.
    BuiltIn(Scenario),
    /// A scenario file, read and checked.
    File(bakeoff_lab::run::ScenarioFile),
}

/// Reads `--scenario`: a `.toml` path or an existing file is a scenario file, anything else a built-in name.
pub(crate) fn scenario_arg(given: &str) -> Result<ScenarioArg> {
    let path = Path::new(given);
    if !(path.is_file() || given.ends_with(".toml")) {
        return given.parse().map(ScenarioArg::BuiltIn).map_err(|e: String| anyhow::anyhow!("--scenario {given}: {e}"));
    }
    Ok(ScenarioArg::File(bakeoff_lab::run::ScenarioFile::load(path, "--scenario")?))
}

pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    run_request(args, &root, request(args, &root)?)
}

/// Plans and executes `req` (made from `args`, perhaps with more), then prints and writes the report.
pub(crate) fn run_request(args: &RunArgs, root: &Path, req: RunRequest) -> Result<ExitCode> {
    let ran = run_and_report(args, root, req)?;
    Ok(if ran.failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A run done and reported: whether a cell failed, and the run as stored.
pub(crate) struct Ran {
    pub failed: bool,
    pub data: bakeoff_model::records::run_data::RunData,
}

/// Plans, executes and stores the run, prints its text report and writes its HTML one.
pub(crate) fn run_and_report(args: &RunArgs, root: &Path, req: RunRequest) -> Result<Ran> {
    let root = root.to_path_buf();
    let mut plan = plan_run(req)?;
    context::print_problems(&plan.problems);
    let cancel = context::cancel_on_ctrl_c();
    let db = root.join(&args.db);
    let mut store = bakeoff_store::Store::open(&db)?;
    if let Some(line) = earlier_runs_outlook(&store, &mut plan) {
        eprintln!("precision: {line}");
    }
    // The machine's quick facts first (a second of watching its CPUs): what a reader of the
    // results should know before any number, and what to change before measuring.
    crate::commands::doctor::print_short(&bakeoff_lab::machine::doctor::HostFacts::gather(std::time::Duration::from_secs(1)));
    let shown = crate::status::Shown::start(args.quiet);
    let done = execute(plan, &mut store, &mut |e| shown.event(e), cancel);
    drop(shown);
    let done = done?;
    if done.failed_setups > 0 {
        eprintln!("warning: {} stack(s) failed to set up; their cells failed verification", done.failed_setups);
    }
    let data = store.load_run(&done.run.id)?;
    println!("{}", bakeoff_report::render(&data, bakeoff_report::Format::Text));
    // Beside the results file: results/ for the default one, the caller's folder for another.
    let html = db.parent().unwrap_or(&root).join(format!("{}.html", done.run.id));
    std::fs::write(&html, bakeoff_report::render(&data, bakeoff_report::Format::Html))
        .with_context(|| format!("writing {}", html.display()))?;
    println!("results: {} (run {})\nHTML report: {}", db.display(), done.run.id, html.display());
    if done.outcome.interrupted {
        println!("interrupted: the trials measured so far are stored");
    }
    Ok(Ran { failed: done.failed(), data })
}

/// Runs of the same study whose ranked pairs the outlook pools, the newest first: five runs of six
/// launches give each pair's launch part 25 degrees of freedom, few enough runs to follow the
/// machine as it is now.
const EARLIER_RUNS: usize = 5;

/// Sets on `plan` what the study's earlier complete runs in `store` measured (each ranked pair's
/// variance parts, pooled pair by pair over up to `EARLIER_RUNS` of them), which this run's
/// launches are allocated by and its widest ratio forecast from, and says so in a line: what the
/// newest of them left its widest ratio at and what this run can expect. None without a precision
/// target, a paired schedule, a study of its own name or such a run.
fn earlier_runs_outlook(store: &bakeoff_store::Store, plan: &mut bakeoff_lab::run::RunPlan) -> Option<String> {
    let s = plan.settings();
    let target = s.precision?;
    let (study, schedule) = (plan.study_name().to_string(), s.schedule);
    if !schedule.pairs_blocks() || study == "adhoc" {
        return None;
    }
    let same_schedule = |data: &bakeoff_model::records::run_data::RunData| {
        let stored = data.run.settings.pointer("/load/schedule").and_then(|v| serde_json::from_value(v.clone()).ok());
        stored == Some(schedule)
    };
    let runs = store.list_runs().ok()?.into_iter().filter(|r| r.study == study && r.status == bakeoff_model::RunStatus::Complete);
    let earlier: Vec<_> = runs.filter_map(|r| store.load_run(&r.id).ok()).filter(same_schedule).take(EARLIER_RUNS).collect();
    let mut by_pair = std::collections::BTreeMap::<String, Vec<MeasuredParts>>::new();
    for data in &earlier {
        for (pair, parts) in bakeoff_report::scenario::ranked_parts(&bakeoff_report::ReportView::new(data).scenarios) {
            by_pair.entry(pair).or_default().push(parts);
        }
    }
    let pairs: Vec<Components> = by_pair.values().filter_map(|runs| pool(runs)).collect();
    let newest = earlier.first()?;
    let view = bakeoff_report::ReportView::new(newest);
    let (scenario, widest) = bakeoff_report::scenario::widest_paired(&view.scenarios)?;
    if pairs.is_empty() {
        return None;
    }
    plan.set_pair_parts(pairs);
    let s = plan.settings();
    let expect = bakeoff_lab::run::noise_probe::forecast_widest(&s.pair_parts, s.trials, s);
    let from = crate::progress::History { run_id: &newest.run.id, runs: earlier.len(), pairs: s.pair_parts.len() };
    Some(crate::progress::history_line(&from, scenario, widest, s.trials, expect, target))
}
