//! One slice of one resident in the block schedules: its load, its tree sampled, the noise around
//! it, the warnings it earned, and the queue its connections left served before the next slice.

use crate::error::LabError;
use crate::machine::noise::NoiseProbe;
use crate::machine::sampler;
use crate::run::cell::measure::{cell_warnings, noise_warnings};
use crate::run::cell::served::{Served, Tree};
use crate::run::planning::launches::SLICE_WARMUP;
use crate::run::planning::settings::LoadSettings;
use crate::run::roles::LoadFailure;
use crate::run::schedule::blocks::BlockSchedule;
use crate::run::schedule::blocks::Resident;
use bakeoff_load::LoadReport;
use bakeoff_model::plan::schedule::turn_seconds;
use bakeoff_model::records::results::{LabWarning, TrialRecord};
use bakeoff_model::slo::LoadCurve;
use std::time::{Duration, Instant};

/// A closed loop whose connections wait this long or more for their turn leaves a queue of
/// requests behind that matters; the lab waits for the server to serve it.
const DRAIN_FROM: Duration = Duration::from_millis(50);
/// The longest wait for a server to serve what a load left queued.
const MAX_DRAIN: Duration = Duration::from_secs(5);
/// The window over which a draining server must be quiet.
const DRAIN_WINDOW: Duration = Duration::from_millis(100);

/// What a slice measured of one resident, before it is judged into a trial record.
pub(in crate::run) struct SliceTaken {
    pub(in crate::run) load: Result<bakeoff_load::LoadReport, crate::run::roles::LoadFailure>,
    pub(in crate::run) samples: Vec<bakeoff_model::records::results::ProcessSample>,
    pub(in crate::run) noise: bakeoff_model::records::noise::TrialNoise,
    pub(in crate::run) under_load: Option<bakeoff_model::slo::LoadCurve>,
    pub(in crate::run) started_at: String,
    /// The wall seconds it is charged: a slice loaded at once shares its time among its cells.
    pub(in crate::run) elapsed_s: f64,
}

impl BlockSchedule<'_, '_> {
    /// A resident's curve after one of its slices: once a launch, after the first slice that
    /// measured a closed-model maximum.
    pub(in crate::run) fn resident_curve(
        &self,
        r: &mut Resident<'_, '_>,
        launch: u32,
        load: &Result<LoadReport, LoadFailure>,
    ) -> Result<Option<LoadCurve>, LabError> {
        if r.curve_taken {
            return Ok(None);
        }
        let curve = self.bench.measure_under_load(r.cell, r.addr, r.tree, launch, load)?;
        r.curve_taken = curve.is_some();
        Ok(curve)
    }

    /// One slice of one resident: its load, its tree sampled, the noise around it (the other
    /// residents count as the lab's own), and the warnings it earned.
    pub(in crate::run) fn slice(
        &mut self,
        r: &mut Resident<'_, '_>,
        others: &[u32],
        block: u32,
        launch: u32,
        noisy: Option<f64>,
    ) -> Result<TrialRecord, LabError> {
        let begun = Instant::now();
        let cell = r.cell;
        let (settings, settle) = self.slice_settings(r.slice_factor);
        let plan = settings.plan(cell, r.addr, settle)?;
        let started_at = bakeoff_model::now_rfc3339();
        let cpu_before = self.bench.place.tree_cpu(r.tree);
        let meter = self.bench.place.meter(r.tree, Instant::now() + settle, &self.bench.settings.client_cpus);
        let services_watch = self.bench.place.watch_services_host(r.tree, Instant::now() + settle, &self.bench.services);
        let measured: Vec<u32> = self.bench.lab_pids().into_iter().chain(others.iter().copied()).collect();
        let before: Vec<f64> = measured.iter().map(|&p| sampler::tree_cpu_seconds(p)).collect();
        let probe = NoiseProbe::start();
        self.bench.place.hosts.clear_noise();
        let load = self.bench.run_load(&plan);
        let (samples, host_noise) = meter.finish();
        let mut noise = self.bench.trial_noise(probe, r.tree, (&measured, &before), &samples, host_noise);
        noise.client_hosts.extend(self.bench.place.services_host_noise(services_watch));
        // Before the busy time is closed: the steps' CPU is the server's own, not its idle CPU.
        let under_load = self.resident_curve(r, launch, &load)?;
        // What the slice's connections left queued is this server's work: served now, on its own
        // busy time, not in its peers' next slices.
        self.drain(r.tree, load.as_ref().ok());
        r.busy_cpu_s += self.bench.place.tree_cpu(r.tree) - cpu_before;
        r.busy_wall_s += begun.elapsed().as_secs_f64();
        let taken = SliceTaken { load, samples, noise, under_load, started_at, elapsed_s: begun.elapsed().as_secs_f64() };
        self.slice_record(r, taken, (block, launch), noisy)
    }

