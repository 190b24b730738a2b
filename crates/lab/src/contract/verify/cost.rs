//! Proof of work by CPU cost: a request that asks for more work must cost the server more CPU.
//! For each pair (heavy, light) the load generator sends short, time-bounded bursts of each,
//! alternated (light, heavy, light, heavy, ...), while the server's process tree CPU time is read
//! before and after each with the precise meter (host::cpu_meter: nanosecond process clocks, so a
//! burst needs 20 ms of server CPU, not the 100 ms that 10 ms clock ticks would); the median of
//! the five ratios of CPU per request must exceed what every honest stack exceeds by a wide margin
//! (docs/scenarios.md, "Proof of work"). Pairs measured but not judged by cost get one heavy burst.
//! Alternating keeps a busy machine's drift out of the ratio (both sides of a pair see the same
//! moment) and the median drops one burst caught in a spike. The heavy request is exactly the one
//! the load sends when measuring, so a precomputed answer, a closed formula, a memo of that URL or
//! an answer special-cased for it all cost what the light request costs, and fail here although
//! the body is right. The judged pairs run again after a cell's first trial ([`check_again`]), on
//! the server that has just served the load, so work that stops after N requests fails too.

use super::{fail, warn, Checks, Target};
use crate::host::cpu_meter::CpuReading;
use bakeoff_load::ErrorCounts;
use bakeoff_model::results::{CheckScope, Verdict};
use bakeoff_model::scenario::Scenario;
use std::time::Duration;

/// Why a burst gave no figure. The server answering with errors (a bad status, a malformed
/// response, a connection closed under a request) breaks the contract: the check fails, naming
/// the URL and the count. Timeouts, connections that never opened and too little CPU to read are
/// what an honest stack meets on a loaded machine (a blocking worker leaving connections waiting,
/// a slow request), so they only warn, as they did since the first cost checks: the machine could
/// not measure, the stack did nothing wrong.
#[derive(Debug)]
enum BurstError {
    Broken(String),
    Unmeasured(String),
}

impl BurstError {
    fn verdict(self) -> (Verdict, String) {
        match self {
            BurstError::Broken(reason) => (Verdict::Fail, reason),
            BurstError::Unmeasured(reason) => (Verdict::Warn, reason),
        }
    }
}

impl From<String> for BurstError {
    /// The load generator's own failures (a plan it could not build, a socket it could not
    /// open): nothing the server did.
    fn from(reason: String) -> Self {
        BurstError::Unmeasured(reason)
    }
}

/// Requests the server answered wrongly or dropped mid-answer: bad statuses, malformed responses,
/// connections it closed (read) or reset (write) with a request outstanding.
fn broken(e: &ErrorCounts) -> u64 {
    e.status.values().sum::<u64>() + e.malformed + e.read + e.write + e.body_mismatch
}

/// The broken kinds with their counts, e.g. `status 500: 12, closed: 3`.
fn broken_kinds(e: &ErrorCounts) -> String {
    let mut kinds: Vec<String> = e.status.iter().map(|(s, n)| format!("status {s}: {n}")).collect();
    for (name, n) in [("malformed", e.malformed), ("closed", e.read), ("reset", e.write), ("wrong body", e.body_mismatch)] {
        if n > 0 {
            kinds.push(format!("{name}: {n}"));
        }
    }
    kinds.join(", ")
}

/// One comparison: the light request, the least ratio of CPU per request an honest stack shows
/// (with a wide margin) and the question a failure asks. The heavy request is the scenario's
/// load path.
struct Pair {
    scenario: Scenario,
    light: &'static str,
    min_ratio: f64,
    question: &'static str,
}

