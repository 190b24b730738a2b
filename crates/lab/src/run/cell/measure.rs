//! One trial of one cell: a fresh server, a quiet machine, the warm-up and the load, the server's
//! process tree sampled throughout, the noise around it, and the warnings the trial earned.

use crate::error::LabError;
use crate::machine::noise::{Measured, NoiseProbe};
use crate::machine::sampler;
use crate::run::cell::bench::CellBench;
use crate::run::cell::served::{Served, Tree};
use crate::run::cell::start::{measured_tree, NO_PROCESS};
use crate::run::events::Event;
use crate::run::planning::cells::Cell;
use crate::run::planning::settings::LoadSettings;
use crate::stacks::manifest::StackKind;
use bakeoff_model::records::noise::TrialNoise;
use bakeoff_model::records::results::{LabWarning, ProcessSample, TrialRecord};
use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

impl CellBench<'_> {
    /// Measures one trial of one cell.
    pub fn measure(&mut self, cell: &Cell<'_>, trial: u32) -> Result<TrialRecord, LabError> {
        let label = self.dirs.new_cell(cell.stack, cell.variant);
        let measured = self.measure_in(cell, trial, &label);
        // The server has stopped (or was dropped, which stops it) on every path out.
        self.note_cell(&label, &format!("trial {trial} of {}", cell.key().label()));
        measured
    }

    /// One trial in the cell directory `label`.
    pub(crate) fn measure_in(&mut self, cell: &Cell<'_>, trial: u32, label: &str) -> Result<TrialRecord, LabError> {
        let begun = Instant::now();
        self.place.hosts.clear_noise();
        self.ensure_services(cell.stack, &[cell.scenario], cell.variant)?;
        let key = cell.key();
        let trial_cpus: Vec<usize> = self.settings.server_cpus.iter().chain(&self.settings.client_cpus).copied().collect();
        let noisy = crate::machine::quiet::wait(&trial_cpus, crate::machine::quiet::MAX_WAIT);
        let (mut server, addr) = self.start_stack(cell.stack, cell.variant, cell.workers, label, &[cell.scenario])?;
        let tree = measured_tree(cell.stack, server.as_ref(), self.place.upstream_tree(&self.services));
        let warmup = self.settings.warmup.max(cell.stack.warmup.unwrap_or_default());
        let plan = self.settings.cell_plan(cell, addr, warmup)?;
        let started_at = bakeoff_model::now_rfc3339();
        let zero = Instant::now() + warmup;
        let meter = self.place.meter(tree, zero, &self.settings.client_cpus);
        let services_watch = self.place.watch_services_host(tree, zero, &self.services);
        let services = self.lab_pids();
        let services_before: Vec<f64> = services.iter().map(|&p| sampler::tree_cpu_seconds(p)).collect();
        let probe = NoiseProbe::start();
        let mut load = self.run_load(&plan);
        // An SLO search and latency under load start from the closed-model maximum, so an open
        // schedule measures it too.
        let wants_max = self.settings.max_throughput || self.settings.slo.is_some() || self.settings.latency_under_load.is_some();
        if let (Ok(report), true) = (&mut load, wants_max && plan.is_open()) {
            self.append_closed_max(report, cell, addr)?;
        }
        let (samples, host_noise) = meter.finish();
        let mut noise = self.trial_noise(probe, tree, (&services, &services_before), &samples, host_noise);
        noise.client_hosts.extend(self.place.services_host_noise(services_watch));
        // After the measurement's CPU and noise are accounted, on the same warm server.
        let slo = match (&load, &self.settings.slo) {
            (Ok(report), Some(objective)) => self.search_slo(objective, cell, addr, report)?,
            _ => None,
        };
        // A trial starts its own server: it is its own launch.
        let under_load = self.measure_under_load(cell, addr, tree, trial.saturating_sub(1), &load)?;
        let died = server.as_mut().and_then(Served::exited);
        let (after, rechecked) = self.after_measuring(cell, trial, label, addr, server.as_mut(), died.is_some());
        if !rechecked.is_empty() {
            (self.events)(Event::CostRechecked { cell: &key, checks: &rechecked });
        }
        let load =
            load.map_err(|e| LabError::Input { what: key.label(), problem: format!("load generator: {e}"), hint: e.hint().into() })?;
        let requests: u64 = load.steps.iter().map(|s| s.requests).sum();
        let server_usage = sampler::usage(&samples, requests);
        let steps: Vec<(f64, u64)> = load.steps.iter().map(|s| (s.duration_s, s.requests)).collect();
        let step_usage = sampler::step_usage(&samples, &steps);
        let mut warnings: Vec<LabWarning> = died.map(|exit| LabWarning::ServerDied { exit }).into_iter().collect();
        warnings.extend(noise_warnings(&noise));
        warnings.extend(after);
        if let Some(cores) = noisy {
            warnings.push(LabWarning::NotQuietBeforeTrial { cpu_percent: cores * 100.0 });
        }
        warnings.extend(cell_warnings(&self.settings, cell, &samples, server_usage.cpu_percent));
        let elapsed_s = begun.elapsed().as_secs_f64();
        Ok(TrialRecord {
            run_id: String::new(),
            cell: key,
            trial,
            started_at,
            load,
            server: server_usage,
            samples,
            warnings,
            noise: Some(noise),
            elapsed_s,
            slo,
            under_load,
            launch: None,
            step_usage,
            joint: None,
        })
    }

    /// The processes whose CPU is the lab's during a load besides the server's: the services and
    /// the client hosts' agents on this machine (the load generators, counted on the client's CPUs).
    pub(crate) fn lab_pids(&self) -> Vec<u32> {
        let mut pids = self.place.services_here(&self.services);
        pids.extend(self.place.hosts.local_agents());
        pids
    }

    /// The trial's noise: the measured tree is the server's plus the services' it uses (their CPU
    /// is the cell's work, counted on the CPUs each runs on: nginx on the client's with `own-cpu`
    /// placement); everything else on the server's or client's CPUs is noise. A server host of
    /// its own measured its own noise (`host_noise`): that is the server CPUs' noise then.
    pub(crate) fn trial_noise(
        &self,
        probe: NoiseProbe,
        tree: Tree,
        (services, services_before): (&[u32], &[f64]),
        samples: &[ProcessSample],
        host_noise: Option<TrialNoise>,
    ) -> TrialNoise {
        let leader = self.place.pid_here(tree).unwrap_or(NO_PROCESS);
        let server_cpu = samples.last().map_or(0.0, |s| s.cpu_s) - samples.first().map_or(0.0, |s| s.cpu_s);
        let upstream = self
            .place
            .upstream_tree(&self.services)
            .and_then(|t| self.place.pid_here(t))
            .filter(|_| self.settings.proxy_placement.upstream_on_client());
        let agents = self.place.hosts.local_agents();
        let (mut on_server, mut on_client) = (0.0, 0.0);
        let mut add = |pid: u32, cpu_s: f64| {
            if Some(pid) == upstream || agents.contains(&pid) {
                on_client += cpu_s
            } else {
                on_server += cpu_s
            }
        };
        add(leader, server_cpu);
        // A baseline's measured tree is the upstream itself: counted once.
        for (&pid, before) in services.iter().zip(services_before).filter(|(&p, _)| p != leader) {
            add(pid, sampler::tree_cpu_seconds(pid) - before);
        }
        let mut pids: HashSet<u32> = sampler::group_members(leader).into_iter().collect();
        pids.extend(services.iter().flat_map(|&p| sampler::group_members(p)));
        // A server or services host's agent on this machine is not named as noise; its tree is
        // what it started, so only its own small CPU (the watch) counts toward the sets' other use.
        pids.extend(self.place.hosts.server_agents_here());
        let mut noise = probe.finish(&Measured {
            server_cpus: &self.settings.server_cpus,
            client_cpus: &self.settings.client_cpus,
            server_cpu_s: on_server,
            client_cpu_s: on_client,
            server_pids: &pids,
        });
        noise.client_hosts = self.place.hosts.take_noise();
        if let (Some(host), None) = (host_noise, self.place.pid_here(tree)) {
            noise.server = host.server;
            // This machine's packages did not serve the requests: their joules say nothing of it.
            noise.energy_j = None;
        }
        noise
    }

    /// Runs the closed model at the same connection count right after an open schedule and adds
    /// its step (label "max", no target rate) to the report: the cell's maximum throughput.
    pub(crate) fn append_closed_max(
        &self,
        report: &mut bakeoff_load::LoadReport,
        cell: &Cell<'_>,
        addr: SocketAddr,
    ) -> Result<(), LabError> {
        let mut closed = self.settings.clone();
        closed.ramp = None;
        closed.rate = None;
        let plan = closed.plan(cell, addr, Duration::ZERO)?;
        let max = self.run_load(&plan).map_err(|e| LabError::Input {
            what: cell.key().label(),
            problem: format!("load generator: {e}"),
            hint: e.hint().into(),
        })?;
        for mut step in max.steps {
            step.label = "max".into();
            report.steps.push(step);
        }
        report.warnings.extend(max.warnings);
        report.client.cpu_user_s += max.client.cpu_user_s;
        report.client.cpu_system_s += max.client.cpu_system_s;
        Ok(())
    }
}

