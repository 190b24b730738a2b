//! How a pair is measured: alternated light and heavy bursts in verification, the heavy side's
//! bursts first and the light side's after on the warm server once the load ran, or one heavy burst
//! for a pair that is only shown.

use super::burst::{burst, probe_setup, settled_cpu, warm_up, BurstError, Cost, Setup};
use super::{Pair, Target};
use std::time::Duration;

/// Unmeasured load on both routes of a judged pair before its bursts; the two calibration bursts
/// that follow warm the routes further. A JIT stack's warm-up is its manifest's
/// ([`STACK_WARMUP_BOUND`](super::STACK_WARMUP_BOUND)).
const WARMUP: Duration = Duration::from_millis(250);
/// After the measurement the load has warmed the JIT on the heavy route and the framework around
/// it; the light route gets this much of a JIT stack's warm-up: pekko-http's `/json?n=1` right
/// after the load cost 609 µs a request in one burst of three after 0.25 s of warm-up (39 µs in
/// another), and its cold hello would otherwise take the stack's 20 s on a `/msgpack` cell.
const AGAIN_WARMUP_BOUND: Duration = Duration::from_secs(5);
/// Light/heavy alternations per pair; the median ratio is judged.
const ROUNDS: usize = 5;
/// After the measurement ([`check_again`](super::check_again)) the light side stops after this many
/// bursts when the median of their ratios already reaches the threshold, and runs all [`ROUNDS`]
/// otherwise, judged as in verification. Stopping early is never more lenient than verification: two ratios of three
/// at the threshold are two of five, which verification passes with a warning at worst; failing
/// still takes four of five below it.
const EARLY_ROUNDS: usize = 3;

/// One pair's alternated bursts: (heavy, light) per round, and the seconds they took.
pub(super) struct Alternation {
    rounds: Vec<(Cost, Cost)>,
    pub(super) seconds: f64,
}

/// What a pair measured: alternations when its ratio is judged, one heavy burst when it is only
/// shown (its store's read count judges it).
pub(super) enum Measured {
    Judged(Alternation),
    Shown { heavy: Cost, seconds: f64 },
}

impl Measured {
    pub(super) fn heavy_requests(&self) -> u64 {
        match self {
            Measured::Judged(a) => a.heavy_requests(),
            Measured::Shown { heavy, .. } => heavy.requests,
        }
    }
}

impl Alternation {
    pub(super) fn ratios(&self) -> Vec<f64> {
        self.rounds.iter().map(|(h, l)| h.us_per_request / l.us_per_request).collect()
    }

    /// The median ratio and the round it came from.
    pub(super) fn median(&self) -> (f64, (Cost, Cost)) {
        let mut by_ratio: Vec<(f64, (Cost, Cost))> = self.ratios().into_iter().zip(self.rounds.iter().copied()).collect();
        by_ratio.sort_by(|a, b| a.0.total_cmp(&b.0));
        by_ratio[by_ratio.len() / 2]
    }

    fn heavy_requests(&self) -> u64 {
        self.rounds.iter().map(|(h, _)| h.requests).sum()
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
pub(super) fn heavy_then_light(target: &Target<'_>, pid: u32, p: &Pair, conns: &mut u32) -> Result<Alternation, BurstError> {
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
pub(super) fn alternate(target: &Target<'_>, pid: u32, p: &Pair, conns: &mut u32) -> Result<Alternation, BurstError> {
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

/// One heavy burst, for a pair whose ratio is shown, not judged: its figure and the store's read
/// count need no light side and no alternation.
pub(super) fn heavy_only(target: &Target<'_>, pid: u32, p: &Pair, conns: &mut u32) -> Result<Measured, BurstError> {
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
