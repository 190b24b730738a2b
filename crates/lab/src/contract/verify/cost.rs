//! Proof of work by CPU cost: a request that asks for more work must cost the server more CPU.
//! For each pair (heavy, light) the load generator sends a short, time-bounded burst of each while
//! the server's process tree CPU time (/proc: utime + stime, reaped children included) is read
//! before and after; the ratio of the CPU per request must exceed what every honest stack
//! exceeds by a wide margin (docs/scenarios.md, "Proof of work"). A precomputed or closed-form
//! answer costs what the light request costs, and fails here although its body is right.

use super::{fail, warn, Checks, Target};
use crate::host::sampler::tree_cpu_seconds;
use bakeoff_model::results::{CheckScope, Verdict};
use bakeoff_model::scenario::Scenario;
use rand::Rng;
use std::time::Duration;

/// One comparison: the heavy request (inputs drawn at random per burst URL), the light one, and
/// the least ratio of CPU per request an honest stack shows, with a wide margin.
struct Pair {
    scenario: Scenario,
    heavy: &'static str,
    light: &'static str,
    min_ratio: f64,
    question: &'static str,
}

/// Thresholds sit well below the lowest ratio an honest stack of the repository measured and
/// above what a precomputed answer measures (about 1.0-1.3 under noise); docs/scenarios.md lists
/// the measured ratios. `products` is measured and shown but not judged by cost (0.0): a driver's
/// query can cost little beside a slow framework, so the statement count and the live-data probes
/// judge it.
const PAIRS: [Pair; 4] = [
    Pair { scenario: Scenario::Json, heavy: "/json?n=1000", light: "/json?n=1", min_ratio: 1.6, question: "is the answer precomputed?" },
    Pair {
        scenario: Scenario::Loop,
        heavy: "/loop?n=2000000",
        light: "/loop?n=0",
        min_ratio: 2.0,
        question: "is the loop replaced by a formula?",
    },
    Pair { scenario: Scenario::Msgpack, heavy: "/msgpack", light: "/", min_ratio: 2.0, question: "are the records decoded per request?" },
    Pair { scenario: Scenario::Products, heavy: "/products", light: "/", min_ratio: 0.0, question: "is the database read per request?" },
];

/// Warm-up over every route first (JIT compilers and lazy initialisation would otherwise bill
/// the first burst), then one measured burst per route.
const WARMUP: Duration = Duration::from_millis(300);
const BURST: Duration = Duration::from_millis(400);
/// A measured burst lasts until the server used this much CPU (20 clock ticks) and answered this
/// many requests, or until MAX_BURST.
const MIN_CPU: f64 = 0.2;
const MIN_REQUESTS: u64 = 20;
const FEWEST_REQUESTS: u64 = 3;
const MAX_BURST: Duration = Duration::from_secs(4);
/// Distinct random inputs per burst, so a cache per input still pays for most requests.
const INPUTS: usize = 64;

/// CPU per request over one burst.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    pub us_per_request: f64,
    pub requests: u64,
}

/// Checks every pair whose scenario the target serves; needs the server's pid (absent for a
/// baseline, which is not checked).
pub(super) fn check(checks: &mut Checks, target: &Target<'_>) {
    let Some(pid) = target.server_pid else { return };
    let pairs: Vec<&Pair> = PAIRS.iter().filter(|p| target.scenarios.contains(&p.scenario)).collect();
    if pairs.is_empty() {
        return;
    }
    let mut all: Vec<String> = pairs.iter().flat_map(|p| heavy_paths(p)).collect();
    all.extend(pairs.iter().map(|p| p.light.to_string()));
    if let Ok(plan) = burst_plan(target, &all, WARMUP) {
        let _ = bakeoff_load::run(&plan);
    }
    let mut lights: Vec<(&str, Result<Cost, String>)> = Vec::new();
    for p in pairs {
        let light = match lights.iter().find(|(path, _)| *path == p.light) {
            Some((_, cost)) => cost.clone(),
            None => {
                let cost = burst(target, pid, &[p.light.to_string()], BURST);
                lights.push((p.light, cost.clone()));
                cost
            }
        };
        let reads_before = reads(target, p);
        let heavy = burst(target, pid, &heavy_paths(p), BURST);
        if let (Some(before), Ok(h)) = (reads_before, &heavy) {
            let outcome = before.and_then(|b| Ok((b, reads(target, p).expect("a store that counted counts again")?)));
            let outcome = outcome.map_err(|e| (Verdict::Warn, format!("could not count the database's statements: {e}")));
            let what = "the database runs at least one statement per request";
            checks.add_measured(
                CheckScope::Scenario(p.scenario),
                what,
                p.heavy,
                outcome.and_then(|(b, a)| judge_reads(a.saturating_sub(b), h.requests)),
            );
        }
        let outcome = heavy.and_then(|h| light.map(|l| (h, l))).map_err(|e| (Verdict::Warn, e)).and_then(|(h, l)| judge(p, h, l));
        let what = format!("CPU cost scales with the work: {} vs {}", p.heavy, p.light);
        checks.add_measured(CheckScope::Scenario(p.scenario), &what, p.heavy, outcome);
    }
}

