//! A deterministic synthetic run for tests and the format snapshots (the `test-support` feature; not
//! in a release build): three HTTP stacks over two scenarios, a proxy study with a baseline, a failed
//! verification, background noise, one leaking server, an A/A twin, per-trial noise records, an SLO
//! capacity search per HTTP trial (one stack meets the objective nowhere), a one-minute soak and a
//! scenario file whose trials report their request kinds.
//! Histograms are real HDR histograms, so every format reads realistic data.

mod shop;
mod trials;

pub use trials::{latency_histogram, trial};
use trials::{noise, plan, step, with_usage};

use bakeoff_load::{StepReport, TimelinePoint, Warning};
use bakeoff_model::records::profile::{Component, ServerModel, StackProfile, WhatRan};
use bakeoff_model::records::results::{
    CeilingRecord, Check, LabWarning, MachineInfo, ProcessSample, RunInfo, ServerUsage, TrialRecord, Verdict, VerifyReport,
};
use bakeoff_model::records::run_data::RunData;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::{search, SearchBudget, Slo, SloSearch, SloStep, StepMiss};
use bakeoff_model::RunStatus;
use hdrhistogram::Histogram;

/// The synthetic run's id.
pub const RUN_ID: &str = "20240501T120000Z-demo";
const MIB: f64 = 1024.0 * 1024.0;

/// The histogram string a `StepReport` carries (base64 of the V2-deflate serialization).
pub use bakeoff_load::encode_histogram;

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
                // Latency under load once a launch (each round starts its servers), as a study asks
                // by default.
                if *scenario != "products" {
                    t.under_load = Some(under_load_curve(mean_us * (3.0 + tail), t.load.steps[0].requests_per_sec, 0.4 * tail * tail));
                }
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
                    twin.under_load = None;
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
        trials.extend(shop::shop_trials(n, drift));
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

/// A queueing server's latency at 25, 50, 75, 90 and 100% of its capacity: p99 is `light_p99_us`
/// at no load and grows by `k` x load / (1.02 - load), so a larger `k` puts the knee lower.
fn under_load_curve(light_p99_us: f64, capacity_rps: f64, k: f64) -> bakeoff_model::slo::LoadCurve {
    let points = [0.25, 0.5, 0.75, 0.9, 1.0]
        .iter()
        .map(|&f| {
            let p99 = light_p99_us * (1.0 + k * f / (1.02 - f));
            bakeoff_model::slo::LoadPoint {
                fraction: f,
                offered_rps: f * capacity_rps,
                achieved_rps: f * capacity_rps * if f == 1.0 { 0.97 } else { 1.0 },
                p50_us: p99 / 4.0,
                p99_us: p99,
                p999_us: p99 * 2.5,
                errors: 0,
                cpu_cores: Some(0.9 * f),
            }
        })
        .collect();
    bakeoff_model::slo::LoadCurve { capacity_rps, points }
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
                                              "slo_budget": bakeoff_model::slo::SearchBudget::default(),
                                              "latency_under_load": {"fractions": [0.25, 0.5, 0.75, 0.9, 1.0], "step": 1.0},
                                              "scenario_files": [{"name": "shop", "text_hash": "5d1c0ffee5d1c0ff", "text": shop::SHOP_TEXT}]},
                                     "server_cpus": "0-3", "client_cpus": "4-7",
                                     "study": {"price": "core-hour=0.04", "claims": [
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
        protocol: Default::default(),
        tls: None,
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