    /// The settings of a slice `factor` times the run's length, and how long it settles first (a
    /// longer slice settles longer too: a slow server's first answers come later).
    pub(in crate::run) fn slice_settings(&self, factor: u32) -> (LoadSettings, Duration) {
        let settings = LoadSettings { duration: self.bench.settings.duration * factor.max(1), ..self.bench.settings.clone() };
        (settings, SLICE_WARMUP * factor.max(1))
    }

    /// A resident's slice as a trial record (its `block` and `launch`), with the warnings it
    /// earned: a server that died, noise, a machine not quiet before the launch, the cell's own.
    pub(in crate::run) fn slice_record(
        &self,
        r: &mut Resident<'_, '_>,
        taken: SliceTaken,
        (block, launch): (u32, u32),
        noisy: Option<f64>,
    ) -> Result<TrialRecord, LabError> {
        let SliceTaken { load, samples, noise, under_load, started_at, elapsed_s } = taken;
        let cell = r.cell;
        let load =
            load.map_err(|e| LabError::Input { what: cell.key().label(), problem: format!("load generator: {e}"), hint: e.hint().into() })?;
        let requests: u64 = load.steps.iter().map(|s| s.requests).sum();
        let server = sampler::usage(&samples, requests);
        let died = r.server.as_mut().and_then(Served::exited);
        r.failed |= died.is_some();
        let mut warnings: Vec<LabWarning> = died.map(|exit| LabWarning::ServerDied { exit }).into_iter().collect();
        warnings.extend(noise_warnings(&noise));
        warnings.extend(noisy.map(|cores| LabWarning::NotQuietBeforeTrial { cpu_percent: cores * 100.0 }));
        warnings.extend(cell_warnings(&self.bench.settings, cell, &samples, server.cpu_percent));
        Ok(TrialRecord {
            run_id: String::new(),
            cell: cell.key(),
            trial: block,
            started_at,
            load,
            server,
            samples,
            warnings,
            noise: Some(noise),
            elapsed_s,
            slo: None,
            under_load,
            launch: Some(launch),
            step_usage: Vec::new(),
            joint: None,
        })
    }

    /// Waits (at most four of its connections' turns, and `MAX_DRAIN`) for the server's `tree` to
    /// serve what a closed loop left queued at its end: a slow server with many connections still
    /// holds about one request per connection, which a server that finds its client gone only
    /// learns when it answers. Nothing to wait for after a fast loop, an open model or a failed load.
    pub(in crate::run) fn drain(&self, tree: Tree, load: Option<&bakeoff_load::LoadReport>) {
        let Some(step) = load.and_then(|l| l.steps.last()).filter(|s| s.target_rate.is_none()) else { return };
        // With no answer at all, the queue may be as long as it gets: wait the most.
        let turn_s = turn_seconds(step.connections, step.requests_per_sec).unwrap_or(f64::INFINITY);
        if turn_s >= DRAIN_FROM.as_secs_f64() {
            // Four turns, not one: a busy machine serves the queue slower than the slice did.
            let limit = Duration::from_secs_f64((4.0 * turn_s).min(MAX_DRAIN.as_secs_f64()));
            self.bench.place.wait_tree_quiet(tree, DRAIN_WINDOW, limit);
        }
    }
}
