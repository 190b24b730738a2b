//! A deterministic synthetic run for tests and the format snapshots (the `test-support` feature; not
//! in a release build): three HTTP stacks over two scenarios, a proxy study with a baseline, a failed
//! verification, background noise, one leaking server, an A/A twin, per-trial noise records, an SLO
//! capacity search per HTTP trial (one stack meets the objective nowhere) and a one-minute soak.
//! Histograms are real HDR histograms, so every format reads realistic data.

use bakeoff_load::{ClientUsage, ErrorCounts, LoadReport, PlanSummary, ScheduleKind, StepReport, TimelinePoint, Warning};
use bakeoff_model::noise::{CpuSetNoise, OtherProcess, TrialNoise};
use bakeoff_model::profile::{Component, ServerModel, StackProfile, WhatRan};
use bakeoff_model::results::{
    CeilingRecord, CellKey, Check, LabWarning, MachineInfo, ProcessSample, RunInfo, ServerUsage, TrialRecord, Verdict, VerifyReport,
};
use bakeoff_model::run_data::RunData;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::{search, SearchBudget, Slo, SloSearch, SloStep, StepMiss};
use bakeoff_model::RunStatus;
use hdrhistogram::Histogram;

/// The synthetic run's id.
pub const RUN_ID: &str = "20240501T120000Z-demo";
const MIB: f64 = 1024.0 * 1024.0;

/// The histogram string a `StepReport` carries (base64 of the V2-deflate serialization).
pub use bakeoff_load::encode_histogram;

fn plan(steps: &[StepReport]) -> PlanSummary {
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

fn step(label: &str, connections: u32, target_rate: Option<f64>, h: &Histogram<u64>) -> StepReport {
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
    }
}

/// Deterministic noise in [-1, 1).
fn noise(i: u64) -> f64 {
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

fn with_usage(mut t: TrialRecord, seed: u64, base_mib: f64, slope: f64, jitter: f64) -> TrialRecord {
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
    });
    t
}

/// The demo run. Trials are interleaved across stacks, as the lab runs them.
pub fn run_data() -> RunData {
    // (stack, base latency µs, tail, base RSS MiB)
    let http = [("rust-actix", 70.0, 1.0, 12.0), ("go-fasthttp", 90.0, 2.0, 18.0), ("python-flask", 700.0, 1.5, 45.0)];
    let scenarios = [("hello", 1.0), ("json", 6.0), ("products", 4.0)];
    let mut trials = Vec::new();
    let mut twins = Vec::new();
    for n in 1..=3u32 {
        let drift = 1.0 + 0.02 * (n as f64 - 2.0);
        for (si, (scenario, cost)) in scenarios.iter().enumerate() {
            for (ki, (stack, base, tail, rss)) in http.iter().enumerate() {
                let seed = (n as u64) * 100 + si as u64 * 10 + ki as u64;
                let mean_us = base * cost * drift * if *stack == "python-flask" && n == 2 { 1.25 } else { 1.0 };
                let count = (64.0 / (mean_us * 1.6e-6) * 10.0) as u64;
                let h = latency_histogram(mean_us, *tail, count);
                let leak = if *stack == "go-fasthttp" && *scenario == "json" { 6.0 } else { 0.0 };
                let mut t = with_usage(trial(stack, scenario, n, &[(None, h)]), seed, *rss, leak, 0.6);
                t.slo = Some(slo_search(mean_us * (3.0 + tail), t.load.steps[0].requests_per_sec));
                if leak > 0.0 {
                    t.warnings.push(LabWarning::MemoryGrowth { mib_per_min: leak });
                }
                if *stack == "rust-actix" && *scenario == "hello" && n == 3 {
                    t.load.warnings.push(Warning::ClientSaturated { cpu_percent: 93.0, threads: 2 });
                }
                if *stack == "python-flask" && n == 2 {
                    t.warnings.push(LabWarning::BackgroundNoise { cpu_percent: 14.0 });
                }
                if *stack == "go-fasthttp" && *scenario == "hello" && n == 1 {
                    t.warnings.push(LabWarning::WorkersExceeded { workers: 2, cores_used: 2.9, server_cpus: 4 });
                }
                // products: Rust reads PostgreSQL (and comes close to its ceiling), the others SQLite.
                if *stack == "rust-actix" && *scenario == "products" {
                    t.cell.variant = "postgres".into();
                }
                // The A/A twin of rust-actix hello: the same cell again at the end of each round.
                if *stack == "rust-actix" && *scenario == "hello" {
                    let mut twin = t.clone();
                    twin.cell.twin = true;
                    twin.server.cpu_us_per_request *= 1.0 + 0.01 * noise(seed + 7);
                    for s in &mut twin.load.steps {
                        s.requests_per_sec *= 1.0 + 0.02 * noise(seed + 11);
                    }
                    twins.push(twin);
                }
                trials.push(t);
            }
        }
        trials.push(hung_trial(n));
        trials.extend(ladder_trials(n, drift));
        trials.extend(proxy_trials(n, drift));
        trials.append(&mut twins);
    }
    trials.push(soak_trial());
    RunData {
        run: run_info(),
        status: RunStatus::Complete,
        finished_at: Some("2024-05-01T12:48:00Z".into()),
        verifications: verifications(),
        trials,
        ceilings: ceilings(),
        what_ran: what_ran(),
    }
}

