//! One burst of the cost check: a count of requests sent until the server's process tree used
//! enough CPU to read, the connections' set-up measured and taken off, and the tree's CPU read only
//! once it settled; what a burst counts as the server's fault and what as the machine's.

use super::{Requests, Target};
use crate::contract::verify::{http_version, ServerTree};
use crate::machine::cpu_meter::CpuReading;
use bakeoff_load::ErrorCounts;
use bakeoff_model::records::results::Verdict;
use std::time::Duration;

/// Why a burst gave no figure. The server answering with errors (a bad status, a malformed
/// response, a connection closed under a request) breaks the contract: the check fails, naming
/// the URL and the count. Timeouts, connections that never opened and too little CPU to read are
/// what an honest stack meets on a loaded machine (a blocking worker leaving connections waiting,
/// a slow request), so they only warn, as they did since the first cost checks: the machine could
/// not measure, the stack did nothing wrong.
#[derive(Debug)]
pub(super) enum BurstError {
    Broken(String),
    Unmeasured(String),
}

impl BurstError {
    pub(super) fn verdict(self) -> (Verdict, String) {
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

/// Connections of a burst: a few, so that the scheduler's wake-up latency on a busy machine does not
/// set the pace (one connection took 2 ms a request under load); rounds are counts, so no request
/// in flight is ever abandoned.
pub(super) const CONNECTIONS: u32 = 4;
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
pub(super) struct Cost {
    pub(super) us_per_request: f64,
    pub(super) requests: u64,
}

/// What a burst used: server CPU, requests answered and load runs (each run opens its own
/// connections).
#[derive(Debug, Clone, Copy)]
pub(super) struct Raw {
    pub(super) cpu_s: f64,
    pub(super) requests: u64,
    runs: u32,
}

/// The connections a pair's bursts use and what one run of `conns` light requests costs, most of
/// it the connections' set-up: a JVM framework spent 25-35 ms of CPU on a run of 4 requests
/// to its hello (the marginal request: about 110 µs), which billed to bursts of 20 ms would
/// drown the work. Bursts are judged on their CPU beyond that (the slope between the probe run and
/// the burst), so the connection set-up cancels from both sides of a pair.
pub(super) struct Setup {
    pub(super) conns: u32,
    pub(super) probe_s: f64,
}

impl Setup {
    /// The CPU a burst used beyond its runs' set-up (probe runs hold `conns` light requests).
    fn marginal_s(&self, raw: &Raw) -> f64 {
        raw.cpu_s - raw.runs as f64 * self.probe_s
    }

    /// CPU per request of the probe's own request: the slope from the probe runs to the burst.
    pub(super) fn slope_cost(&self, raw: &Raw) -> Option<Cost> {
        let requests = raw.requests.checked_sub(raw.runs as u64 * self.conns as u64).filter(|&n| n > 0)?;
        let us = self.marginal_s(raw) * 1e6 / requests as f64;
        (us > 0.0).then_some(Cost { us_per_request: us, requests: raw.requests })
    }

    /// Heavy CPU per request: the burst beyond the probe runs, whose light requests are given back.
    pub(super) fn heavy_cost(&self, raw: &Raw, light: &Cost) -> Cost {
        let given_back = (raw.runs as u64 * self.conns as u64) as f64 * light.us_per_request;
        Cost { us_per_request: (self.marginal_s(raw) * 1e6 + given_back) / raw.requests as f64, requests: raw.requests }
    }
}

/// Measures a pair's [`Setup`]: the median of PROBES runs of one light request per connection.
/// A server that serves one kept-alive connection at a time (a blocking worker) leaves the other
/// connections waiting into the timeout: such a pair is measured on one connection.
pub(super) fn probe_setup(
    target: &Target<'_>,
    tree: &dyn ServerTree,
    light: &Requests,
    conns: u32,
) -> Result<(Setup, CpuReading), BurstError> {
    const PROBES: usize = 3;
    let mut conns = conns;
    let mut cpu = settled_cpu(tree);
    let mut used = Vec::with_capacity(PROBES);
    while used.len() < PROBES {
        let plan = burst_plan(target, light, conns, conns as u64)?;
        let report = bakeoff_load::run(&plan).map_err(|e| format!("burst: {e}"))?;
        let errors = &report.steps[0].errors;
        if errors.total() > 0 || report.steps[0].requests < conns as u64 {
            if conns == 1 {
                let url = format!("{}{}", target.wire.base(target.addr), light.first_path());
                return Err(if broken(errors) > 0 {
                    BurstError::Broken(format!("a run of one request to {url} was answered with an error ({})", broken_kinds(errors)))
                } else {
                    BurstError::Unmeasured(format!("a run of one request to {url} got no answer within the burst's timeout"))
                });
            }
            (conns, cpu) = (1, settled_cpu(tree));
            used.clear();
            continue;
        }
        let after = settled_cpu(tree);
        used.push(after.since(&cpu));
        cpu = after;
    }
    used.sort_by(f64::total_cmp);
    Ok((Setup { conns, probe_s: used[PROBES / 2] }, cpu))
}

/// Runs `routes` in turn on `conns` connections in rounds of a count of requests (`first_round`,
/// then sized from the CPU measured so far), each round
/// waiting for its answers (no request is cut off, so none is billed without being counted), from
/// `before` (the tree's settled CPU) until the server tree has used [`MIN_CPU`] beyond its runs'
/// set-up ([`Setup`]) and answered [`MIN_REQUESTS`], or used five times that on
/// slow requests, or the next round would end after [`MAX_BURST`]; then at least
/// [`FEWEST_REQUESTS`] will do. Returns what it used and the settled CPU at the end.
pub(super) fn burst(
    target: &Target<'_>,
    tree: &dyn ServerTree,
    routes: &Requests,
    before: &CpuReading,
    setup: &Setup,
    first_round: u64,
) -> Result<(Raw, CpuReading), BurstError> {
    let start = std::time::Instant::now();
    let (mut requests, mut errors, mut round, mut runs) = (0u64, ErrorCounts::default(), first_round, 0u32);
    loop {
        let began = std::time::Instant::now();
        let report = bakeoff_load::run(&burst_plan(target, routes, setup.conns, round)?).map_err(|e| format!("burst: {e}"))?;
        requests += report.steps[0].requests;
        errors.merge(&report.steps[0].errors);
        runs += 1;
        let cpu_s = setup.marginal_s(&Raw { cpu_s: tree.cpu().since(before), requests, runs });
        let next = next_round(round, requests, cpu_s);
        let last = start.elapsed() + began.elapsed().mul_f64(next as f64 / round as f64) > MAX_BURST;
        round = next;
        let enough = (cpu_s >= MIN_CPU && requests >= MIN_REQUESTS) || (cpu_s >= 5.0 * MIN_CPU && requests >= FEWEST_REQUESTS);
        if enough || last {
            // A few failed requests are tolerated (a server that closes a kept-alive connection
            // as a request arrives); more than one in twenty is the server's answer.
            let sent = requests + errors.total();
            let url = format!("{}{}", target.wire.base(target.addr), routes.first_path());
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
            let after = settled_cpu(tree);
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

/// The tree's CPU once it stopped rising (see [`SETTLE_QUIET`]).
pub(super) fn settled_cpu(tree: &dyn ServerTree) -> CpuReading {
    let (deadline, mut last) = (std::time::Instant::now() + SETTLE_LIMIT, tree.cpu());
    loop {
        std::thread::sleep(SETTLE_QUIET);
        let now = tree.cpu();
        if now.since(&last) < SETTLE_RISE || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// Routes for `duration` (a pair's two for [`WARMUP`](super::measure::WARMUP)) on four connections,
/// unmeasured: a JIT or PyPy runs a framework's path interpreted until it has seen many requests
/// (pekko-http's hello cost 3.3 ms a request cold, against tens of µs warm), which no burst of
/// 20 ms would outgrow. Requests cut off at its end finish before the next reading (see
/// [`settled_cpu`]). Sides that one plan cannot carry together (paths and a file's requests, or
/// two files') each get `duration`.
pub(super) fn warm_up(target: &Target<'_>, sides: &[&Requests], duration: Duration) {
    for routes in Requests::merged(sides) {
        if let Ok(plan) = plan_builder(target, &routes, CONNECTIONS).duration(duration).build() {
            // A JIT's warm-up lasts up to 30 s: Ctrl-C ends it at once.
            let _ = bakeoff_load::run_with_cancel(&plan, target.cancel);
        }
    }
}

fn burst_plan(target: &Target<'_>, routes: &Requests, conns: u32, requests: u64) -> Result<bakeoff_load::LoadPlan, String> {
    plan_builder(target, routes, conns).requests(requests).expect_status(200).build().map_err(|e| format!("burst plan: {e}"))
}

/// Load on `routes` over `conns` connections of one thread on the load generator's CPUs: GET paths
/// round-robin, or a file's requests as a deck (each with its own checks, the plan's 200 unused;
/// each connection logs in first where the file has a login).
fn plan_builder(target: &Target<'_>, routes: &Requests, conns: u32) -> bakeoff_load::LoadPlanBuilder {
    let base = target.wire.base(target.addr);
    let mut builder = bakeoff_load::LoadPlan::builder(&format!("{base}{}", routes.first_path()))
        .protocol(http_version(target.wire.protocol))
        .connections(conns)
        .threads(1)
        .timeout(Duration::from_secs(5))
        .pin_cpus(target.client_cpus.to_vec());
    if let Some(tls) = target.wire.tls() {
        builder = builder.tls(tls);
    }
    match routes {
        Requests::Paths(paths) => {
            for p in &paths[1..] {
                builder = builder.url(&format!("{base}{p}"));
            }
        }
        Requests::Deck(deck) => builder = builder.deck(deck.clone()),
    }
    builder
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
