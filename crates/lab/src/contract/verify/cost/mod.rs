//! Proof of work by CPU cost: a request that asks for more work must cost the server more CPU.
//! For each pair (heavy, light) the load generator sends short, time-bounded bursts of each,
//! alternated (light, heavy, light, heavy, ...), while the server's process tree CPU time is read
//! before and after each with the precise meter (machine::cpu_meter: nanosecond process clocks, so a
//! burst needs 20 ms of server CPU, not the 100 ms that 10 ms clock ticks would); the median of
//! the five ratios of CPU per request must exceed what every honest stack exceeds by a wide margin
//! (docs/scenarios.md, "Proof of work"). Pairs measured but not judged by cost get one heavy burst.
//! Alternating keeps a busy machine's drift out of the ratio (both sides of a pair see the same
//! moment) and the median drops one burst caught in a spike. The heavy request is exactly the one
//! the load sends when measuring, so a precomputed answer, a closed formula, a memo of that URL or
//! an answer special-cased for it all cost what the light request costs, and fail here although
//! the body is right. The judged pairs run again after a cell's first trial ([`check_again`]), on
//! the server that has just served the load, so work that stops after N requests fails too. A
//! scenario file declares its pairs as request kinds (`[[cost]]`): each side's bursts send a
//! handful of that kind's requests, drawn fresh, repeated within every burst as the load's URL is.

mod burst;
mod judge;
mod measure;
mod pair;

use super::{Checks, Target};
use bakeoff_model::records::results::{CheckScope, Verdict};
use bakeoff_model::scenario::Scenario;
use burst::{warm_up, BurstError, CONNECTIONS};
use judge::{judge, judge_reads, store_name};
use measure::{alternate, heavy_only, heavy_then_light, Alternation, Measured};
use pair::{pairs, Pair, Requests};
use std::time::Duration;

