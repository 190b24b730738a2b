//! The lab that runs a plan's cells: verify each stack variant on its cell bench, then hand the
//! passing cells to a schedule (`RoundSchedule` trial by trial, `BlockSchedule` in paired blocks),
//! which drives the bench; every result goes to the sink as soon as it exists. A failing cell never
//! stops the run.

use crate::run::cell::bench::CellBench;
use crate::run::cell::dirs::LabDirs;
use crate::run::cell::meters::Placement;
use crate::run::events::Event;
use crate::run::planning::cells::Cell;
use crate::run::planning::settings::LoadSettings;
use crate::run::schedule::blocks::BlockSchedule;
use crate::run::schedule::outcome::RunOutcome;
use crate::run::schedule::rounds::RoundSchedule;
use crate::services::Services;
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::records::results::{ResultSink, RunInfo, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::RampSetting;
use bakeoff_model::RunStatus;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The lab of one run: the cell bench its schedules drive, and where results go. Services the
/// bench starts stop when it is dropped.
pub struct Lab<'a> {
    /// What starts, measures, checks and stops each cell.
    pub bench: CellBench<'a>,
    pub(crate) sink: &'a mut dyn ResultSink,
    /// When the run began: the clock its budget counts from.
    pub(crate) run_started: Instant,
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
        let bench = CellBench {
            dirs,
            external_docstore: None,
            settings,
            events,
            cancel,
            services: Services::default(),
            place: Placement::local(cancel),
        };
        Lab { bench, sink, run_started: Instant::now() }
    }

    /// Loads from the client hosts and starts the servers where `hosts` says.
    pub(crate) fn with_hosts(mut self, hosts: crate::run::roles::RunHosts) -> Lab<'a> {
        self.bench.place.hosts = hosts;
        self
    }

    /// Uses the document store at `url` (`--docstore mongodb://...`) instead of starting one.
    pub(crate) fn with_docstore(mut self, url: Option<String>) -> Lab<'a> {
        self.bench.external_docstore = url;
        self
    }

    /// The block schedule over this lab's bench, storing to its sink.
    pub(crate) fn blocks(&mut self) -> BlockSchedule<'_, 'a> {
        BlockSchedule { bench: &mut self.bench, sink: &mut *self.sink, run_started: self.run_started }
    }

    /// The trial-by-trial schedule over this lab's bench, storing to its sink.
    pub(crate) fn rounds(&mut self) -> RoundSchedule<'_, 'a> {
        RoundSchedule { bench: &mut self.bench, sink: &mut *self.sink, run_started: self.run_started }
    }
}

impl Lab<'_> {
    /// Verifies every stack variant of `cells`, then measures the passing cells `trials` times,
    /// interleaving cells within each trial round; stores every trial as soon as it is measured.
    pub fn run(&mut self, run: &RunInfo, cells: &[Cell<'_>]) -> anyhow::Result<RunOutcome> {
        self.run_started = Instant::now();
        self.sink.begin_run(run)?;
        let on_host = self.bench.place.hosts.server_host.as_ref().map(|h| h.versions.borrow().clone());
        let ran = crate::run::what_ran::what_ran(&self.bench.dirs.project_root, cells, self.bench.settings.pool_size, on_host.as_ref());
        self.sink.record_what_ran(&run.id, &ran)?;
        let mut outcome = RunOutcome { verifications: Vec::new(), trials_stored: 0, failed_cells: Vec::new(), interrupted: false };
        let mut measurable: Vec<&Cell<'_>> = Vec::new();
        let mut verified: BTreeMap<(String, String), VerifyReport> = BTreeMap::new();
        for cell in cells {
            if self.bench.cancel.load(Ordering::Relaxed) {
                break;
            }
            let id = (cell.stack.name.clone(), cell.variant.name.clone());
            if !verified.contains_key(&id) {
                let scenarios: Vec<Scenario> =
                    cells.iter().filter(|c| c.stack.name == id.0 && c.variant.name == id.1).map(|c| c.scenario).collect();
                let report = self.bench.verify_variant(cell.stack, cell.variant, &dedup(scenarios), cell.workers);
                if self.bench.cancel.load(Ordering::Relaxed) {
                    // Stopped mid-way: its unchecked contracts must not read as passed.
                    break;
                }
                self.sink.record_verification(&run.id, &report)?;
                (self.bench.events)(Event::Verified(&report));
                outcome.verifications.push(report.clone());
                verified.insert(id.clone(), report);
            }
            if verified[&id].passed_scenario(cell.scenario) {
                measurable.push(cell);
            }
        }
        let calibrated;
        if self.bench.settings.ramp == Some(RampSetting::Auto) {
            calibrated = self.calibrate_ramps(&measurable, &mut outcome.failed_cells)?;
            measurable = calibrated.iter().collect();
        }
        if self.bench.settings.ceiling && !self.bench.cancel.load(Ordering::Relaxed) {
            self.measure_ceilings(&run.id, &measurable)?;
        }
        // Under the block schedule the cells that can share the server CPUs are paired; the rest
        // (soaks, ramps, sweeps, SLO searches) keep a server of their own per trial.
        let (paired, single): (Vec<&Cell<'_>>, Vec<&Cell<'_>>) = match self.bench.settings.schedule {
            Schedule::Blocks | Schedule::AtOnce => measurable.iter().partition(|c| c.can_pair(&self.bench.settings)),
            Schedule::Trials => (Vec::new(), measurable),
        };
        if !single.is_empty() {
            self.rounds().measure(run, &single, &mut outcome)?;
        }
        if !paired.is_empty() && !self.bench.cancel.load(Ordering::Relaxed) {
            self.blocks().measure(run, &paired, &mut outcome)?;
        }
        outcome.interrupted |= self.bench.cancel.load(Ordering::Relaxed);
        let status = match self.bench.place.hosts.lost() {
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
