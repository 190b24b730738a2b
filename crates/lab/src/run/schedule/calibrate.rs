//! What is measured before the cells: the backing stores' own ceiling, and each proxy's ladder for
//! `--ramp auto` from its closed-model maximum.

use crate::error::LabError;
use crate::run::events::Event;
use crate::run::planning::cells::Cell;
use crate::run::runner::Lab;
use crate::stacks::manifest::{Database, StackKind};
use bakeoff_model::records::results::{CellKey, StoreKind};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::{auto_ladders, RampSetting};
use std::time::Duration;

impl Lab<'_> {
    /// Measures the backing stores' own throughput for the data scenarios' queries (the store
    /// ceiling), once per store the measured cells use. A failure is reported, not fatal: the
    /// stacks' numbers stand without it.
    pub(crate) fn measure_ceilings(&mut self, run_id: &str, cells: &[&Cell<'_>]) -> anyhow::Result<()> {
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
        let sqlite = self.bench.dirs.data_dir.join("products.sqlite");
        // A soak's long duration is for the stacks: the store's own rate is known within seconds.
        let duration = self.bench.settings.duration.min(CEILING_MAX);
        let (connections, cpus) = (self.bench.settings.connections, self.bench.settings.server_cpus.clone());
        for kind in wanted {
            let store = match kind {
                StoreKind::Postgres => self.bench.services.postgres.as_ref().map(CeilingStore::Postgres),
                StoreKind::Docstore => self.bench.services.docstore.as_ref().map(CeilingStore::Docstore),
                StoreKind::Sqlite => Some(CeilingStore::Sqlite(&sqlite)),
            };
            let Some(store) = store else { continue };
            match ceiling::measure(store, run_id, connections, duration, &cpus) {
                Ok(record) => {
                    self.sink.record_ceiling(&record)?;
                    (self.bench.events)(Event::CeilingMeasured(&record));
                }
                Err(e) => (self.bench.events)(Event::CeilingFailed { store: kind, error: e.to_string() }),
            }
        }
        Ok(())
    }

    /// Replaces `--ramp auto` by one ladder per cell (`auto_ladders`): each cell's closed-model
    /// maximum is measured now, then all ladders share their rates and each climbs to what its cell
    /// sustains, so proxies are compared at common rates and none is measured queueing.
    pub(crate) fn calibrate_ramps<'c>(
        &mut self,
        cells: &[&Cell<'c>],
        failed: &mut Vec<(CellKey, String)>,
    ) -> anyhow::Result<Vec<Cell<'c>>> {
        if !cells.iter().any(|c| c.stack.kind == StackKind::Baseline) {
            Err(LabError::Selection(
                "`--ramp auto` compares each proxy with the baseline at common rates: add the c/baseline stack".into(),
            ))?;
        }
        let saved = self.bench.settings.clone();
        self.bench.settings.ramp = None;
        self.bench.settings.rate = None;
        self.bench.settings.max_throughput = false;
        self.bench.settings.duration = saved.duration.min(Duration::from_secs(5));
        let mut maxima = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            let probe = self.bench.measure(cell, 0);
            let max = probe.map(|t| t.load.steps.iter().map(|s| s.requests_per_sec).fold(0.0, f64::max));
            match max {
                Ok(m) if m >= 10.0 => maxima.push((i, m)),
                // A cell that cannot be calibrated is not measured; the others keep their ladders.
                other => {
                    let error = match other {
                        Ok(m) => format!("reached only {m:.0} req/s while calibrating `--ramp auto`; see its server log"),
                        Err(e) => format!("calibrating `--ramp auto`: {e}"),
                    };
                    (self.bench.events)(Event::CellFailed { cell: &cell.key(), error: error.clone() });
                    failed.push((cell.key(), error));
                }
            }
        }
        self.bench.settings = saved;
        let step_duration = Duration::from_secs(self.bench.settings.duration.as_secs().max(1));
        let ladders = auto_ladders(&maxima, |&i| cells[i].stack.kind == StackKind::Baseline, step_duration);
        let mut out: Vec<Cell<'c>> = Vec::new();
        for ((i, ramp), (_, max)) in ladders.into_iter().zip(&maxima) {
            (self.bench.events)(Event::RampCalibrated { cell: &cells[i].key(), ramp: &ramp, max: *max });
            out.push(Cell { ramp: Some(ramp), ..cells[i].clone() });
        }
        // What the run's settings record: the reference's ladder (each trial keeps its own rates).
        let reference = out.iter().find(|c| c.stack.kind == StackKind::Baseline).and_then(|c| c.ramp.clone());
        self.bench.settings.ramp = reference.map(RampSetting::Ladder);
        Ok(out)
    }
}

/// The store ceiling measures at most this long, whatever the run's duration.
const CEILING_MAX: Duration = Duration::from_secs(10);
