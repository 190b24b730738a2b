//! JUnit XML of an A/B run (`bench --junit FILE`), for CI systems that read test reports: one test
//! suite per scenario, one test case per compared metric. A case fails where B is worse than A
//! beyond its `--fail-if-slower` gate (the exit code's 3), is skipped where a gated metric has no
//! 95% interval to judge (the exit code's 4), and passes otherwise; its verdict and interval are in
//! its output either way, so a CI's test view reads as the report's A/B section does.

use crate::formats::html::esc as escape;
use crate::sections::side_by_side::{called, named, ratio};
use bakeoff_model::statistics::comparison::{Gate, MetricChange, SideBySide};
use std::fmt::Write;

/// How one metric of one scenario ends as a test case.
enum Outcome {
    Passed,
    Failed(String),
    Skipped(String),
}

/// The case of `c` in `pair` under `gates`.
fn outcome(pair: &SideBySide, c: &MetricChange, gates: &[Gate]) -> Outcome {
    let Some(gate) = gates.iter().find(|g| g.metric == c.metric) else { return Outcome::Passed };
    if pair.failed(std::slice::from_ref(gate)).iter().any(|(_, failed)| failed.metric == c.metric) {
        return Outcome::Failed(format!(
            "{} is worse than {} beyond {:.1}% on {}: {}",
            pair.b.stack,
            pair.a.stack,
            100.0 * gate.fraction,
            named(c.metric),
            ratio(c)
        ));
    }
    if c.low.is_none() {
        return Outcome::Skipped(format!("no 95% interval of {} to judge (too few shared blocks: raise --trials)", named(c.metric)));
    }
    Outcome::Passed
}

/// The JUnit XML of `pairs` (the run's A/B, one per scenario) judged by `gates`.
pub fn junit(pairs: &[SideBySide], gates: &[Gate]) -> String {
    let cases: Vec<Vec<(&MetricChange, Outcome)>> =
        pairs.iter().map(|p| p.changes.iter().map(|c| (c, outcome(p, c, gates))).collect()).collect();
    let count = |of: &[(&MetricChange, Outcome)], f: fn(&Outcome) -> bool| of.iter().filter(|(_, o)| f(o)).count();
    let failed = |o: &Outcome| matches!(o, Outcome::Failed(_));
    let skipped = |o: &Outcome| matches!(o, Outcome::Skipped(_));
    let (tests, failures, skips) = cases.iter().fold((0, 0, 0), |(t, f, s), c| (t + c.len(), f + count(c, failed), s + count(c, skipped)));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, "<testsuites name=\"bakeoff A/B\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{skips}\">");
    for (pair, cases) in pairs.iter().zip(&cases) {
        let suite = format!("{}: {} (B) against {} (A)", pair.a.scenario, pair.b.stack, pair.a.stack);
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">",
            escape(&suite),
            cases.len(),
            count(cases, failed),
            count(cases, skipped)
        );
        for (c, o) in cases {
            let _ = writeln!(
                out,
                "    <testcase classname=\"bakeoff.ab.{}\" name=\"{}\">",
                escape(&pair.a.scenario.to_string()),
                named(c.metric)
            );
            match o {
                Outcome::Failed(message) => {
                    let _ = writeln!(out, "      <failure message=\"{}\"/>", escape(message));
                }
                Outcome::Skipped(message) => {
                    let _ = writeln!(out, "      <skipped message=\"{}\"/>", escape(message));
                }
                Outcome::Passed => {}
            }
            let paired = format!("paired over {} blocks in {} launches", pair.blocks, pair.launches);
            let said = format!("{}: B / A {} {}; {paired}", named(c.metric), ratio(c), called(c));
            let _ = writeln!(out, "      <system-out>{}</system-out>", escape(&said));
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