fn slo_objective() -> Slo {
    "p99<=10ms".parse().expect("a valid objective")
}

/// The real search over a queueing server: p99 is `light_p99_us` at low load and grows as
/// 1 / (1 - load) towards the closed-model maximum, so a slow stack meets 10 ms nowhere.
fn slo_search(light_p99_us: f64, max_rps: f64) -> SloSearch {
    let step = |rate: f64| {
        let load = (rate / max_rps).min(0.999);
        let p99 = light_p99_us / (1.0 - load);
        let miss = (p99 > slo_objective().limit_us()).then_some(StepMiss::Latency);
        let requests = (rate * 2.0) as u64;
        Ok::<_, ()>(SloStep { offered_rps: rate, achieved_rps: rate, latency_us: p99, p99_us: p99, requests, errors: 0, miss })
    };
    search(&slo_objective(), max_rps, &SearchBudget::default(), step).expect("the synthetic step never fails")
}

/// A stack that hangs in its second trial: shown, but not ranked and not claimed about.
fn hung_trial(n: u32) -> TrialRecord {
    let mut hung =
        with_usage(trial("node-hangs", "hello", n, &[(None, latency_histogram(60.0, 1.0, 200_000))]), 700 + n as u64, 30.0, 0.0, 0.3);
    if n == 2 {
        let step = &mut hung.load.steps[0];
        step.errors.unanswered = 64;
        step.warnings.push(Warning::StoppedAnswering { step: "main".into(), at_s: 1.4, silent_s: 8.6 });
    }
    hung
}

/// A concurrency sweep of greeting (1, 16 and 64 connections, as ab at rising -c) for Rust and
/// Python in round `n`: Rust's throughput grows with the connections, Python's flattens after 16.
fn ladder_trials(n: u32, drift: f64) -> Vec<TrialRecord> {
    [("rust-actix", 80.0, 1.0, 64.0), ("python-flask", 800.0, 1.6, 16.0)]
        .iter()
        .enumerate()
        .map(|(ki, &(stack, base, tail, knee))| {
            let steps: Vec<StepReport> = [1u32, 16, 64]
                .iter()
                .map(|&c| {
                    // Latency stays at `base` up to the knee and queues beyond it.
                    let mean_us = base * drift * (c as f64 / knee).max(1.0) * (1.0 + 0.03 * noise(n as u64 * 31 + c as u64 + ki as u64));
                    let count = (c as f64 / (mean_us * 1e-6) * 10.0) as u64;
                    step(&format!("{c} connections"), c, None, &latency_histogram(mean_us, tail, count))
                })
                .collect();
            let mut t = trial(stack, "greeting", n, &[]);
            t.load.plan = plan(&steps);
            t.load.steps = steps;
            with_usage(t, 800 + n as u64 * 10 + ki as u64, 14.0 + 30.0 * ki as f64, 0.0, 0.3)
        })
        .collect()
}

/// The proxy study's trials of round `n`: a rate ramp, then a closed-model step for maximum throughput.
fn proxy_trials(n: u32, drift: f64) -> Vec<TrialRecord> {
    let mut trials = Vec::new();
    for (ki, (stack, added, tail, max_rps)) in
        [("c/baseline", 0.0, 1.0, 60_000.0), ("proxy-rust", 25.0, 1.2, 46_000.0), ("proxy-go", 40.0, 3.0, 42_000.0)].iter().enumerate()
    {
        let mut steps: Vec<(Option<f64>, Histogram<u64>)> = [5_000.0, 10_000.0, 20_000.0]
            .iter()
            .map(|&r| {
                let base = (60.0 + r / 1_000.0 + added) * drift;
                (Some(r), latency_histogram(base, *tail, (r * 10.0) as u64))
            })
            .collect();
        steps.push((None, latency_histogram(64.0 / (max_rps * drift) * 1e6 / 1.6, *tail, (max_rps * drift * 10.0) as u64)));
        trials.push(with_usage(trial(stack, "proxy", n, &steps), 900 + ki as u64, 6.0, 0.0, 0.2));
    }
    trials
}

