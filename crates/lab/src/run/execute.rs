//! Carrying out a `RunPlan`: set the stacks up (cached), write the fixtures into a scratch folder,
//! verify and measure every cell through the runner, hand every result to the sink, and clean up.
//! The one entry point every front end calls to run a study.

use crate::error::LabError;
use crate::run::cell::served::ServerHost;
use crate::run::planning::cells::Cell;
use crate::run::planning::estimate::trial_weight;
use crate::run::planning::plan::RunPlan;
use crate::run::roles::RunHosts;
use crate::run::workspace::{new_run, Workspace};
use crate::run::{Event, RunOutcome};
use crate::stacks::manifest::Stack;
use crate::stacks::setup::{self, SetupJob};
use bakeoff_model::records::results::{ResultSink, RunInfo, Verdict};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a run did: its provenance (the id to read it back by) and the runner's outcome.
pub struct Executed {
    /// The run's provenance, with the id to read it back by.
    pub run: RunInfo,
    /// What the runner verified, stored and failed.
    pub outcome: RunOutcome,
    /// Stacks whose setup failed (their cells fail verification).
    pub failed_setups: usize,
}

impl Executed {
    /// A cell failed, or a check failed: the run's exit status is non-zero.
    pub fn failed(&self) -> bool {
        !self.outcome.failed_cells.is_empty() || self.outcome.verifications.iter().any(|v| v.verdict() == Verdict::Fail)
    }
}

