//! The lab that runs a plan's cells: verify each stack variant, then hand the passing cells to the
//! schedule (`rounds`), which measures them trial by trial (`measure`) on servers it starts
//! (`start`); every result goes to the sink as soon as it exists. A failing cell never stops the run.

use crate::run::events::Event;
use crate::run::planning::cells::Cell;
use crate::run::planning::settings::LoadSettings;
use crate::services::Services;
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::records::results::{CellKey, ResultSink, RunInfo, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::RampSetting;
use bakeoff_model::RunStatus;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Where a lab keeps its files: the project (stacks, fixtures' sources), the run's scratch
/// directory (cell directories, server logs) and the fixtures written for the run.
#[derive(Debug, Clone)]
pub struct LabDirs {
    /// The project's root, where `stacks/` and `services/` are.
    pub project_root: PathBuf,
    /// The run's scratch directory.
    pub run_dir: PathBuf,
    /// The fixtures every stack reads (`DATA_DIR`).
    pub data_dir: PathBuf,
}

/// The lab of one run: its settings, the services it started, and where results and events go.
/// Services it starts stop when it is dropped.
pub struct Lab<'a> {
    pub(crate) project_root: PathBuf,
    pub(crate) run_dir: PathBuf,
    pub(crate) data_dir: PathBuf,
    pub(crate) external_docstore: Option<String>,
    pub(crate) settings: LoadSettings,
    pub(crate) sink: &'a mut dyn ResultSink,
    pub(crate) events: &'a mut dyn FnMut(Event<'_>),
    pub(crate) cancel: &'a AtomicBool,
    pub(crate) services: Services,
    /// When the run began: the clock its budget counts from.
    pub(crate) run_started: Instant,
    /// The client hosts and the servers' network, when the run places them.
    pub(crate) hosts: crate::run::roles::RunHosts,
}

impl<'a> Lab<'a> {
    /// A lab over `dirs` measuring with `settings`; results go to `sink`, progress to `events`,
    /// and setting `cancel` stops it after the step at hand (keeping what was measured).
    pub fn new(
        dirs: LabDirs,
        settings: LoadSettings,
        sink: &'a mut dyn ResultSink,
        events: &'a mut dyn FnMut(Event<'_>),
        cancel: &'a AtomicBool,
    ) -> Lab<'a> {
        let LabDirs { project_root, run_dir, data_dir } = dirs;
        Lab {
            project_root,
            run_dir,
            data_dir,
            external_docstore: None,
            settings,
            sink,
            events,
            cancel,
            services: Services::default(),
            run_started: Instant::now(),
            hosts: crate::run::roles::RunHosts::local(),
        }
    }

    /// Loads from the client hosts and starts the servers where `hosts` says.
    pub(crate) fn with_hosts(mut self, hosts: crate::run::roles::RunHosts) -> Lab<'a> {
        self.hosts = hosts;
        self
    }

    /// Uses the document store at `url` (`--docstore mongodb://...`) instead of starting one.
    pub(crate) fn with_docstore(mut self, url: Option<String>) -> Lab<'a> {
        self.external_docstore = url;
        self
    }

    /// The settings every cell is measured with.
    pub fn settings(&self) -> &LoadSettings {
        &self.settings
    }

    /// The settings, to change before the next cell is measured.
    pub fn settings_mut(&mut self) -> &mut LoadSettings {
        &mut self.settings
    }

    /// The backing services started so far.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Runs `plan` from the run's clients (this process, or the client hosts, merged).
    /// A lost server host refuses every load after it, and stops the run.
    pub(crate) fn run_load(&self, plan: &bakeoff_load::LoadPlan) -> Result<bakeoff_load::LoadReport, crate::run::roles::LoadFailure> {
        if let Some(lost) = self.hosts.server_host.as_ref().and_then(|h| h.lost()) {
            self.cancel.store(true, Ordering::Relaxed);
            return Err(crate::run::roles::LoadFailure::Host(lost));
        }
        self.hosts.load(plan, self.cancel)
    }
}

/// The outcome of a run: verifications and how many trials were stored.
pub struct RunOutcome {
    /// One report per stack variant verified.
    pub verifications: Vec<VerifyReport>,
    pub(crate) trials_stored: usize,
    /// Cells that could not be measured, each with what went wrong.
    pub failed_cells: Vec<(CellKey, String)>,
    /// The run was cancelled before it ended.
    pub interrupted: bool,
}

impl Lab<'_> {
    /// Verifies every stack variant of `cells`, then measures the passing cells `trials` times,
    /// interleaving cells within each trial round; stores every trial as soon as it is measured.
    pub fn run(&mut self, run: &RunInfo, cells: &[Cell<'_>]) -> anyhow::Result<RunOutcome> {
        self.run_started = Instant::now();
        self.sink.begin_run(run)?;
        let on_host = self.hosts.server_host.as_ref().map(|h| h.versions.borrow().clone());
        let ran = crate::run::what_ran::what_ran(&self.project_root, cells, self.settings.pool_size, on_host.as_ref());
        self.sink.record_what_ran(&run.id, &ran)?;
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
                if self.cancel.load(Ordering::Relaxed) {
                    // Stopped mid-way: its unchecked contracts must not read as passed.
                    break;
                }
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
        // Under the block schedule the cells that can share the server CPUs are paired; the rest
        // (soaks, ramps, sweeps, SLO searches) keep a server of their own per trial.
        let (paired, single): (Vec<&Cell<'_>>, Vec<&Cell<'_>>) = match self.settings.schedule {
            Schedule::Blocks | Schedule::AtOnce => measurable.iter().partition(|c| c.can_pair(&self.settings)),
            Schedule::Trials => (Vec::new(), measurable),
        };
        if !single.is_empty() {
            self.measure_rounds(run, &single, &mut outcome)?;
        }
        if !paired.is_empty() && !self.cancel.load(Ordering::Relaxed) {
            self.measure_blocks(run, &paired, &mut outcome)?;
        }
        outcome.interrupted |= self.cancel.load(Ordering::Relaxed);
        let status = match self.hosts.lost() {
            Some(lost) => RunStatus::Failed(host_lost(&lost, &outcome)),
            None if outcome.interrupted => RunStatus::Interrupted,
            None => RunStatus::Complete,
        };
        self.sink.finish_run(&run.id, &status)?;
        Ok(outcome)
    }
}

/// The stored status of a run a lost host stopped: the cell whose load it was (the last to fail:
/// nothing is measured after the loss), that what came before stays, then the host, the cause
/// and its hint.
fn host_lost(lost: &str, outcome: &RunOutcome) -> String {
    let cell = outcome.failed_cells.last().map_or_else(|| "the run".to_string(), |(cell, _)| format!("measuring {}", cell.label()));
    format!("{cell} stopped there (every trial measured before is kept): {lost}")
}

fn dedup(mut v: Vec<Scenario>) -> Vec<Scenario> {
    v.sort();
    v.dedup();
    v
}