/// Thresholds sit well below the lowest ratio an honest stack of the repository measured and
/// above what a precomputed answer measures (about 1.0-1.3 under noise); docs/scenarios.md lists
/// the measured ratios. `products` and `document` are measured and shown but not judged by cost
/// (0.0): a driver's query can cost little beside a slow framework, so the store's own count of
/// the statements (finds) it ran, and the live-data probes, judge them.
const PAIRS: [Pair; 5] = [
    Pair { scenario: Scenario::Json, light: "/json?n=1", min_ratio: 1.6, question: "is the answer precomputed?" },
    Pair { scenario: Scenario::Loop, light: "/loop?n=0", min_ratio: 2.0, question: "is the loop replaced by a formula?" },
    Pair { scenario: Scenario::Msgpack, light: "/", min_ratio: 2.0, question: "are the records decoded per request?" },
    Pair { scenario: Scenario::Products, light: "/", min_ratio: 0.0, question: "is the database read per request?" },
    Pair { scenario: Scenario::Document, light: "/", min_ratio: 0.0, question: "is the document store read per request?" },
];

/// Connections of a burst: a few, so that the scheduler's wake-up latency on a busy machine does not
/// set the pace (one connection took 2 ms a request under load); rounds are counts, so no request
/// in flight is ever abandoned.
const CONNECTIONS: u32 = 4;
/// Unmeasured load on both routes of a judged pair before its bursts; the two calibration bursts
/// that follow warm the routes further. A JIT stack's warm-up is its manifest's, below.
const WARMUP: Duration = Duration::from_millis(250);
/// A stack whose manifest asks for a warm-up (a JIT: the JVMs, PyPy) gets it once, on every route
/// the judged pairs use, before the first pair, up to this bound: the cost of a cold JIT is not the
/// cost of the work (pekko-http's hello cost 3.3 ms a request cold and still 0.5 ms after 4 s of
/// load, which made an honest msgpack decoder look only 1.9x dearer than hello).
const STACK_WARMUP_BOUND: Duration = Duration::from_secs(30);
/// After the measurement the load has warmed the JIT on the heavy route and the framework around
/// it; the light route gets this much of a JIT stack's warm-up: pekko-http's `/json?n=1` right
/// after the load cost 609 µs a request in one burst of three after 0.25 s of warm-up (39 µs in
/// another), and its cold hello would otherwise take the stack's 20 s on a `/msgpack` cell.
const AGAIN_WARMUP_BOUND: Duration = Duration::from_secs(5);
/// Light/heavy alternations per pair; the median ratio is judged.
const ROUNDS: usize = 5;
/// After the measurement ([`check_again`]) the light side stops after this many bursts when the
/// median of their ratios already reaches the threshold, and runs all [`ROUNDS`] otherwise, judged
/// as in verification. Stopping early is never more lenient than verification: two ratios of three
/// at the threshold are two of five, which verification passes with a warning at worst; failing
/// still takes four of five below it.
const EARLY_ROUNDS: usize = 3;
/// A measured burst lasts until the server used this much CPU (the meter reads nanoseconds; a busy
/// machine's scheduler noise over 20 ms stays within a few percent) and answered this many
/// requests, or used five times as much CPU on at least [`FEWEST_REQUESTS`] (a slow request), or
/// until MAX_BURST.
const MIN_CPU: f64 = 0.02;
const MIN_REQUESTS: u64 = 10;
const FEWEST_REQUESTS: u64 = 3;
const MAX_BURST: Duration = Duration::from_secs(3);
/// A JIT compiler or a collector may still run after a burst: CPU is read once the tree used less
/// than SETTLE_RISE over SETTLE_QUIET (5% of a core: an idle runtime's timers stay below, a
/// compiler or collector thread runs flat out), at most SETTLE_LIMIT later, so that work is billed
/// to the burst that caused it, not to the next one.
const SETTLE_QUIET: Duration = Duration::from_millis(20);
const SETTLE_RISE: f64 = 0.001;
const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// CPU per request over one burst.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cost {
    pub(crate) us_per_request: f64,
    pub(crate) requests: u64,
}

