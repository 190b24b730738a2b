//! SLO capacity, measured: after a trial's measurement, on the same warm server (started once for
//! the trial, pinned like every trial, stopped after), the bounded search of `bakeoff_model::slo`
//! runs its short open-model steps, starting from the closed-model maximum this trial measured.

use crate::error::LabError;
use crate::run::cell::bench::CellBench;
use crate::run::planning::cells::Cell;
use bakeoff_load::LoadReport;
use bakeoff_model::slo::{search, SearchBudget, Slo, SloSearch, SloStep};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;

/// Why a search stopped before it was done.
enum Stop {
    /// Ctrl-C: the trial keeps what it measured, without a search.
    Cancelled,
    Failed(LabError),
}

impl CellBench<'_> {
    /// The cell's SLO capacity search for this trial; None when the trial measured no closed-model
    /// maximum to start from, or the run was cancelled.
    pub(crate) fn search_slo(
        &self,
        slo: &Slo,
        cell: &Cell<'_>,
        addr: SocketAddr,
        trial: &LoadReport,
    ) -> Result<Option<SloSearch>, LabError> {
        let Some(max) = closed_max(trial) else { return Ok(None) };
        let budget = self.settings.slo_budget;
        match search(slo, max, &budget, |rate| self.slo_step(slo, cell, addr, rate, &budget)) {
            Ok(found) => Ok(Some(found)),
            Err(Stop::Cancelled) => Ok(None),
            Err(Stop::Failed(e)) => Err(e),
        }
    }

    /// One open-model step at `rate` with the trial's connections, its own warm-up and duration.
    fn slo_step(&self, slo: &Slo, cell: &Cell<'_>, addr: SocketAddr, rate: f64, budget: &SearchBudget) -> Result<SloStep, Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Cancelled);
        }
        let mut open = self.settings.clone();
        (open.rate, open.ramp, open.conn_ladder, open.duration) = (Some(rate), None, None, budget.step_duration);
        let plan = open.plan(cell, addr, budget.step_warmup).map_err(Stop::Failed)?;
        let report = self.run_load(&plan).map_err(|e| {
            Stop::Failed(LabError::Input {
                what: cell.key().label(),
                problem: format!("load generator during the SLO search at {rate:.0} req/s: {e}"),
                hint: e.hint().into(),
            })
        })?;
        if report.plan.cancelled || self.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Cancelled);
        }
        let step = report.steps.first().ok_or_else(|| {
            Stop::Failed(LabError::Input {
                what: cell.key().label(),
                problem: "an SLO search step measured nothing".into(),
                hint: "this is a bug; the step had a duration".into(),
            })
        })?;
        Ok(SloStep::judge(slo, rate, step))
    }
}

/// The highest closed-model throughput of the trial's steps (the "max" step after an open
/// schedule, the top of a concurrency sweep), req/s.
pub(crate) fn closed_max(report: &LoadReport) -> Option<f64> {
    let max = report.steps.iter().filter(|s| s.target_rate.is_none()).map(|s| s.requests_per_sec).fold(0.0, f64::max);
    (max > 0.0).then_some(max)
}
