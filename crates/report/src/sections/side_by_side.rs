//! A/B: B against A on every scenario both served in one run, the verdict first, then each compared
//! metric as B / A with its paired interval: what `bench` with two servers prints, and what a
//! pull-request comment quotes. A is the first of the run's two ad-hoc servers, B the second.

use crate::numbers::metric_value;
use crate::sections::scenario::ScenarioView;
use crate::table::Table;
use bakeoff_model::records::metric::Metric;
use bakeoff_model::records::run_data::RunData;
use bakeoff_model::statistics::comparison::{side_by_side, Change, MetricChange, SideBySide};

/// The A/B of a run that measured exactly two ad-hoc servers (`bench --cmd A --cmd B`): one per
/// scenario where both have a closed-model headline row; empty for any other run.
pub(crate) fn side_by_side_view(data: &RunData, scenarios: &[ScenarioView]) -> Vec<SideBySide> {
    let adhoc = data.run.settings.get("adhoc").and_then(|a| a.as_array());
    let names: Vec<&str> = adhoc.into_iter().flatten().filter_map(|a| a.get("stack").and_then(|s| s.as_str())).collect();
    let [a, b] = names[..] else { return Vec::new() };
    let closed = |sv: &'_ ScenarioView, stack: &str| {
        sv.headline.iter().find(|c| c.cell.stack == stack && !c.cell.twin && c.target_rate.is_none()).cloned()
    };
    scenarios.iter().filter_map(|sv| Some(side_by_side(&data.trials, &closed(sv, a)?, &closed(sv, b)?))).collect()
}

/// What a change is called on its metric: speed and CPU are faster or slower, the tail and memory
/// lower or higher.
pub(crate) fn called(c: &MetricChange) -> &'static str {
    verdict_word(c.metric, c.verdict)
}

/// What a verdict `v` on `metric` is called (shared with `bakeoff history`).
pub(crate) fn verdict_word(metric: Metric, v: Change) -> &'static str {
    let speed = matches!(metric, Metric::RequestsPerSec | Metric::CpuUsPerRequest);
    match (v, speed) {
        (Change::NoDetectableChange, _) => "within noise",
        (Change::Faster, true) => "faster",
        (Change::Slower, true) => "slower",
        (Change::Faster, false) => "lower",
        (Change::Slower, false) => "higher",
    }
}

/// "1.04x (1.03–1.05)", or the quotient with why it has no interval.
pub(crate) fn ratio(c: &MetricChange) -> String {
    if !(c.median_a > 0.0 && c.median_b > 0.0) {
        return "not measured (a server without its process: no CPU or memory)".into();
    }
    match (c.low, c.high) {
        (Some(l), Some(h)) => format!("{:.3}x ({l:.3}–{h:.3})", c.ratio),
        _ => format!("{:.3}x (no 95% interval: too few shared blocks)", c.ratio),
    }
}

/// The metric as a sentence names it.
pub(crate) fn named(m: Metric) -> &'static str {
    match m {
        Metric::RequestsPerSec => "requests/s",
        Metric::CpuUsPerRequest => "CPU per request",
        Metric::P99Us => "p99",
        Metric::PeakRssMib => "peak RSS",
        _ => m.heading(),
    }
}

/// One line per scenario, the verdict first: "hello: adhoc/head is slower than adhoc/base: CPU per
/// request 1.042x (1.031–1.053) slower; …; paired over 8 blocks in 4 launches".
pub(crate) fn lines(pairs: &[SideBySide]) -> Vec<String> {
    pairs
        .iter()
        .map(|p| {
            let speed: Vec<&MetricChange> =
                p.changes.iter().filter(|c| matches!(c.metric, Metric::RequestsPerSec | Metric::CpuUsPerRequest)).collect();
            let verdict = if speed.iter().any(|c| c.verdict == Change::Slower) {
                "is slower than"
            } else if speed.iter().any(|c| c.verdict == Change::Faster) {
                "is faster than"
            } else {
                "cannot be told from"
            };
            let each: Vec<String> = p.changes.iter().map(|c| format!("{} {} {}", named(c.metric), ratio(c), called(c))).collect();
            let paired = if p.blocks > 0 {
                format!("paired over {} blocks in {} launches", p.blocks, p.launches)
            } else {
                "not paired: the two shared no blocks".to_string()
            };
            format!("{}: {} {verdict} {}: {}; {paired}", p.a.scenario, p.b.stack, p.a.stack, each.join("; "))
        })
        .collect()
}

/// Scenario, metric, A's and B's medians, B / A with its interval, and the verdict.
pub(crate) fn table(pairs: &[SideBySide]) -> Table {
    let mut t = Table::new(&["scenario", "metric", "A", "B", "B / A (95%)", "verdict"]);
    for p in pairs {
        for c in &p.changes {
            t.push([
                p.a.scenario.to_string(),
                named(c.metric).to_string(),
                metric_value(c.metric, c.median_a),
                metric_value(c.metric, c.median_b),
                ratio(c),
                called(c).to_string(),
            ]);
        }
    }
    t
}

/// The section's title: "A/B: adhoc/head against adhoc/base".
pub(crate) fn title(pairs: &[SideBySide]) -> Option<String> {
    pairs.first().map(|p| format!("A/B: {} (B) against {} (A)", p.b.stack, p.a.stack))
}
