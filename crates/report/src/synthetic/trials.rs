//! The synthetic run's building blocks: a trial of any cell with real HDR histograms, its load
//! plan and steps, and deterministic RSS samples and server usage.

use super::{MIB, RUN_ID};
use bakeoff_load::{encode_histogram, ClientUsage, ErrorCounts, LoadReport, PlanSummary, ScheduleKind, StepReport, TimelinePoint};
use bakeoff_model::records::noise::{CpuSetNoise, OtherProcess, TrialNoise};
use bakeoff_model::records::results::{CellKey, ProcessSample, ServerUsage, TrialRecord};
use hdrhistogram::Histogram;

/// The plan summary a trial with these steps records (a ramp when a step has a target rate).
pub(super) fn plan(steps: &[StepReport]) -> PlanSummary {
    let open = steps.iter().any(|s| s.target_rate.is_some());
    PlanSummary {
        urls: vec!["http://127.0.0.1:8080/".into()],
        method: "GET".into(),
        connections: 64,
        threads: 2,
        schedule: if open { ScheduleKind::Ramp } else { ScheduleKind::Closed },
        rate: None,
        duration_s: Some(10.0),
        requests: None,
        warmup_s: 5.0,
        timeout_s: 10.0,
        pipeline: 1,
        close: false,
        requests_per_conn: None,
        tls: None,
        protocol: Default::default(),
        streams: None,
        expect_status: Some(200),
        expect_length: None,
        expect_body_hash: None,
        pin_cpus: vec![4, 5, 6, 7],
        cancelled: false,
    }
}

/// `count` latencies around `base_us` with a tail that grows with `tail`, laid out on a quantile grid
/// fine enough to resolve p99.99.
pub fn latency_histogram(base_us: f64, tail: f64, count: u64) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).expect("valid bounds");
    let grid: Vec<f64> = (0..=200).map(|k| 1.0 - 10f64.powf(-(k as f64) / 40.0)).collect();
    let mut recorded = 0;
    for (k, w) in grid.windows(2).enumerate() {
        let u = (w[0] + w[1]) / 2.0;
        let x = -(1.0 - u).ln();
        let v = (base_us * (1.0 + tail * x.powf(1.6) / 4.0)).round().max(1.0) as u64;
        let n = if k == grid.len() - 2 { count - recorded } else { ((w[1] - w[0]) * count as f64).round() as u64 };
        let n = n.min(count - recorded);
        if n > 0 {
            h.record_n(v, n).expect("value within bounds");
            recorded += n;
        }
    }
    h
}

/// One measured step of `h`'s latencies over 10 s.
pub(super) fn step(label: &str, connections: u32, target_rate: Option<f64>, h: &Histogram<u64>) -> StepReport {
    let duration_s = 10.0;
    let requests = h.len();
    let latency = bakeoff_load::latency_stats(h);
    let timeline = (0..10)
        .map(|s| TimelinePoint { second: s, requests: requests / 10, errors: 0, p50_us: latency.p50_us, p99_us: latency.p99_us })
        .collect();
    StepReport {
        label: label.to_string(),
        connections,
        target_rate,
        duration_s,
        requests,
        bytes: requests * 150,
        requests_per_sec: requests as f64 / duration_s,
        bytes_per_sec: requests as f64 * 150.0 / duration_s,
        service_time: target_rate.map(|_| latency.clone()),
        latency,
        errors: ErrorCounts::default(),
        timeline,
        histogram: encode_histogram(h),
        max_schedule_lag_ms: target_rate.map(|_| 0.4),
        warnings: Vec::new(),
        kinds: Vec::new(),
        logins: None,
        tls: None,
        h2: None,
    }
}

