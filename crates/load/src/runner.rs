//! The coordinator: runs each step on T worker threads, merges their recorders, builds the report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::h2::H2Recorder;
use crate::plan::LoadPlan;
use crate::report::{ClientUsage, KindReport, LoadReport, PlanSummary, ScheduleKind, StepReport, SCHEMA_VERSION};
use crate::schedule::{share, Schedule, StepSpec, Stop};
use crate::stats::{encode_histogram, latency_stats, Recorder};
use crate::target::Protocol;
use crate::tls::HandshakeRecorder;
use crate::warnings::Layer;
use crate::warnings::{self, Warning};
use crate::worker::{run_worker, Group, Progress, WorkerResult, WorkerSpec};
use crate::LoadError;

/// Histograms kept beside the report for the HDR log export.
#[derive(Debug, Clone)]
pub struct StepDetail {
    /// The step's label, as in its [`StepReport`].
    pub label: String,
    /// Seconds from the start of the run to the start of this step's measured window.
    pub start_offset_s: f64,
    /// The step's latency histogram, microseconds (the one the report encodes).
    pub latency: Histogram<u64>,
    /// The step's service-time histogram (open schedules), so several clients' add up exactly.
    pub service: Option<Histogram<u64>>,
    /// One (coarser, 2-digit) histogram per measured second.
    pub seconds: Vec<Histogram<u64>>,
}

/// A finished run: its report and the histograms behind it.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// What the run measured.
    pub report: LoadReport,
    /// One per step, in the report's order.
    pub details: Vec<StepDetail>,
}

/// What the live progress line shows; sent about once a second.
#[derive(Debug, Clone)]
pub struct ProgressSnapshot {
    /// The running step's label.
    pub step: String,
    /// Its place among the steps, from 0.
    pub step_index: usize,
    /// How many steps the plan has.
    pub steps: usize,
    /// Seconds into the step's measured window (below 0 during its warmup).
    pub elapsed_s: f64,
    /// Planned length of the measured window, seconds (None for request-count steps).
    pub planned_s: Option<f64>,
    /// Responses so far in this step, as its threads last counted them.
    pub requests: u64,
    /// Failed requests so far in this step, likewise.
    pub errors: u64,
}

fn groups(plan: &LoadPlan) -> Vec<Group> {
    let mut g: Vec<Group> = Vec::new();
    for (i, t) in plan.targets.iter().enumerate() {
        match g.iter_mut().find(|x| x.addr == t.addr) {
            Some(x) => x.targets.push(i),
            None => g.push(Group { addr: t.addr, targets: vec![i] }),
        }
    }
    g
}

pub fn summary(plan: &LoadPlan, cancelled: bool) -> PlanSummary {
    PlanSummary {
        urls: plan.targets.iter().map(|t| t.url.clone()).collect(),
        method: plan.method.clone(),
        connections: plan.connections,
        threads: plan.threads,
        schedule: match plan.schedule {
            Schedule::Closed => ScheduleKind::Closed,
            Schedule::Rate(_) => ScheduleKind::Rate,
            Schedule::Ramp(_) => ScheduleKind::Ramp,
        },
        rate: plan.schedule.constant_rate(),
        duration_s: if let Stop::Duration(d) = plan.stop { Some(d.as_secs_f64()) } else { None },
        requests: if let Stop::Requests(n) = plan.stop { Some(n) } else { None },
        warmup_s: plan.warmup.as_secs_f64(),
        timeout_s: plan.timeout.as_secs_f64(),
        pipeline: plan.pipeline,
        close: plan.close,
        requests_per_conn: plan.requests_per_conn,
        tls: plan.tls.clone(),
        protocol: plan.protocol,
        streams: (plan.protocol == Protocol::Http2).then_some(plan.streams),
        expect_status: plan.checks.expect_status,
        expect_length: plan.checks.expect_length,
        expect_body_hash: plan.checks.expect_body_hash.map(|h| format!("{h:016x}")),
        pin_cpus: plan.pin_cpus.clone(),
        cancelled,
    }
}