/// Runs the plan to the end (or until `cancel` is set), reporting progress through `events`.
pub fn execute(
    plan: RunPlan,
    sink: &mut dyn ResultSink,
    events: &mut dyn FnMut(Event<'_>),
    cancel: &AtomicBool,
) -> Result<Executed, LabError> {
    let cells = plan.cells()?;
    // Every host is reached, its build checked and its path measured before anything is set up.
    let mut hosts = RunHosts::open(&plan.settings.roles, plan.host_access.as_ref(), &plan.root)?;
    let server_host = hosts.server_host.clone();
    let failed_setups = match &server_host {
        Some(host) => setup_on_host(host, &plan.stacks, cancel, events),
        None => setup_stacks(&plan.stacks, &plan.root, false, cancel, events),
    };
    let mut run = new_run(&plan.root, &plan.study.name, plan.settings_json());
    if !hosts.hosts.is_empty() {
        run.settings["hosts"] = serde_json::to_value(&hosts.hosts).unwrap_or_default();
        run.settings["paths"] = serde_json::to_value(&hosts.paths).unwrap_or_default();
    }
    run.services = services_preview(&cells);
    let ws = Workspace::create(&run.id, plan.keep)?;
    // The server host and a services host of its own each get the run's folder and fixtures.
    let services_host = hosts.services_host.clone().filter(|h| !server_host.as_ref().is_some_and(|s| std::rc::Rc::ptr_eq(s, h)));
    for (role, host) in [("server", &server_host), ("services", &services_host)] {
        let Some(host) = host else { continue };
        let folder = host.call(|s| s.run_folder(&run.id, &ws.data)).map_err(|e| LabError::Input {
            what: format!("the {role} host {}", host.host()),
            problem: format!("the run's folder could not be made there: {e}"),
            hint: "the host's temporary folder must be writable".into(),
        })?;
        *host.run_folder.borrow_mut() = Some(folder);
    }
    if plan.settings.precision.is_some() && !cancel.load(Ordering::Relaxed) {
        precision_outlook(&plan, &mut hosts, events, cancel)?;
    }
    (events)(Event::RunStarting { run: &run, cells: cells.len(), trials: plan.settings.trials, scratch: &ws.dir });
    let trials_of = |c: &Cell<'_>| c.soak.map_or(plan.settings.trials, |s| s.trials);
    let trials = cells.iter().map(|c| trials_of(c) as usize).sum();
    let work = cells.iter().map(|c| trial_weight(&plan.settings, c) * trials_of(c)).sum();
    (events)(Event::Planned { trials, estimate: plan.estimate()?, work });
    let mut lab = ws.lab(&plan.root, plan.docstore.clone(), plan.settings.clone(), sink, events, cancel).with_hosts(hosts);
    let outcome = lab.run(&run, &cells).map_err(|e| LabError::Sink(format!("{e:#}")))?;
    drop(lab);
    let executed = Executed { run, outcome, failed_setups };
    for host in [server_host, services_host].into_iter().flatten() {
        host.close(plan.keep || executed.failed());
    }
    ws.finish(executed.failed(), events);
    Ok(executed)
}

/// Before a run with a precision target: the noise floor where the run measures (this machine's,
/// or its placed hosts'; a recent one of the same placement is reused, else it is measured now,
/// about 25 s) and what the target needs there, so a run that cannot reach it says so at its
/// start, not at its end.
fn precision_outlook(plan: &RunPlan, hosts: &mut RunHosts, events: &mut dyn FnMut(Event<'_>), cancel: &AtomicBool) -> Result<(), LabError> {
    use crate::run::schedule::noise_probe;
    let roles = &plan.settings.roles;
    let kept = noise_probe::recent(&plan.root, roles, plan.settings.schedule);
    let reused = kept.is_some();
    let floor = match kept {
        Some(f) => f,
        None => {
            (events)(Event::NoiseProbeStarting { expected: noise_probe::EXPECTED, site: noise_probe::site_of(roles) });
            let measured = if roles.is_local() {
                noise_probe::probe(&plan.root, &plan.settings, cancel)
            } else {
                noise_probe::probe_placed(&plan.root, &plan.settings, &plan.stacks, hosts, cancel)
            };
            match measured {
                Ok(f) => {
                    noise_probe::remember(&plan.root, roles, plan.settings.schedule, &f);
                    f
                }
                Err(e) => {
                    (events)(Event::NoiseProbeSkipped(e.to_string()));
                    return Ok(());
                }
            }
        }
    };
    (events)(Event::NoiseFloor { floor: &floor, reused });
    if let Some(o) = noise_probe::outlook(plan, &floor)? {
        (events)(Event::PrecisionOutlook(&o));
    }
    Ok(())
}

/// Sets up each stack (cached), reporting each outcome; returns how many failed (others still run).
pub fn setup_stacks<'s>(
    stacks: impl IntoIterator<Item = &'s Stack>,
    root: &Path,
    force: bool,
    cancel: &AtomicBool,
    events: &mut dyn FnMut(Event<'_>),
) -> usize {
    let mut failed = 0;
    for stack in stacks {
        let Some(job) = SetupJob::for_stack(stack) else { continue };
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        // After a successful setup, what it installed (`setup.versions`) is recorded for reports.
        let heard = &mut |progress: setup::SetupProgress<'_>| (events)(Event::SetupProgress { stack: &stack.name, progress });
        let outcome = setup::run_with_progress(&job, root, force, cancel, heard)
            .and_then(|o| crate::stacks::versions::record(stack, root, o.has_new_outputs()).map(|()| o));
        failed += usize::from(outcome.is_err());
        (events)(Event::SetupFinished { stack: &stack.name, outcome: &outcome });
    }
    failed
}

/// Sets up each stack on the server host (cached there), one at a time so each outcome is
/// reported; returns how many failed (their cells fail verification).
fn setup_on_host<'s>(
    host: &ServerHost,
    stacks: impl IntoIterator<Item = &'s Stack>,
    cancel: &AtomicBool,
    events: &mut dyn FnMut(Event<'_>),
) -> usize {
    let mut failed = 0;
    for stack in stacks {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let began = std::time::Instant::now();
        let outcome = host
            .call(|s| s.setup(std::slice::from_ref(&stack.name), cancel))
            .map(|versions| {
                host.versions.borrow_mut().extend(versions);
                setup::SetupOutcome::Done(began.elapsed())
            })
            .map_err(|e| LabError::Input {
                what: format!("{} on {}", stack.name, host.host()),
                problem: e,
                hint: format!("run `bakeoff setup --host {} {}` to see the whole output", host.place, stack.name),
            });
        failed += usize::from(outcome.is_err());
        (events)(Event::SetupFinished { stack: &stack.name, outcome: &outcome });
    }
    failed
}

/// The services the run's cells will start, named for the run's provenance before they start.
fn services_preview(cells: &[Cell<'_>]) -> Vec<String> {
    let mut kinds: Vec<&str> = cells.iter().flat_map(|c| c.stack.services_for(c.scenario, c.variant)).map(|k| k.id()).collect();
    kinds.sort();
    kinds.dedup();
    kinds.into_iter().map(String::from).collect()
}
