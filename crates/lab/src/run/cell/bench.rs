//! The cell bench: what runs one cell's start, warm-up, meters, load and stop, on this machine or
//! on the hosts the run places: the run's folders and settings, the services it started, the
//! placement its meters read through, and where progress goes. The schedules (rounds, blocks, at
//! once) own the order and the pairing and drive it; it knows nothing of them.

use crate::run::cell::dirs::LabDirs;
use crate::run::cell::meters::Placement;
use crate::run::events::Event;
use crate::run::planning::settings::LoadSettings;
use crate::services::Services;
use std::sync::atomic::{AtomicBool, Ordering};

/// One run's bench: each of its methods starts, measures, checks or stops one cell.
pub struct CellBench<'a> {
    /// The project, the run's scratch folder (a directory per server start) and its fixtures.
    pub(crate) dirs: LabDirs,
    /// A document store to use instead of starting one (`--docstore`).
    pub(crate) external_docstore: Option<String>,
    pub(crate) settings: LoadSettings,
    pub(crate) events: &'a mut dyn FnMut(Event<'_>),
    pub(crate) cancel: &'a AtomicBool,
    pub(crate) services: Services,
    /// Where the servers, services and load generators run, and the meters that read them there.
    pub(crate) place: Placement<'a>,
}

impl CellBench<'_> {
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
        if let Some(lost) = self.place.hosts.server_host.as_ref().and_then(|h| h.lost()) {
            self.cancel.store(true, Ordering::Relaxed);
            return Err(crate::run::roles::LoadFailure::Host(lost));
        }
        self.place.hosts.load(plan, self.cancel)
    }
}
