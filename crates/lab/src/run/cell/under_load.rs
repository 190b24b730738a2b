//! Latency under load, measured: once a launch, after its first trial (or slice) that measured a
//! closed-model maximum, on the same warm server, one short open-model step at each fraction of
//! the requests/s it just measured — the capacity is reused, not searched for — with the server
//! tree's CPU per step. A launch is one value of each percentile; the report's intervals are over
//! launches.

use crate::error::LabError;
use crate::run::cell::bench::CellBench;
use crate::run::cell::served::Tree;
use crate::run::cell::slo::closed_max;
use crate::run::planning::cells::Cell;
use crate::run::roles::LoadFailure;
use bakeoff_load::LoadReport;
use bakeoff_model::slo::{LoadCurve, LoadPoint, UnderLoad};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl CellBench<'_> {
    /// The curve of `launch` (from 0), when the run asks for one in it; None for an A/A twin (the
    /// same stack again), a load that measured no closed-model maximum, or a cancelled run.
    pub(crate) fn measure_under_load(
        &self,
        cell: &Cell<'_>,
        addr: SocketAddr,
        tree: Tree,
        launch: u32,
        load: &Result<LoadReport, LoadFailure>,
    ) -> Result<Option<LoadCurve>, LabError> {
        let Some(u) = self.settings.latency_under_load.as_ref().filter(|u| u.measures(launch) && !cell.key().twin) else {
            return Ok(None);
        };
        let Some(capacity) = load.as_ref().ok().and_then(closed_max) else { return Ok(None) };
        let mut points = Vec::with_capacity(u.fractions.len());
        for &fraction in &u.fractions {
            match self.under_load_step(u, cell, addr, tree, fraction, capacity)? {
                Some(p) => points.push(p),
                None => return Ok(None),
            }
        }
        Ok(Some(LoadCurve { capacity_rps: capacity, points }))
    }

    /// One open-model step at `fraction` of `capacity` with the trial's connections; None when the
    /// run was cancelled.
    fn under_load_step(
        &self,
        u: &UnderLoad,
        cell: &Cell<'_>,
        addr: SocketAddr,
        tree: Tree,
        fraction: f64,
        capacity: f64,
    ) -> Result<Option<LoadPoint>, LabError> {
        if self.cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let rate = fraction * capacity;
        let mut open = self.settings.clone();
        (open.rate, open.ramp, open.conn_ladder, open.duration) = (Some(rate), None, None, u.step);
        let plan = open.plan(cell, addr, u.warmup())?;
        let (cpu_before, begun) = (self.place.tree_cpu(tree), Instant::now());
        let report = self.run_load(&plan).map_err(|e| LabError::Input {
            what: cell.key().label(),
            problem: format!("load generator under load at {rate:.0} req/s: {e}"),
            hint: e.hint().into(),
        })?;
        let (cpu, wall) = (self.place.tree_cpu(tree) - cpu_before, begun.elapsed().as_secs_f64());
        if report.plan.cancelled || self.cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let step = report.steps.first().ok_or_else(|| LabError::Input {
            what: cell.key().label(),
            problem: "a latency-under-load step measured nothing".into(),
            hint: "this is a bug; the step had a duration".into(),
        })?;
        // A server tree whose CPU cannot be read (it exited) reads 0: no CPU rather than a wrong one.
        Ok(Some(LoadPoint::of(fraction, rate, step, (cpu > 0.0).then_some(cpu), wall)))
    }
}
