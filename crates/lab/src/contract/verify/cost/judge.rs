//! The verdicts of the cost check: a pair's median ratio against its threshold, and a store's
//! count of reads against the requests the stack answered.

use super::measure::Alternation;
use super::Pair;
use crate::contract::verify::{fail, warn};
use bakeoff_model::results::Verdict;
use bakeoff_model::scenario::Scenario;

pub(super) fn store_name(scenario: Scenario) -> &'static str {
    if scenario == Scenario::Document {
        "document store"
    } else {
        "database"
    }
}

/// Proof of work at the store: every answered request ran at least one statement (find).
pub(super) fn judge_reads(scenario: Scenario, reads: u64, requests: u64) -> Result<String, (Verdict, String)> {
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
pub(super) fn judge(p: &Pair, m: &Alternation) -> Result<String, (Verdict, String)> {
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
            "the rounds disagree about whether the work scales ({ratio:.1}x median, {} >= {:.1}x; {figures}): rerun verify on a quieter machine",
            p.threshold_source(),
            p.min_ratio
        ));
    }
    let (heavy, light) = p.subjects();
    let costs = if ratio < 1.5 { "costs the same as".to_string() } else { format!("costs only {ratio:.1}x") };
    fail(format!("{heavy} {costs} {light} ({ratio:.1}x; {} >= {:.1}x; {figures}): {}", p.threshold_source(), p.min_ratio, p.question))
}