/// One pair's alternated bursts: (heavy, light) per round, and the seconds they took.
struct Alternation {
    rounds: Vec<(Cost, Cost)>,
    seconds: f64,
}

/// What a pair measured: alternations when its ratio is judged, one heavy burst when it is only
/// shown (its store's read count judges it).
enum Measured {
    Judged(Alternation),
    Shown { heavy: Cost, seconds: f64 },
}

impl Measured {
    fn heavy_requests(&self) -> u64 {
        match self {
            Measured::Judged(a) => a.heavy_requests(),
            Measured::Shown { heavy, .. } => heavy.requests,
        }
    }
}

impl Alternation {
    fn ratios(&self) -> Vec<f64> {
        self.rounds.iter().map(|(h, l)| h.us_per_request / l.us_per_request).collect()
    }

    /// The median ratio and the round it came from.
    fn median(&self) -> (f64, (Cost, Cost)) {
        let mut by_ratio: Vec<(f64, (Cost, Cost))> = self.ratios().into_iter().zip(self.rounds.iter().copied()).collect();
        by_ratio.sort_by(|a, b| a.0.total_cmp(&b.0));
        by_ratio[by_ratio.len() / 2]
    }

    fn heavy_requests(&self) -> u64 {
        self.rounds.iter().map(|(h, _)| h.requests).sum()
    }
}

/// Checks every pair whose scenario the target serves; needs the server's pid (absent for a
/// baseline, which is not checked).
pub(super) fn check(checks: &mut Checks, target: &Target<'_>) {
    let Some(pid) = target.server_pid else { return };
    let pairs: Vec<&Pair> = PAIRS.iter().filter(|p| target.scenarios.contains(&p.scenario)).collect();
    if pairs.is_empty() {
        return;
    }
    let warmup = target.warmup.min(STACK_WARMUP_BOUND);
    let judged: Vec<&&Pair> = pairs.iter().filter(|p| p.min_ratio > 0.0).collect();
    if !warmup.is_zero() && !judged.is_empty() {
        let routes: Vec<String> = judged.iter().flat_map(|p| [p.light.to_string(), p.scenario.load_path().to_string()]).collect();
        warm_up(target, &routes, warmup);
    }
    // Connections per burst: four, or one for every later pair once one pair found that four fail
    // (rediscovering it costs a burst's timeout, 5 s, per pair).
    let mut conns = CONNECTIONS;
    for p in pairs {
        let heavy = p.scenario.load_path();
        let reads_before = reads(target, p);
        let measured = if p.min_ratio > 0.0 {
            alternate(target, pid, p, &mut conns).map(Measured::Judged)
        } else {
            heavy_only(target, pid, p, &mut conns)
        };
        if let (Some(before), Ok(m)) = (reads_before, &measured) {
            let outcome = before.and_then(|b| Ok((b, reads(target, p).expect("a store that counted counts again")?)));
            let outcome = outcome.map_err(|e| (Verdict::Warn, format!("could not count the store's reads: {e}")));
            let what = format!("the {} answers at least one read per request", store_name(p.scenario));
            let judged = outcome.and_then(|(b, a)| judge_reads(p.scenario, a.saturating_sub(b), m.heavy_requests()));
            checks.add_measured(CheckScope::Scenario(p.scenario), &what, heavy, judged);
        }
        let outcome = measured.map_err(BurstError::verdict).and_then(|m| match m {
            Measured::Judged(a) => judge(p, &a),
            Measured::Shown { heavy, seconds } => Ok(format!(
                "{:.0} µs of server CPU per request over {} requests (shown; the store's read count judges this scenario); {seconds:.1} s",
                heavy.us_per_request, heavy.requests
            )),
        });
        let what = format!("CPU cost scales with the work: {heavy} vs {}", p.light);
        checks.add_measured(CheckScope::Scenario(p.scenario), &what, heavy, outcome);
    }
}