/// A one-minute soak of go-pocketbase products (one trial): RSS sampled every 5 s growing 6 MiB/min
/// from 40 MiB, requests/s falling from 1,200 by 5 each second.
pub fn soak_trial() -> TrialRecord {
    let requests: Vec<u64> = (0..60).map(|s| 1200 - 5 * s).collect();
    let h = latency_histogram(2_000.0, 1.5, requests.iter().sum());
    let mut t = trial("go-pocketbase", "products", 1, &[(None, h)]);
    let step = &mut t.load.steps[0];
    step.duration_s = 60.0;
    step.requests_per_sec = step.requests as f64 / 60.0;
    step.timeline = requests.iter().zip(0..).map(|(&r, second)| TimelinePoint { second, requests: r, ..Default::default() }).collect();
    t.samples = (0..=12)
        .map(|i| ProcessSample {
            t_ms: i * 5_000,
            rss_bytes: (40.0 * MIB + i as f64 * 0.5 * MIB) as u64,
            pss_bytes: 0,
            cpu_s: i as f64 * 2.5,
            processes: 1,
        })
        .collect();
    t.server = ServerUsage {
        cpu_s: 30.0,
        cpu_percent: 50.0,
        cpu_us_per_request: 30.0 * 1e6 / t.load.steps[0].requests as f64,
        peak_rss_bytes: (46.0 * MIB) as u64,
        mean_rss_bytes: (43.0 * MIB) as u64,
        peak_pss_bytes: 0,
        mean_pss_bytes: 0,
        rss_slope_mib_per_min: 6.0,
    };
    t.elapsed_s = 62.0;
    t
}

/// The demo run's identity, machine and settings (a study with claims and an article table).
fn run_info() -> RunInfo {
    RunInfo {
        id: RUN_ID.to_string(),
        started_at: "2024-05-01T12:00:00Z".into(),
        git_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        machine: MachineInfo {
            hostname: "bench-1".into(),
            cpu_model: "AMD EPYC 7B13".into(),
            cores: 8,
            kernel: "6.1.0-18-amd64".into(),
            memory_bytes: 32 << 30,
            os: "Debian GNU/Linux 12".into(),
        },
        study: "demo".into(),
        settings: serde_json::json!({"duration_s": 10, "warmup_s": 5, "trials": 3, "connections": 64,
                                     "load": {"trials": 3, "rank_by": "capacity", "precision": 0.05, "budget": 600.0,
                                              "server_cpus": [0, 1], "client_cpus": [2, 3], "proxy_placement": "own-cpu", "slo": slo_objective(),
                                              "slo_budget": bakeoff_model::slo::SearchBudget::default()},
                                     "server_cpus": "0-3", "client_cpus": "4-7",
                                     "study": {"claims": [
                                         {"statement": "Rust serves hello faster than Python", "scenario": "hello",
                                          "faster": "rust-actix", "slower": "python-flask", "by_percent": 0.0},
                                         {"statement": "Python encodes JSON faster than Rust", "scenario": "json",
                                          "faster": "python-flask", "slower": "rust-actix", "by_percent": 0.0},
                                         {"statement": "Node serves hello faster than Python", "scenario": "hello",
                                          "faster": "node-hangs", "slower": "python-flask", "by_percent": 0.0},
                                         {"statement": "Go serves the document scenario", "scenario": "document",
                                          "faster": "go-fasthttp", "slower": "rust-actix", "by_percent": 0.0},
                                         {"statement": "Rust serves hello 2x-50x what Python serves",
                                          "check": {"kind": "ratio", "a": "rust-actix", "b": "python-flask", "scenario": "hello", "range": [2.0, 50.0]}},
                                         {"statement": "On average Rust is about 100x Go",
                                          "check": {"kind": "geomean", "a": "rust-actix", "b": "go-fasthttp", "scenarios": ["hello", "json"], "range": [50.0, 200.0]}},
                                         {"statement": "Go's memory grows while encoding JSON",
                                          "check": {"kind": "memory_trend", "cell": {"stack": "go-fasthttp", "workers": "all"}, "scenario": "json", "trend": "grows"}},
                                         {"statement": "A laptop on its charger is faster", "testable": false,
                                          "why": "one power state here", "check": {"kind": "qualitative"}}],
                                     "article": {"title": "Python vs Rust", "setup": "4 cores, wrk -c 256",
                                         "reference": "python-flask", "notes": ["The article had 4 cores; here 2."],
                                         "tables": [{"title": "Requests per second",
                                             "given": {"metric": "requests_per_sec", "unit": "req/s", "workers": "all"},
                                             "columns": [{"label": "HTTP", "scenario": "hello"}, {"label": "encode json", "scenario": "json"}],
                                             "rows": [{"label": "Rust", "stack": "rust-actix", "values": [128747.61, 5637.2]},
                                                      {"label": "Python", "stack": "python-flask", "values": [21095.92, 788.76]}]}]}}}),
        services: vec!["nginx 1.22.1 (proxy upstream)".into()],
    }
}

