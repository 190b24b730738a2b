//! A/B in one run (`bench --cmd base=… --cmd head=…`): B's change against A on each compared metric,
//! paired block by block, the verdict first in every format, and the gate `--fail-if-slower` reads.

use crate::formats::matches_snapshot;
use bakeoff_model::records::metric::Metric;
use bakeoff_model::records::results::TrialRecord;
use bakeoff_model::statistics::comparison::{Change, Gate};
use bakeoff_report::synthetic;
use bakeoff_report::{render, Format, ReportView};

/// A hello trial of `stack` in block `block` at `rps` (the paired tests' slice), with memory that
/// varies a little from start to start, alike for both.
fn slice(stack: &str, block: u32, rps: f64) -> TrialRecord {
    let mut t = crate::paired_and_ceiling::slice(stack, block, rps);
    t.server.peak_rss_bytes = 20 * 1024 * 1024 + (block as u64 % 3) * 100_000;
    t
}

/// Eight blocks whose machine drifts by ±20%, B at `b_share` of A's speed in each, with a little
/// noise of its own.
fn run(b_share: f64) -> bakeoff_model::records::run_data::RunData {
    let machine = [100_000.0, 96_000.0, 120_000.0, 81_000.0, 103_000.0, 99_000.0, 110_000.0, 90_000.0];
    let noise = [1.003, 0.998, 1.001, 0.997, 1.002, 0.999, 1.004, 0.996];
    let mut d = synthetic::run_data();
    d.trials = machine
        .iter()
        .zip(noise)
        .enumerate()
        .flat_map(|(i, (m, n))| [slice("adhoc/base", i as u32 + 1, *m), slice("adhoc/head", i as u32 + 1, m * b_share * n)])
        .collect();
    d.run.settings = serde_json::json!({
        "load": { "rank_by": "capacity", "trials": 8, "schedule": "blocks" },
        "adhoc": [{ "stack": "adhoc/base" }, { "stack": "adhoc/head" }],
    });
    d.what_ran.clear();
    d
}

/// A head 4% slower in every block of a machine drifting ±20%: slower on requests/s and CPU per
/// request, each interval within a percent of 0.96 (1.04), so a 3% gate fails and a 5% one does
/// not; the p99, equal in every block, is within noise.
#[test]
fn a_head_four_percent_slower_is_called_slower_on_both_speeds_and_fails_a_three_percent_gate() {
    let d = run(0.96);
    let view = ReportView::new(&d);
    assert_eq!(view.side_by_side.len(), 1);
    let ab = &view.side_by_side[0];
    assert_eq!((ab.a.stack.as_str(), ab.b.stack.as_str()), ("adhoc/base", "adhoc/head"));
    assert_eq!((ab.blocks, ab.launches), (8, 4));
    let rps = ab.change(Metric::RequestsPerSec).unwrap();
    assert_eq!(rps.verdict, Change::Slower);
    assert!(rps.low.unwrap() > 0.95 && rps.high.unwrap() < 0.97, "{rps:?}");
    let cpu = ab.change(Metric::CpuUsPerRequest).unwrap();
    assert_eq!(cpu.verdict, Change::Slower, "{cpu:?}");
    assert_eq!(ab.change(Metric::P99Us).unwrap().verdict, Change::NoDetectableChange);
    let gate = |fraction| [Gate { metric: Metric::CpuUsPerRequest, fraction }, Gate { metric: Metric::RequestsPerSec, fraction }];
    assert_eq!(ab.failed(&gate(0.03)).len(), 2);
    assert!(ab.failed(&gate(0.05)).is_empty());
}

/// The same binary twice: every interval holds 1, no verdict of a change, no gate fails.
#[test]
fn the_same_server_twice_is_within_noise_and_passes_every_gate() {
    let d = run(1.0);
    let view = ReportView::new(&d);
    let ab = &view.side_by_side[0];
    assert!(ab.changes.iter().all(|c| c.verdict == Change::NoDetectableChange), "{:?}", ab.changes);
    assert!(ab.failed(&[Gate { metric: Metric::RequestsPerSec, fraction: 0.01 }]).is_empty());
}

/// A run of other stacks has no A/B section in any format.
#[test]
fn a_run_without_two_adhoc_servers_has_no_side_by_side() {
    let d = synthetic::run_data();
    assert!(ReportView::new(&d).side_by_side.is_empty());
    assert!(!render(&d, Format::Text).contains("A/B:"));
}