/// What the cell itself earns in any trial: a deliberate bug it reproduces, memory that grows,
/// more cores used than its WORKERS.
pub(crate) fn cell_warnings(
    settings: &LoadSettings,
    cell: &Cell<'_>,
    samples: &[ProcessSample],
    server_cpu_percent: f64,
) -> Vec<LabWarning> {
    let mut warnings = Vec::new();
    if let Some(reproduces) = &cell.variant.reproduces {
        warnings.push(LabWarning::DeliberateBug { reproduces: reproduces.clone() });
    }
    // A scenario file's answers are verified, but only what the file declares (a probe, a cost
    // pair) proves the work behind them, and only on a server the lab started (with the
    // file's database); else every report says so.
    if let bakeoff_model::scenario::Scenario::File(_) = cell.scenario {
        let declared = settings.scenario_file(cell.scenario).is_some_and(|f| f.workload.declares_proof());
        if !declared || cell.stack.unmanaged.is_some() || cell.stack.kind == StackKind::Baseline {
            warnings.push(LabWarning::WorkNotProven { scenario: cell.scenario });
        }
    }
    if let Some(u) = cell.stack.unmanaged {
        // It was given no WORKERS and no CPUs of the lab's: the workers check does not apply.
        let on_client_cpus = u.pid.map(|pid| client_cpus_of_tree(&settings.client_cpus, pid)).unwrap_or_default();
        warnings.push(LabWarning::Unmanaged { pid: u.pid, on_client_cpus, server_cpus: settings.server_cpus.clone() });
        return warnings;
    }
    if let Some(fit) = bakeoff_model::statistics::growth::rss_fit(samples).filter(|f| f.is_growth()) {
        warnings.push(LabWarning::MemoryGrowth { mib_per_min: fit.slope });
    }
    // A baseline's measured process is the upstream nginx, which WORKERS does not size.
    if cell.stack.kind != StackKind::Baseline {
        warnings.extend(LabWarning::workers_check(cell.workers, server_cpu_percent / 100.0, settings.server_cpus.len() as u32));
    }
    warnings
}