/// After the measurement, on the warm server that has just served the load: the judged pairs of
/// `target.scenarios` again ([`heavy_then_light`]), so a stack that does the work only for its
/// first N requests, or only while it sees requests other than the load's (the verifier's light
/// URL), costs here what a precomputed answer costs. Once per cell, so it stays about what one
/// pair costs verification.
pub(super) fn check_again(checks: &mut Checks, target: &Target<'_>) {
    let Some(pid) = target.server_pid else { return };
    let mut conns = CONNECTIONS;
    for p in PAIRS.iter().filter(|p| p.min_ratio > 0.0 && target.scenarios.contains(&p.scenario)) {
        let heavy = p.scenario.load_path();
        let outcome = heavy_then_light(target, pid, p, &mut conns).map_err(BurstError::verdict).and_then(|a| judge(p, &a));
        let what = format!("CPU cost still scales with the work after the load: {heavy} vs {}", p.light);
        checks.add_measured(CheckScope::Scenario(p.scenario), &what, heavy, outcome);
    }
}

/// The heavy side first, every burst of it before any other request, so the server sees nothing
/// but the load's URL between the load and its last heavy burst: [`ROUNDS`] bursts, each judged
/// on its slope beyond a set-up probe of heavy requests (no warm-up: the load just ran this
/// route; the calibrating burst starts at two requests a connection, so a slow request is not
/// sized from a run the probe's set-up cancels). Then the light side, after a warm-up: [`WARMUP`],
/// or for a JIT stack its own warm-up up to [`AGAIN_WARMUP_BOUND`]; its set-up probe, and
/// [`EARLY_ROUNDS`] bursts, or [`ROUNDS`] when their median ratio is below the threshold. Heavy
/// burst i is paired with light burst i. Not alternated: the server is warm, and alternating
/// would show the light URL before the heavy bursts.
fn heavy_then_light(target: &Target<'_>, pid: u32, p: &Pair, conns: &mut u32) -> Result<Alternation, BurstError> {
    let (light, heavy) = ([p.light.to_string()], [p.scenario.load_path().to_string()]);
    let start = std::time::Instant::now();
    let (setup, mut cpu) = probe_setup(target, pid, &heavy, *conns)?;
    *conns = setup.conns;
    let calibrated;
    (calibrated, cpu) = burst(target, pid, &heavy, &cpu, &setup, 2 * setup.conns as u64)?;
    let mut heavies = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let h;
        (h, cpu) = burst(target, pid, &heavy, &cpu, &setup, calibrated.requests)?;
        heavies.push(setup.slope_cost(&h).ok_or_else(|| {
            BurstError::Unmeasured(format!("a heavy burst of {} requests measured no CPU beyond its connections' set-up", h.requests))
        })?);
    }
    warm_up(target, &light, target.warmup.min(AGAIN_WARMUP_BOUND).max(WARMUP));
    let (setup, mut cpu) = probe_setup(target, pid, &light, *conns)?;
    let calibrated;
    (calibrated, cpu) = burst(target, pid, &light, &cpu, &setup, setup.conns as u64)?;
    let passed_early = |rounds: &[(Cost, Cost)]| {
        rounds.len() == EARLY_ROUNDS && (Alternation { rounds: rounds.to_vec(), seconds: 0.0 }).median().0 >= p.min_ratio
    };
    let mut rounds = Vec::with_capacity(ROUNDS);
    for h in heavies {
        if passed_early(&rounds) {
            break;
        }
        let l;
        (l, cpu) = burst(target, pid, &light, &cpu, &setup, calibrated.requests)?;
        let l = setup.slope_cost(&l).ok_or_else(|| {
            BurstError::Unmeasured(format!("a light burst of {} requests measured no CPU beyond its connections' set-up", l.requests))
        })?;
        rounds.push((h, l));
    }
    Ok(Alternation { rounds, seconds: start.elapsed().as_secs_f64() })
}