/// What ran for the demo's HTTP stacks (the proxies have none: a run before it was recorded looks
/// the same to a report).
fn what_ran() -> Vec<WhatRan> {
    let w = |stack: &str, variant: &str, model: ServerModel, libs: [&str; 4], components: &str| WhatRan {
        stack: stack.into(),
        variant: variant.into(),
        runtime: "runtime 1".into(),
        framework: "framework 1".into(),
        server: "server 1".into(),
        profile: Some(StackProfile {
            server_model: model,
            json: libs[0].into(),
            msgpack: libs[1].into(),
            database: libs[2].into(),
            pool: libs[3].into(),
        }),
        workers: vec![2],
        pool_size: 8,
        components: Component::parse_lines(components),
    };
    vec![
        w(
            "rust-actix",
            "default",
            ServerModel::AsyncRuntime,
            ["serde_json", "rmp-serde", "rusqlite", "POOL_SIZE per process"],
            "rustc 1.95.0\nactix-web 4.18.1",
        ),
        w(
            "rust-actix",
            "postgres",
            ServerModel::AsyncRuntime,
            ["serde_json", "rmp-serde", "tokio-postgres", "POOL_SIZE per process"],
            "rustc 1.95.0\ntokio-postgres 0.7.18",
        ),
        w(
            "go-fasthttp",
            "default",
            ServerModel::Goroutines,
            ["encoding/json", "tinylib/msgp", "database/sql", "POOL_SIZE per process"],
            "go 1.26.8\ngithub.com/valyala/fasthttp v1.74.0",
        ),
        w("python-flask", "default", ServerModel::Prefork, ["json (stdlib)", "", "sqlite3", "1 per process: one request at a time"], ""),
    ]
}

/// Store ceilings of the products scenario: PostgreSQL near the Rust stack's throughput, SQLite far
/// above every stack.
fn ceilings() -> Vec<CeilingRecord> {
    let c = |store: &str, client: &str, qps: f64, mean: f64, p99: Option<f64>| CeilingRecord {
        run_id: RUN_ID.to_string(),
        store: store.parse().expect("a known store"),
        scenario: Scenario::Products,
        client: client.into(),
        connections: 64,
        duration_s: 10.0,
        queries: (qps * 10.0) as u64,
        queries_per_sec: qps,
        mean_latency_us: mean,
        p99_latency_us: p99,
    };
    vec![
        c("postgres", "pgbench 15.18", 150_000.0, 426.7, Some(1_210.0)),
        c("sqlite", "rusqlite (in-process, SQLite 3.45.0)", 400_000.0, 160.0, Some(410.0)),
    ]
}

fn check(scenario: &str, verdict: Verdict, what: &str, url: &str, reason: &str) -> Check {
    Check { scenario: scenario.parse().expect("a known scenario or *"), verdict, what: what.into(), url: url.into(), reason: reason.into() }
}

fn verifications() -> Vec<VerifyReport> {
    let ok = |stack: &str| VerifyReport {
        stack: stack.into(),
        variant: "default".into(),
        checks: vec![
            check("hello", Verdict::Pass, "body is Hello World!", "http://127.0.0.1:8080/", ""),
            check("json", Verdict::Pass, "body length for n=417", "http://127.0.0.1:8080/json?n=417", ""),
        ],
    };
    let mut python = ok("python-flask");
    python.checks.push(check(
        "json",
        Verdict::Warn,
        "Content-Type",
        "http://127.0.0.1:8080/json?n=3",
        "text/html; charset=utf-8 instead of text/plain",
    ));
    vec![
        ok("rust-actix"),
        ok("go-fasthttp"),
        python,
        VerifyReport {
            stack: "node-express".into(),
            variant: "default".into(),
            checks: vec![
                check("hello", Verdict::Pass, "body is Hello World!", "http://127.0.0.1:8080/", ""),
                check(
                    "json",
                    Verdict::Fail,
                    "body for random n",
                    "http://127.0.0.1:8080/json?n=731",
                    "body is 134261 for every n: the answer is cached",
                ),
            ],
        },
    ]
}