/// A trial of `stack` x `scenario` whose steps have the given target rates (None: closed model at 64
/// connections) and histograms. Server usage and samples are flat; callers adjust them.
pub fn trial(stack: &str, scenario: &str, trial: u32, steps: &[(Option<f64>, Histogram<u64>)]) -> TrialRecord {
    let steps: Vec<StepReport> = steps
        .iter()
        .map(|(rate, h)| match rate {
            Some(r) => step(&format!("{r:.0} req/s"), 64, Some(*r), h),
            None => step("64 connections", 64, None, h),
        })
        .collect();
    let load = LoadReport {
        schema_version: 1,
        plan: plan(&steps),
        steps,
        warnings: Vec::new(),
        client: ClientUsage { cpu_user_s: 4.0, cpu_system_s: 3.0, cpu_percent: 70.0, max_rss_bytes: 24 << 20, threads: 2 },
    };
    TrialRecord {
        run_id: RUN_ID.to_string(),
        cell: CellKey {
            stack: stack.into(),
            scenario: scenario.parse().expect("a known scenario"),
            variant: "default".into(),
            workers: 2,
            twin: false,
        },
        trial,
        started_at: format!("2024-05-01T12:{:02}:00Z", trial * 5),
        load,
        server: ServerUsage::default(),
        samples: Vec::new(),
        warnings: Vec::new(),
        noise: None,
        elapsed_s: 16.0,
        slo: None,
        under_load: None,
        launch: None,
        step_usage: Vec::new(),
        joint: None,
    }
}

/// Deterministic noise in [-1, 1).
pub(super) fn noise(i: u64) -> f64 {
    let x = i.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) >> 33;
    (x % 20_000) as f64 / 10_000.0 - 1.0
}

/// RSS samples every second for 30 s (plus two warm-up samples): `base` MiB, growing `slope` MiB/min,
/// with `jitter` MiB of noise.
fn samples(seed: u64, base: f64, slope: f64, jitter: f64) -> Vec<ProcessSample> {
    (-2..=30i64)
        .map(|s| {
            let mib = base + slope * s.max(0) as f64 / 60.0 + jitter * noise(seed * 1000 + (s + 2) as u64);
            ProcessSample {
                t_ms: s * 1000,
                rss_bytes: (mib * MIB) as u64,
                pss_bytes: (mib * 0.9 * MIB) as u64,
                cpu_s: 0.8 * (s.max(0) as f64),
                processes: 3,
            }
        })
        .collect()
}

/// `t` with `samples` and the server usage and noise record they imply.
pub(super) fn with_usage(mut t: TrialRecord, seed: u64, base_mib: f64, slope: f64, jitter: f64) -> TrialRecord {
    t.samples = samples(seed, base_mib, slope, jitter);
    let measured: Vec<_> = t.samples.iter().filter(|s| s.is_measured()).collect();
    let requests: u64 = t.load.steps.iter().map(|s| s.requests).sum();
    let cpu_s = 24.0 + seed as f64 % 3.0;
    t.server = ServerUsage {
        cpu_s,
        cpu_percent: cpu_s / 30.0 * 100.0,
        cpu_us_per_request: cpu_s * 1e6 / requests.max(1) as f64,
        peak_rss_bytes: measured.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        mean_rss_bytes: measured.iter().map(|s| s.rss_bytes).sum::<u64>() / measured.len() as u64,
        peak_pss_bytes: measured.iter().map(|s| s.pss_bytes).max().unwrap_or(0),
        mean_pss_bytes: measured.iter().map(|s| s.pss_bytes).sum::<u64>() / measured.len() as u64,
        rss_slope_mib_per_min: slope,
    };
    t.noise = Some(TrialNoise {
        wall_s: 15.0,
        server: CpuSetNoise { cpus: vec![0, 1, 2, 3], steal_percent: 0.5 * (seed % 3) as f64, other_percent: 2.0 + (seed % 7) as f64 },
        client: CpuSetNoise { cpus: vec![4, 5, 6, 7], steal_percent: 0.0, other_percent: 1.0 + (seed % 2) as f64 },
        busiest_other: Some(OtherProcess { pid: 4000 + seed as u32, name: "dockerd".into(), cpu_percent: 1.5 + (seed % 7) as f64 }),
        client_hosts: Vec::new(),
        energy_j: None,
    });
    t
}