/// ROUNDS of a light burst then a heavy one.
fn alternate(target: &Target<'_>, pid: u32, p: &Pair, conns: &mut u32) -> Result<Alternation, BurstError> {
    let (light, heavy) = ([p.light.to_string()], [p.scenario.load_path().to_string()]);
    let (mut rounds, start) = (Vec::with_capacity(ROUNDS), std::time::Instant::now());
    // Each burst's settled end is the next one's start. A first, unjudged burst of each side
    // warms that route up (a JIT compiles the framework's path only after many requests) and
    // finds how many requests reach MIN_CPU, so each judged burst is one run on the same
    // connections: rounds of growing counts open new connections.
    warm_up(target, &[p.light.to_string(), p.scenario.load_path().to_string()], WARMUP);
    let (setup, mut cpu) = probe_setup(target, pid, &light, *conns)?;
    *conns = setup.conns;
    let calibrated_light;
    (calibrated_light, cpu) = burst(target, pid, &light, &cpu, &setup, setup.conns as u64)?;
    let calibrated_heavy;
    (calibrated_heavy, cpu) = burst(target, pid, &heavy, &cpu, &setup, setup.conns as u64)?;
    for _ in 0..ROUNDS {
        let (l, h);
        (l, cpu) = burst(target, pid, &light, &cpu, &setup, calibrated_light.requests)?;
        (h, cpu) = burst(target, pid, &heavy, &cpu, &setup, calibrated_heavy.requests)?;
        let l = setup.slope_cost(&l).ok_or_else(|| {
            BurstError::Unmeasured(format!("a light burst of {} requests measured no CPU beyond its connections' set-up", l.requests))
        })?;
        rounds.push((setup.heavy_cost(&h, &l), l));
    }
    Ok(Alternation { rounds, seconds: start.elapsed().as_secs_f64() })
}

/// What a burst used: server CPU, requests answered and load runs (each run opens its own
/// connections).
#[derive(Debug, Clone, Copy)]
struct Raw {
    cpu_s: f64,
    requests: u64,
    runs: u32,
}

/// The connections a pair's bursts use and what one run of `conns` light requests costs, most of
/// it the connections' set-up: a JVM framework spent 25-35 ms of CPU on a run of 4 requests
/// to its hello (the marginal request: about 110 µs), which billed to bursts of 20 ms would
/// drown the work. Bursts are judged on their CPU beyond that (the slope between the probe run and
/// the burst), so the connection set-up cancels from both sides of a pair.
struct Setup {
    conns: u32,
    probe_s: f64,
}

impl Setup {
    /// The CPU a burst used beyond its runs' set-up (probe runs hold `conns` light requests).
    fn marginal_s(&self, raw: &Raw) -> f64 {
        raw.cpu_s - raw.runs as f64 * self.probe_s
    }

    /// CPU per request of the probe's own request: the slope from the probe runs to the burst.
    fn slope_cost(&self, raw: &Raw) -> Option<Cost> {
        let requests = raw.requests.checked_sub(raw.runs as u64 * self.conns as u64).filter(|&n| n > 0)?;
        let us = self.marginal_s(raw) * 1e6 / requests as f64;
        (us > 0.0).then_some(Cost { us_per_request: us, requests: raw.requests })
    }

    /// Heavy CPU per request: the burst beyond the probe runs, whose light requests are given back.
    fn heavy_cost(&self, raw: &Raw, light: &Cost) -> Cost {
        let given_back = (raw.runs as u64 * self.conns as u64) as f64 * light.us_per_request;
        Cost { us_per_request: (self.marginal_s(raw) * 1e6 + given_back) / raw.requests as f64, requests: raw.requests }
    }
}