/// Runs the plan (blocking), calling `on_progress` about once a second; setting `cancel` stops it
/// within a housekeeping tick and returns what was measured, flagged with `Warning::Cancelled`.
pub fn run_observed(
    plan: &LoadPlan,
    cancel: &AtomicBool,
    mut on_progress: Option<&mut dyn FnMut(&ProgressSnapshot)>,
) -> Result<RunOutput, LoadError> {
    let groups = groups(plan);
    let specs = plan.steps();
    let run_start = Instant::now();
    let mut steps = Vec::new();
    let mut details = Vec::new();
    let (mut cpu_user, mut cpu_sys, mut wall) = (0.0f64, 0.0f64, 0.0f64);
    let mut cancelled = false;
    for (si, step) in specs.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            cancelled = true;
            break;
        }
        let epoch = Instant::now();
        let step_offset = epoch.duration_since(run_start).as_secs_f64() + step.warmup.as_secs_f64();
        let at = StepAt { index: si, of: specs.len(), epoch };
        let results = run_step(plan, &groups, step, &at, cancel, &mut on_progress)?;
        wall += epoch.elapsed().as_secs_f64();
        cancelled |= cancel.load(Ordering::Relaxed);
        let warm_ns = step.warmup.as_nanos() as u64;
        let names = plan.deck.as_ref().map_or(&[][..], |d| &d.kinds[..]);
        let mut rec = Recorder::new(step.rate.is_some(), warm_ns, names.len());
        let mut ended = warm_ns;
        for r in &results {
            rec.merge(&r.rec);
            ended = ended.max(r.ended_ns);
            cpu_user += r.cpu.0;
            cpu_sys += r.cpu.1;
        }
        let starved: u32 = results.iter().map(|r| r.starved).sum();
        let mut report = step_report(step, &rec, ended, starved, cancelled);
        report.kinds = kind_reports(names, &rec, report.duration_s);
        if let Some(deck) = &plan.deck {
            report.warnings.extend(mix_drift(&step.label, deck, &report.kinds));
        }
        report.warnings.extend(stopped_answering(&step.label, &results, warm_ns));
        report.logins = plan.deck.as_ref().and_then(|d| d.login.as_ref()).map(|_| {
            results.iter().fold(crate::report::LoginCounts::default(), |mut all, r| {
                all.merge(&r.logins);
                all
            })
        });
        report.tls = handshakes(&results).map(|h| h.report(report.duration_s));
        report.h2 = h2_seen(&results).map(|h| h.report(plan.streams));
        report.warnings.extend(protocol_failures(&step.label, &report));
        steps.push(report);
        details.push(StepDetail {
            label: step.label.clone(),
            start_offset_s: step_offset,
            latency: rec.latency.clone(),
            service: rec.service.clone(),
            seconds: rec.timeline.iter().map(|s| s.hist.clone()).collect(),
        });
        if cancelled {
            break;
        }
    }
    let client = client_usage(plan.threads, cpu_user, cpu_sys, wall);
    let warnings = run_warnings(&client, &steps, cancelled);
    let report = LoadReport { schema_version: SCHEMA_VERSION, plan: summary(plan, cancelled), steps, warnings, client };
    Ok(RunOutput { report, details })
}

/// The workers' handshakes together (a TLS plan).
fn handshakes(results: &[WorkerResult]) -> Option<HandshakeRecorder> {
    results.iter().filter_map(|r| r.handshakes.as_ref()).fold(None, |all, h| {
        let mut all = all.unwrap_or_else(HandshakeRecorder::new);
        all.merge(h);
        Some(all)
    })
}

/// The workers' HTTP/2 connections together (an HTTP/2 plan).
fn h2_seen(results: &[WorkerResult]) -> Option<H2Recorder> {
    results.iter().filter_map(|r| r.h2.as_ref()).fold(None, |all, h| {
        let mut all: H2Recorder = all.unwrap_or_default();
        all.merge(h);
        Some(all)
    })
}

/// A warning per protocol layer that failed in the step, quoting its first failure.
fn protocol_failures(step: &str, r: &StepReport) -> Vec<Warning> {
    let tls = r.tls.as_ref().and_then(|t| t.first_error.clone()).map(|e| (Layer::Tls, r.errors.tls, e));
    let h2 = r.h2.as_ref().and_then(|h| h.first_error.clone()).map(|e| (Layer::Http2, r.errors.malformed + r.errors.reset, e));
    [tls, h2]
        .into_iter()
        .flatten()
        .filter(|(_, failed, _)| *failed > 0)
        .map(|(layer, failed, error)| Warning::ProtocolFailed { step: step.to_string(), layer, failed, error })
        .collect()
}

/// Where a step stands in the run, for progress lines.
struct StepAt {
    index: usize,
    of: usize,
    epoch: Instant,
}