/// The statements the scenario's store has run so far, where it counts them.
fn reads(target: &Target<'_>, p: &Pair) -> Option<Result<u64, String>> {
    match p.scenario {
        Scenario::Products => target.products?.reads(),
        _ => None,
    }
}

/// Proof of work at the database: every answered request ran at least one statement.
fn judge_reads(statements: u64, requests: u64) -> Result<String, (Verdict, String)> {
    let per = statements as f64 / requests.max(1) as f64;
    let figure = format!("{statements} statements over {requests} requests, {per:.2} per request");
    if statements >= requests {
        Ok(figure)
    } else {
        fail(format!("the database ran fewer statements than the stack answered requests ({figure}): is the answer cached?"))
    }
}

/// The heavy request with random inputs where the contract allows them.
fn heavy_paths(p: &Pair) -> Vec<String> {
    let mut rng = rand::thread_rng();
    match p.scenario {
        Scenario::Json => (0..INPUTS).map(|_| format!("/json?n={}", rng.gen_range(900..=1000))).collect(),
        Scenario::Loop => (0..INPUTS).map(|_| format!("/loop?n={}", rng.gen_range(2_000_000..=2_200_000))).collect(),
        _ => vec![p.heavy.to_string()],
    }
}

/// Pass with the measured figure, or fail naming the scenario and why.
fn judge(p: &Pair, heavy: Cost, light: Cost) -> Result<String, (Verdict, String)> {
    let ratio = heavy.us_per_request / light.us_per_request;
    let figures = format!(
        "{:.0} µs vs {:.1} µs of server CPU per request over {} and {} requests",
        heavy.us_per_request, light.us_per_request, heavy.requests, light.requests
    );
    if !ratio.is_finite() || light.us_per_request <= 0.0 {
        return warn(format!("could not measure: the light burst used no CPU time the kernel counted ({figures})"));
    }
    if ratio >= p.min_ratio {
        return Ok(format!("{ratio:.1}x ({figures})"));
    }
    let light_input = p.light.split_once('?').map(|(_, q)| q).unwrap_or(p.light);
    let costs = if ratio < 1.5 { "costs the same as".to_string() } else { format!("costs only {ratio:.1}x") };
    fail(format!(
        "{} {costs} {light_input} ({ratio:.1}x; honest stacks measure >= {:.1}x; {figures}): {}",
        p.heavy, p.min_ratio, p.question
    ))
}

/// Runs `paths` round-robin on four connections in rounds, each twice as long as the one before
/// (a request still running when a round ends is lost, so slow requests need longer rounds),
/// until the server tree has used [`MIN_CPU`] and answered [`MIN_REQUESTS`] (CPU time is counted
/// in 10 ms clock ticks) or [`MAX_BURST`] would pass; then at least [`FEWEST_REQUESTS`] will do.
/// Returns the CPU per answered request.
fn burst(target: &Target<'_>, pid: u32, paths: &[String], first_round: Duration) -> Result<Cost, String> {
    let (before, start) = (tree_cpu_seconds(pid), std::time::Instant::now());
    let (mut requests, mut errors, mut round) = (0u64, 0u64, first_round);
    loop {
        let report = bakeoff_load::run(&burst_plan(target, paths, round)?).map_err(|e| format!("burst: {e}"))?;
        requests += report.steps[0].requests;
        // A slow request cut off at the end of a round is not an error of the stack.
        errors += report.steps[0].errors.total() - report.steps[0].errors.unanswered;
        let cpu_s = tree_cpu_seconds(pid) - before;
        round *= 2;
        let last = start.elapsed() + round > MAX_BURST;
        if (cpu_s >= MIN_CPU && requests >= MIN_REQUESTS) || last {
            if errors * 20 > requests + errors {
                return Err(format!("{errors} of {} requests to {} failed during the burst", requests + errors, paths[0]));
            }
            if cpu_s < MIN_CPU || requests < FEWEST_REQUESTS {
                return Err(format!(
                    "too little to measure within {MAX_BURST:?}: {requests} requests answered, {cpu_s:.2} s of server CPU"
                ));
            }
            return Ok(Cost { us_per_request: cpu_s * 1e6 / requests as f64, requests });
        }
    }
}

fn burst_plan(target: &Target<'_>, paths: &[String], round: Duration) -> Result<bakeoff_load::LoadPlan, String> {
    let base = format!("http://{}", target.addr);
    let mut builder = bakeoff_load::LoadPlan::builder(&format!("{base}{}", paths[0]))
        .connections(4)
        .threads(1)
        .duration(round)
        .timeout(Duration::from_secs(5))
        .expect_status(200)
        .pin_cpus(target.client_cpus.to_vec());
    for p in &paths[1..] {
        builder = builder.url(&format!("{base}{p}"));
    }
    builder.build().map_err(|e| format!("burst plan: {e}"))
}