/// Measures a pair's [`Setup`]: the median of PROBES runs of one light request per connection.
/// A server that serves one kept-alive connection at a time (a blocking worker) leaves the other
/// connections waiting into the timeout: such a pair is measured on one connection.
fn probe_setup(target: &Target<'_>, pid: u32, light: &[String], conns: u32) -> Result<(Setup, CpuReading), BurstError> {
    const PROBES: usize = 3;
    let mut conns = conns;
    let mut cpu = settled_cpu(pid);
    let mut used = Vec::with_capacity(PROBES);
    while used.len() < PROBES {
        let plan = burst_plan(target, light, conns, conns as u64)?;
        let report = bakeoff_load::run(&plan).map_err(|e| format!("burst: {e}"))?;
        let errors = &report.steps[0].errors;
        if errors.total() > 0 || report.steps[0].requests < conns as u64 {
            if conns == 1 {
                let url = format!("http://{}{}", target.addr, light[0]);
                return Err(if broken(errors) > 0 {
                    BurstError::Broken(format!("a run of one request to {url} was answered with an error ({})", broken_kinds(errors)))
                } else {
                    BurstError::Unmeasured(format!("a run of one request to {url} got no answer within the burst's timeout"))
                });
            }
            (conns, cpu) = (1, settled_cpu(pid));
            used.clear();
            continue;
        }
        let after = settled_cpu(pid);
        used.push(after.since(&cpu));
        cpu = after;
    }
    used.sort_by(f64::total_cmp);
    Ok((Setup { conns, probe_s: used[PROBES / 2] }, cpu))
}

/// One heavy burst, for a pair whose ratio is shown, not judged: its figure and the store's read
/// count need no light side and no alternation.
fn heavy_only(target: &Target<'_>, pid: u32, p: &Pair, conns: &mut u32) -> Result<Measured, BurstError> {
    let start = std::time::Instant::now();
    let heavy = [p.scenario.load_path().to_string()];
    // One connection where four fail: a server with one blocking keep-alive worker serves one
    // connection at a time and leaves the others waiting into the timeout.
    let on = |conns: u32| burst(target, pid, &heavy, &settled_cpu(pid), &Setup { conns, probe_s: 0.0 }, conns as u64);
    let (raw, _) = on(*conns).or_else(|_| {
        *conns = 1;
        on(1)
    })?;
    let heavy = Cost { us_per_request: raw.cpu_s * 1e6 / raw.requests as f64, requests: raw.requests };
    Ok(Measured::Shown { heavy, seconds: start.elapsed().as_secs_f64() })
}

/// The reads the scenario's store has served so far, where it counts them.
fn reads(target: &Target<'_>, p: &Pair) -> Option<Result<u64, String>> {
    match p.scenario {
        Scenario::Products => target.products?.reads(),
        Scenario::Document => target.documents?.reads(),
        _ => None,
    }
}

fn store_name(scenario: Scenario) -> &'static str {
    if scenario == Scenario::Document {
        "document store"
    } else {
        "database"
    }
}

/// Proof of work at the store: every answered request ran at least one statement (find).
fn judge_reads(scenario: Scenario, reads: u64, requests: u64) -> Result<String, (Verdict, String)> {
    let per = reads as f64 / requests.max(1) as f64;
    let unit = if scenario == Scenario::Document { "find operations" } else { "statements" };
    let figure = format!("{reads} {unit} over {requests} requests, {per:.2} per request");
    if reads >= requests {
        Ok(figure)
    } else {
        let store = store_name(scenario);
        fail(format!("the {store} ran fewer {unit} than the stack answered requests ({figure}): is the answer cached?"))
    }
}