/// The verdict comes first: in text before the provenance, in Markdown right under the title
/// (a pull-request comment's first lines); the Markdown kept as a snapshot.
#[test]
fn the_verdict_opens_the_text_and_markdown_reports() {
    let d = run(0.96);
    let text = render(&d, Format::Text);
    assert!(text.starts_with("== A/B: adhoc/head (B) against adhoc/base (A) =="), "{text}");
    assert!(text.contains("hello: adhoc/head is slower than adhoc/base: requests/s 0.96"), "{text}");
    let md = render(&d, Format::Markdown);
    let second = md.lines().find(|l| !l.is_empty() && !l.starts_with("# ")).unwrap();
    assert_eq!(second, "## A/B: adhoc/head (B) against adhoc/base (A)");
    matches_snapshot("side_by_side.md", &md);
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    assert_eq!(json["side_by_side"][0]["changes"][0]["verdict"], "slower");
}

/// The A/B as JUnit XML for CI: a 3% gate fails both speeds of a head 4% slower (a failure each,
/// with the interval that proves it); p99 and peak RSS, ungated, pass with their verdicts in their
/// output; a 5% gate fails nothing. The whole file is kept as a snapshot.
#[test]
fn the_junit_xml_fails_the_gated_metrics_b_is_worse_on() {
    let d = run(0.96);
    let view = ReportView::new(&d);
    let gates = [Gate { metric: Metric::CpuUsPerRequest, fraction: 0.03 }, Gate { metric: Metric::RequestsPerSec, fraction: 0.03 }];
    let xml = bakeoff_report::junit(&view.side_by_side, &gates);
    assert!(xml.contains("<testsuites name=\"bakeoff A/B\" tests=\"4\" failures=\"2\" skipped=\"0\">"), "{xml}");
    assert_eq!(xml.matches("<failure message=\"adhoc/head is worse than adhoc/base beyond 3.0%").count(), 2, "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), xml.matches("</testcase>").count());
    matches_snapshot("side_by_side.junit.xml", &xml);
    let lenient = bakeoff_report::junit(&view.side_by_side, &[Gate { metric: Metric::RequestsPerSec, fraction: 0.05 }]);
    assert!(lenient.contains("failures=\"0\"") && !lenient.contains("<failure"), "{lenient}");
}

/// `bakeoff history` over three A/B runs, each B 1% slower than its A (0.99 in every block of a
/// machine drifting ±20%): each run's own ratio is 0.99, and the chain since the first run reaches
/// 0.99³ ≈ 0.970, its interval wider at each step (the steps' variances add); runs are read oldest
/// first whatever their order, and a run without an A/B adds nothing.
#[test]
fn history_chains_successive_ab_runs_and_widens_the_interval_at_each_step() {
    let mut runs: Vec<_> = ["2026-11-30T03:00:00Z", "2026-11-30T01:00:00Z", "2026-11-30T02:00:00Z"]
        .iter()
        .enumerate()
        .map(|(i, started)| {
            let mut d = run(0.99);
            d.run.id = format!("run-{i}");
            d.run.started_at = started.to_string();
            d
        })
        .collect();
    runs.push(synthetic::run_data());
    let trends = bakeoff_report::history::history(&runs);
    let rps = trends.iter().find(|t| t.metric == Metric::RequestsPerSec).expect("a requests/s trend");
    let order: Vec<&str> = rps.steps.iter().map(|s| s.run.as_str()).collect();
    assert_eq!(order, ["run-1", "run-2", "run-0"], "oldest first");
    for s in &rps.steps {
        assert!((s.ratio - 0.99).abs() < 0.003, "{s:?}");
    }
    let last = rps.steps.last().unwrap();
    assert!((last.chained - 0.99f64.powi(3)).abs() < 0.006, "{last:?}");
    let width = |s: &bakeoff_report::history::Step| s.chained_high.unwrap() / s.chained_low.unwrap();
    assert!(width(&rps.steps[1]) > width(&rps.steps[0]) && width(last) > width(&rps.steps[1]), "{:?}", rps.steps);
    for f in [Format::Text, Format::Markdown, Format::Html] {
        let out = bakeoff_report::history::render(&trends, f);
        assert!(out.contains("since the first run") && out.contains("run-0"), "{f}");
    }
    assert!(bakeoff_report::history::render(&trends, Format::Html).contains("<svg"), "a chart per trend");
}