/// The client's CPUs that some process of `pid`'s tree may run on: the lab pins the servers it
/// starts, but an unmanaged one keeps the affinity it was started with.
fn client_cpus_of_tree(client_cpus: &[usize], pid: u32) -> Vec<usize> {
    let allowed: std::collections::BTreeSet<usize> =
        crate::machine::sampler::tree_pids(pid).into_iter().flat_map(crate::machine::provenance::allowed_cpus).collect();
    client_cpus.iter().copied().filter(|c| allowed.contains(c)).collect()
}

/// Other processes may use this share of one core (server and client CPUs together) before a
/// trial is flagged as noisy.
const NOISE_LIMIT_PERCENT: f64 = 10.0;
/// The hypervisor may steal this share of one core before a trial is flagged.
const STEAL_LIMIT_PERCENT: f64 = 5.0;

pub(crate) fn noise_warnings(noise: &TrialNoise) -> Vec<LabWarning> {
    let mut out = Vec::new();
    if noise.other_percent() > NOISE_LIMIT_PERCENT {
        out.push(LabWarning::BackgroundNoise { cpu_percent: noise.other_percent() });
    }
    if noise.steal_percent() > STEAL_LIMIT_PERCENT {
        out.push(LabWarning::CpuSteal { cpu_percent: noise.steal_percent() });
    }
    out
}