/// Pass with the measured figure, or fail naming the scenario and why.
fn judge(p: &Pair, m: &Alternation) -> Result<String, (Verdict, String)> {
    let (ratio, (heavy, light)) = m.median();
    let all: Vec<String> = m.ratios().iter().map(|r| format!("{r:.1}")).collect();
    let figures = format!(
        "median of {}x; {:.0} µs vs {:.1} µs of server CPU per request over {} and {} requests; {:.1} s",
        all.join("/"),
        heavy.us_per_request,
        light.us_per_request,
        heavy.requests,
        light.requests,
        m.seconds
    );
    if !ratio.is_finite() || light.us_per_request <= 0.0 {
        return warn(format!("could not measure: a light burst used no CPU time the kernel counted ({figures})"));
    }
    if ratio >= p.min_ratio {
        return Ok(format!("{ratio:.1}x ({figures})"));
    }
    // Rounds on both sides of the threshold: the machine (a JIT compiling or collecting during one
    // burst) decided the median, not the work. Two rounds at least: a precomputed answer's 20 ms
    // bursts on a machine running eight verifications at once put one round of five above 1.6x.
    if m.ratios().iter().filter(|&&r| r >= p.min_ratio).count() >= 2 {
        return warn(format!(
            "the rounds disagree about whether the work scales ({ratio:.1}x median, honest stacks measure >= {:.1}x; {figures}): rerun verify on a quieter machine",
            p.min_ratio
        ));
    }
    let heavy_path = p.scenario.load_path();
    let light_input = p.light.split_once('?').map(|(_, q)| q).unwrap_or(p.light);
    let costs = if ratio < 1.5 { "costs the same as".to_string() } else { format!("costs only {ratio:.1}x") };
    fail(format!(
        "{heavy_path} {costs} {light_input} ({ratio:.1}x; honest stacks measure >= {:.1}x; {figures}): {}",
        p.min_ratio, p.question
    ))
}

/// Runs `paths` round-robin on `conns` connections in rounds of a count of requests (`first_round`,
/// then sized from the CPU measured so far), each round
/// waiting for its answers (no request is cut off, so none is billed without being counted), from
/// `before` (the tree's settled CPU) until the server tree has used [`MIN_CPU`] beyond its runs'
/// set-up ([`Setup`]) and answered [`MIN_REQUESTS`], or used five times that on
/// slow requests, or the next round would end after [`MAX_BURST`]; then at least
/// [`FEWEST_REQUESTS`] will do. Returns what it used and the settled CPU at the end.
fn burst(
    target: &Target<'_>,
    pid: u32,
    paths: &[String],
    before: &CpuReading,
    setup: &Setup,
    first_round: u64,
) -> Result<(Raw, CpuReading), BurstError> {
    let start = std::time::Instant::now();
    let (mut requests, mut errors, mut round, mut runs) = (0u64, ErrorCounts::default(), first_round, 0u32);
    loop {
        let began = std::time::Instant::now();
        let report = bakeoff_load::run(&burst_plan(target, paths, setup.conns, round)?).map_err(|e| format!("burst: {e}"))?;
        requests += report.steps[0].requests;
        errors.merge(&report.steps[0].errors);
        runs += 1;
        let cpu_s = setup.marginal_s(&Raw { cpu_s: CpuReading::of_tree(pid).since(before), requests, runs });
        let next = next_round(round, requests, cpu_s);
        let last = start.elapsed() + began.elapsed().mul_f64(next as f64 / round as f64) > MAX_BURST;
        round = next;
        let enough = (cpu_s >= MIN_CPU && requests >= MIN_REQUESTS) || (cpu_s >= 5.0 * MIN_CPU && requests >= FEWEST_REQUESTS);
        if enough || last {
            // A few failed requests are tolerated (a server that closes a kept-alive connection
            // as a request arrives); more than one in twenty is the server's answer.
            let sent = requests + errors.total();
            let url = format!("http://{}{}", target.addr, paths[0]);
            if broken(&errors) * 20 > sent {
                return Err(BurstError::Broken(format!(
                    "{} of {sent} requests to {url} were answered with errors during the burst ({}): each answer must be right; see the server log",
                    broken(&errors),
                    broken_kinds(&errors)
                )));
            }
            if errors.total() * 20 > sent {
                return Err(BurstError::Unmeasured(format!(
                    "{} of {sent} requests to {url} failed during the burst, {} of them without an answer in time (timeouts, connections not accepted)",
                    errors.total(),
                    errors.total() - broken(&errors)
                )));
            }
            let after = settled_cpu(pid);
            let raw = Raw { cpu_s: after.since(before), requests, runs };
            if setup.marginal_s(&raw) < MIN_CPU || requests < FEWEST_REQUESTS {
                return Err(BurstError::Unmeasured(format!(
                    "too little to measure within {MAX_BURST:?}: {requests} requests answered, {:.3} s of server CPU",
                    raw.cpu_s
                )));
            }
            return Ok((raw, after));
        }
    }
}