/// One built-in comparison: the light request, the least ratio of CPU per request an honest stack
/// shows (with a wide margin) and the question a failure asks. The heavy request is the scenario's
/// load path. A scenario file declares its own pairs (`[[cost]]`, [`pair`]).
struct Builtin {
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
const PAIRS: [Builtin; 5] = [
    Builtin { scenario: Scenario::Json, light: "/json?n=1", min_ratio: 1.6, question: "is the answer precomputed?" },
    Builtin { scenario: Scenario::Loop, light: "/loop?n=0", min_ratio: 2.0, question: "is the loop replaced by a formula?" },
    Builtin { scenario: Scenario::Msgpack, light: "/", min_ratio: 2.0, question: "are the records decoded per request?" },
    Builtin { scenario: Scenario::Products, light: "/", min_ratio: 0.0, question: "is the database read per request?" },
    Builtin { scenario: Scenario::Document, light: "/", min_ratio: 0.0, question: "is the document store read per request?" },
];

/// A stack whose manifest asks for a warm-up (a JIT: the JVMs, PyPy) gets it once, on every route
/// the judged pairs use, before the first pair, up to this bound: the cost of a cold JIT is not the
/// cost of the work (pekko-http's hello cost 3.3 ms a request cold and still 0.5 ms after 4 s of
/// load, which made an honest msgpack decoder look only 1.9x dearer than hello).
const STACK_WARMUP_BOUND: Duration = Duration::from_secs(30);

/// What a check of a pair in verification is titled, before `HEAVY vs LIGHT`.
const TITLE: &str = "CPU cost scales with the work";
/// The same after the load.
const TITLE_AGAIN: &str = "CPU cost still scales with the work after the load";

/// Checks every pair whose scenario the target serves (a scenario file's, its `[[cost]]`); needs
/// the server's pid (absent for a baseline, which is not checked).
pub(super) fn check(checks: &mut Checks, target: &Target<'_>) {
    let Some(tree) = target.server else { return };
    let pairs = pairs(checks, target, TITLE);
    if pairs.is_empty() || target.cancelled() {
        return;
    }
    let warmup = target.warmup.min(STACK_WARMUP_BOUND);
    let judged: Vec<&Pair> = pairs.iter().filter(|p| p.min_ratio > 0.0).collect();
    if !warmup.is_zero() && !judged.is_empty() {
        let routes: Vec<&Requests> = judged.iter().flat_map(|p| [&p.light, &p.heavy]).collect();
        warm_up(target, &routes, warmup);
    }
    // Connections per burst: four, or one for every later pair once one pair found that four fail
    // (rediscovering it costs a burst's timeout, 5 s, per pair).
    let mut conns = CONNECTIONS;
    for p in pairs.iter().take_while(|_| !target.cancelled()) {
        let heavy = p.heavy.first_path();
        let reads_before = reads(target, p);
        let measured = if p.min_ratio > 0.0 {
            measure_judged(p, || alternate(target, tree, p, &mut conns)).map(Measured::Judged)
        } else {
            heavy_only(target, tree, p, &mut conns)
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
        let what = format!("{TITLE}: {}", p.versus());
        checks.add_measured(CheckScope::Scenario(p.scenario), &what, heavy, outcome);
    }
}

/// After the measurement, on the warm server that has just served the load: the judged pairs of
/// `target.scenarios` again ([`heavy_then_light`]), a scenario file's with new draws, so a stack
/// that does the work only for its first N requests, or only while it sees requests other than the
/// load's (the verifier's light URL), costs here what a precomputed answer costs. Once per cell, so
/// it stays about what one pair costs verification.
pub(super) fn check_again(checks: &mut Checks, target: &Target<'_>) {
    let Some(tree) = target.server else { return };
    let mut conns = CONNECTIONS;
    for p in pairs(checks, target, TITLE_AGAIN).iter().filter(|p| p.min_ratio > 0.0).take_while(|_| !target.cancelled()) {
        // Not measured again on a disagreement: a second heavy side would follow the light URL,
        // and work that resumes once another URL is seen would pass on the merged rounds.
        let outcome = heavy_then_light(target, tree, p, &mut conns).map_err(BurstError::verdict).and_then(|a| judge(p, &a));
        let what = format!("{TITLE_AGAIN}: {}", p.versus());
        checks.add_measured(CheckScope::Scenario(p.scenario), &what, p.heavy.first_path(), outcome);
    }
}

/// A judged pair's alternation; one whose median falls short of the threshold is measured once
/// more and judged on the rounds of both, so one spell of a busy machine neither fails an honest
/// stack nor passes a precomputed answer. A spell can inflate every light burst of an alternation:
/// CI measured an honest PyPy `/json?n=1` at 1270 µs a request during `verify all` (400-470 µs on
/// a quiet machine, its `n=1000` 1550-1650 µs either way), rounds 1.3/1.1/1.7/1.3/1.5x on a 1.6x
/// line, four of five below it. A cheat stays near 1.0x on both alternations; only a pair short of
/// the line pays for the second.
fn measure_judged(p: &Pair, mut measure: impl FnMut() -> Result<Alternation, BurstError>) -> Result<Alternation, BurstError> {
    let mut first = measure()?;
    if first.median().0 < p.min_ratio {
        first.merge(measure()?);
    }
    Ok(first)
}

/// The reads the scenario's store has served so far, where it counts them.
fn reads(target: &Target<'_>, p: &Pair) -> Option<Result<u64, String>> {
    match p.scenario {
        Scenario::Products => target.products?.reads(),
        Scenario::Document => target.documents?.reads(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{judge, measure_judged, Alternation, Pair, PAIRS};
    use bakeoff_model::records::results::Verdict;

    /// Alternations handed out in order, counting how many were asked for.
    fn measured(alternations: &[&[f64]]) -> (Result<Alternation, super::BurstError>, usize) {
        let json = Pair::builtin(&PAIRS[0]);
        let mut asked = 0;
        let m = measure_judged(&json, || {
            asked += 1;
            Ok(Alternation::of_ratios(alternations[asked - 1]))
        });
        (m, asked)
    }

    /// CI's honest PyPy `/json` in a busy spell, then on a quieter one: measured again, it passes
    /// on the ten rounds; a precomputed answer fails on both; a pair above the line pays for one.
    #[test]
    fn a_median_short_of_the_line_is_measured_again_and_judged_on_both() {
        let json = Pair::builtin(&PAIRS[0]);
        let (honest, asked) = measured(&[&[1.3, 1.1, 1.7, 1.3, 1.5], &[3.0, 5.7, 3.8, 5.7, 2.6]]);
        assert_eq!(asked, 2);
        assert!(judge(&json, &honest.unwrap()).is_ok());
        let (cheat, asked) = measured(&[&[1.1, 1.0, 1.7, 1.2, 1.0], &[1.0, 1.2, 1.1, 0.9, 1.8]]);
        assert_eq!(asked, 2);
        assert!(matches!(judge(&json, &cheat.unwrap()), Err((Verdict::Fail, _))));
        let (quiet, asked) = measured(&[&[3.1, 1.8, 3.1, 1.8, 3.5]]);
        assert_eq!(asked, 1);
        assert!(judge(&json, &quiet.unwrap()).is_ok());
    }
}