/// Runs one step: a worker thread per share of the connections, watched until all finish (passing
/// the caller's cancel on, reporting progress once a second). Workers watch a flag of their own, so
/// a failed spawn can stop the others.
fn run_step(
    plan: &LoadPlan,
    groups: &[Group],
    step: &StepSpec,
    at: &StepAt,
    cancel: &AtomicBool,
    on_progress: &mut Option<&mut dyn FnMut(&ProgressSnapshot)>,
) -> Result<Vec<WorkerResult>, LoadError> {
    let threads = plan.threads.min(step.connections).max(1);
    let warm_ns = step.warmup.as_nanos() as u64;
    let end_ns = match step.stop {
        Stop::Duration(d) => Some(warm_ns + d.as_nanos() as u64),
        Stop::Requests(_) => None,
    };
    let stop = AtomicBool::new(false);
    let progress: Vec<Progress> = (0..threads).map(|_| Progress::default()).collect();
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut first_conn = 0usize;
        for t in 0..threads {
            let conns = share(step.connections as u64, threads, t) as u32;
            let spec = WorkerSpec {
                plan,
                groups,
                first_conn,
                connections: conns,
                rate: step.rate.map(|r| r / threads as f64),
                phase: t as f64 / threads as f64,
                budget: match step.stop {
                    Stop::Requests(n) => Some(share(n, threads, t)),
                    Stop::Duration(_) => None,
                },
                epoch: at.epoch,
                measure_start_ns: warm_ns,
                end_ns,
                cancel: &stop,
                progress: &progress[t as usize],
                pin_cpu: (!plan.pin_cpus.is_empty()).then(|| plan.pin_cpus[t as usize % plan.pin_cpus.len()]),
            };
            first_conn += conns as usize;
            match std::thread::Builder::new().name(format!("load-{t}")).spawn_scoped(s, move || run_worker(spec)) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(LoadError::Spawn(e));
                }
            }
        }
        let snapshot = |elapsed_s: f64| ProgressSnapshot {
            step: step.label.clone(),
            step_index: at.index,
            steps: at.of,
            elapsed_s,
            planned_s: end_ns.map(|e| (e - warm_ns) as f64 / 1e9),
            requests: progress.iter().map(|p| p.requests.load(Ordering::Relaxed)).sum(),
            errors: progress.iter().map(|p| p.errors.load(Ordering::Relaxed)).sum(),
        };
        watch(&handles, cancel, &stop, on_progress, || snapshot(at.epoch.elapsed().as_secs_f64() - step.warmup.as_secs_f64()));
        handles.into_iter().map(|h| h.join().map_err(|_| LoadError::WorkerPanicked)?).collect()
    })
}

/// Waits for the workers, passing a cancel on and reporting progress once a second.
fn watch<T>(
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    cancel: &AtomicBool,
    stop: &AtomicBool,
    on_progress: &mut Option<&mut dyn FnMut(&ProgressSnapshot)>,
    snapshot: impl Fn() -> ProgressSnapshot,
) {
    let mut last = Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        if cancel.load(Ordering::Relaxed) {
            stop.store(true, Ordering::Relaxed);
        }
        if let Some(cb) = on_progress.as_mut() {
            if last.elapsed() >= Duration::from_secs(1) {
                last = Instant::now();
                cb(&snapshot());
            }
        }
    }
}

/// The report of one step from its merged recorder.
fn step_report(step: &StepSpec, rec: &Recorder, ended_ns: u64, starved: u32, cancelled: bool) -> StepReport {
    let warm_ns = step.warmup.as_nanos() as u64;
    let duration_s = ((ended_ns - warm_ns) as f64 / 1e9).max(1e-9);
    let rps = rec.requests as f64 / duration_s;
    let lag_ms = step.rate.is_some().then(|| rec.max_lag_ns as f64 / 1e6);
    StepReport {
        label: step.label.clone(),
        connections: step.connections,
        target_rate: step.rate,
        duration_s,
        requests: rec.requests,
        bytes: rec.bytes,
        requests_per_sec: rps,
        bytes_per_sec: rec.bytes as f64 / duration_s,
        latency: latency_stats(&rec.latency),
        service_time: rec.service.as_ref().map(latency_stats),
        errors: rec.errors.clone(),
        timeline: rec.timeline_points(),
        histogram: encode_histogram(&rec.latency),
        max_schedule_lag_ms: lag_ms,
        warnings: step_warnings(step, rec, rps, lag_ms, starved, cancelled),
        kinds: Vec::new(),
        logins: None,
        tls: None,
        h2: None,
    }
}

/// Each deck kind's results, named, over the step's measured window.
fn kind_reports(names: &[String], rec: &Recorder, duration_s: f64) -> Vec<KindReport> {
    names
        .iter()
        .zip(&rec.kinds)
        .map(|(name, k)| KindReport {
            name: name.clone(),
            requests: k.requests,
            requests_per_sec: k.requests as f64 / duration_s,
            latency: latency_stats(&k.latency),
            errors: k.errors.clone(),
            histogram: encode_histogram(&k.latency),
        })
        .collect()
}