/// The next round's count: what the CPU per request so far says will reach [`MIN_CPU`] (with a
/// fifth to spare) once a tenth of it was used, else four times this round; at least twice and
/// at most eight times this round.
fn next_round(round: u64, requests: u64, cpu_s: f64) -> u64 {
    let wanted = if cpu_s >= MIN_CPU / 10.0 { (requests as f64 * (1.2 * MIN_CPU / cpu_s - 1.0)).ceil() as u64 } else { 4 * round };
    wanted.clamp(2 * round, 8 * round)
}

/// Routes for `duration` (a pair's two for [`WARMUP`]) on four connections, unmeasured: a JVM or PyPy runs a
/// framework's path interpreted until it has seen many requests (pekko-http's hello cost 3.3 ms
/// a request cold, against tens of µs warm), which no burst of 20 ms would outgrow. Requests
/// cut off at its end finish before the next reading (see [`settled_cpu`]).
fn warm_up(target: &Target<'_>, paths: &[String], duration: Duration) {
    let base = format!("http://{}", target.addr);
    let mut builder = bakeoff_load::LoadPlan::builder(&format!("{base}{}", paths[0]))
        .connections(CONNECTIONS)
        .threads(1)
        .duration(duration)
        .timeout(Duration::from_secs(5))
        .pin_cpus(target.client_cpus.to_vec());
    for p in &paths[1..] {
        builder = builder.url(&format!("{base}{p}"));
    }
    if let Ok(plan) = builder.build() {
        let _ = bakeoff_load::run(&plan);
    }
}

/// The tree's CPU once it stopped rising (see [`SETTLE_QUIET`]).
fn settled_cpu(pid: u32) -> CpuReading {
    let (deadline, mut last) = (std::time::Instant::now() + SETTLE_LIMIT, CpuReading::of_tree(pid));
    loop {
        std::thread::sleep(SETTLE_QUIET);
        let now = CpuReading::of_tree(pid);
        if now.since(&last) < SETTLE_RISE || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

fn burst_plan(target: &Target<'_>, paths: &[String], conns: u32, requests: u64) -> Result<bakeoff_load::LoadPlan, String> {
    let base = format!("http://{}", target.addr);
    let mut builder = bakeoff_load::LoadPlan::builder(&format!("{base}{}", paths[0]))
        .connections(conns)
        .threads(1)
        .requests(requests)
        .timeout(Duration::from_secs(5))
        .expect_status(200)
        .pin_cpus(target.client_cpus.to_vec());
    for p in &paths[1..] {
        builder = builder.url(&format!("{base}{p}"));
    }
    builder.build().map_err(|e| format!("burst plan: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{broken, broken_kinds};
    use bakeoff_load::ErrorCounts;

    /// What the server answered wrongly fails a check; what never came back in time only warns.
    #[test]
    fn answers_with_errors_are_broken_and_timeouts_are_not() {
        let mut e = ErrorCounts { timeout: 7, connect: 2, unanswered: 1, ..Default::default() };
        assert_eq!(broken(&e), 0);
        e.status.insert(500, 12);
        e.read = 3;
        e.malformed = 1;
        assert_eq!(broken(&e), 16);
        assert_eq!(broken_kinds(&e), "status 500: 12, malformed: 1, closed: 3");
    }
}