/// Kinds whose share of the requests sent (answered or failed in transport) is more than
/// [`warnings::MIX_POINTS`] from their share of the deck.
fn mix_drift(step: &str, deck: &crate::deck::PlanDeck, kinds: &[KindReport]) -> Vec<Warning> {
    let sent: Vec<u64> = kinds.iter().map(|k| k.requests + k.errors.transport()).collect();
    let total: u64 = sent.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    kinds
        .iter()
        .zip(sent)
        .enumerate()
        .filter_map(|(i, (k, n))| {
            let in_deck = deck.entries.iter().filter(|e| usize::from(e.kind) == i).count();
            let deck_percent = 100.0 * in_deck as f64 / deck.entries.len() as f64;
            let sent_percent = 100.0 * n as f64 / total as f64;
            ((sent_percent - deck_percent).abs() > warnings::MIX_POINTS).then(|| Warning::MixDrift {
                step: step.to_string(),
                request_kind: k.name.clone(),
                deck_percent,
                sent_percent,
            })
        })
        .collect()
}

/// What can be wrong with one step's numbers.
fn step_warnings(step: &StepSpec, rec: &Recorder, rps: f64, lag_ms: Option<f64>, starved: u32, cancelled: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(target) = step.rate {
        if rps < warnings::RATE_FRACTION * target && !cancelled {
            w.push(Warning::TargetRateNotReached { step: step.label.clone(), target_rps: target, achieved_rps: rps });
        }
    }
    let e = &rec.errors;
    let attempts = rec.requests + e.transport();
    let errors = e.total();
    if attempts > 0 && errors as f64 > warnings::ERROR_FRACTION * attempts as f64 {
        w.push(Warning::HighErrorRate { step: step.label.clone(), errors, attempts, percent: 100.0 * errors as f64 / attempts as f64 });
    }
    if let Some(l) = lag_ms.filter(|&l| l > warnings::LAG_MS) {
        w.push(Warning::ScheduleLag { step: step.label.clone(), max_lag_ms: l });
    }
    if rec.requests == 0 && !cancelled {
        w.push(Warning::NoResponses { step: step.label.clone() });
    }
    // In a closed model every connection should be answered; in an open model an idle
    // connection only means the rate needed fewer.
    if step.rate.is_none() && rec.requests > 0 && starved > 0 && !cancelled {
        w.push(Warning::StarvedConnections { step: step.label.clone(), starved, connections: step.connections });
    }
    w
}

fn client_usage(threads: u32, cpu_user: f64, cpu_sys: f64, wall: f64) -> ClientUsage {
    let cpu_percent = if wall > 0.0 { 100.0 * (cpu_user + cpu_sys) / wall } else { 0.0 };
    ClientUsage { cpu_user_s: cpu_user, cpu_system_s: cpu_sys, cpu_percent, max_rss_bytes: crate::usage::max_rss_bytes(), threads }
}

/// The run's warnings: a saturated client, then every step's own, then a cancel.
fn run_warnings(client: &ClientUsage, steps: &[StepReport], cancelled: bool) -> Vec<Warning> {
    let mut all = Vec::new();
    if client.cpu_percent >= warnings::SATURATED_FRACTION * 100.0 * client.threads as f64 {
        all.push(Warning::ClientSaturated { cpu_percent: client.cpu_percent, threads: client.threads });
    }
    for s in steps {
        all.extend(s.warnings.iter().cloned());
    }
    if cancelled {
        all.push(Warning::Cancelled);
    }
    all
}

/// The server stopped answering if every client thread with connections saw a stall; it stopped
/// when the last of them got its last response.
fn stopped_answering(step: &str, results: &[WorkerResult], measure_start_ns: u64) -> Option<Warning> {
    let stalls: Option<Vec<(u64, u64)>> = results.iter().map(|r| r.stall).collect();
    let stalls = stalls.filter(|s| !s.is_empty())?;
    let start = stalls.iter().map(|s| s.0).max()?;
    // Threads silent at different times mean a slow server, not a stopped one.
    let end = stalls.iter().map(|s| s.1).min().filter(|&end| end > start)?;
    let at_s = start.saturating_sub(measure_start_ns) as f64 / 1e9;
    Some(Warning::StoppedAnswering { step: step.to_string(), at_s, silent_s: (end - start) as f64 / 1e9 })
}
