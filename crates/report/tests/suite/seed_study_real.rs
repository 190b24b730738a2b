//! A seed study run for real: studies/seed-001-greeting.toml on rust/hyper (the fixed service and its
//! deliberate reproduction of the regex bug) and go/nethttp, with short trials (the flags' override),
//! stored in SQLite and read back; every claim of the report must be what the stored trials give,
//! recomputed here without the model: its value, interval, coverage and verdict.

use bakeoff_lab::run::{execute, plan_run, Overrides, RunRequest, Selection};
use bakeoff_model::records::finding::Finding;
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::statistics::summary::Metric;
use bakeoff_model::study::{CellRef, Check, ClaimResult, ClaimVerdict};
use bakeoff_report::{render, Format, ReportView};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

static NEVER: AtomicBool = AtomicBool::new(false);

const BUG_CLAIM: &str = "Compiling the greeting regex on every request cost the original Rust service: more server CPU";

fn request() -> RunRequest {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    RunRequest {
        study: Some(root.join("studies/seed-001-greeting.toml")),
        selection: Selection { stacks: vec!["rust/hyper".into(), "go/nethttp".into()], ..Default::default() },
        overrides: Overrides {
            duration: Some(Duration::from_secs(1)),
            warmup: Some(Duration::from_millis(300)),
            connections: Some(32),
            // Three trials: 3 v 3 is the fewest from which a claim can decide (90% coverage).
            trials: Some(3),
            ..Default::default()
        },
        root,
        ..Default::default()
    }
}

/// The stored trial is of the claim's cell `r`.
fn mine(r: &CellRef, t: &TrialRecord) -> bool {
    t.cell.stack == r.stack && Some(t.cell.scenario) == r.scenario && r.variant.as_ref().is_none_or(|v| &t.cell.variant == v)
}

/// A claim's cell's stored values of `metric`, one per trial (the cells here have one step).
fn stored(trials: &[TrialRecord], r: &CellRef, metric: Metric) -> Vec<f64> {
    let of = |t: &TrialRecord| match metric {
        Metric::RequestsPerSec => t.load.steps[0].requests_per_sec,
        Metric::CpuUsPerRequest => t.server.cpu_us_per_request,
        m => panic!("seed 001 claims no {m:?}"),
    };
    let mine = |t: &&TrialRecord| mine(r, t);
    let values: Vec<f64> = trials.iter().filter(mine).map(of).collect();
    assert!(trials.iter().filter(mine).all(|t| t.cell.variant == trials.iter().find(mine).unwrap().cell.variant), "{r:?}: one variant");
    values
}

/// `a / b` over the trials as the claims must measure it, computed here from first principles: the
/// median of all pairwise log ratios, and (with at most 4 trials a side no narrower interval reaches
/// 95%) the smallest to the largest pairwise ratio, which misses the true ratio only when every trial
/// of one cell lies above every trial of the other: 2 arrangements of C(n+m, n).
fn hodges_lehmann(a: &[f64], b: &[f64]) -> (f64, f64, f64, f64) {
    assert!(a.len() <= 4 && b.len() <= 4, "the widest interval is the claim's only up to 4 trials a side");
    let mut logs: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| (x / y).ln())).collect();
    logs.sort_by(f64::total_cmp);
    let n = logs.len();
    let median = if n % 2 == 1 { logs[n / 2] } else { (logs[n / 2 - 1] + logs[n / 2]) / 2.0 };
    let choose = |n: usize, k: usize| (1..=k).fold(1.0, |c, i| c * (n + 1 - i) as f64 / i as f64);
    let coverage = 1.0 - 2.0 / choose(a.len() + b.len(), a.len());
    (median.exp(), logs[0].exp(), logs[n - 1].exp(), coverage)
}

/// Checks one judged claim against the stored trials; returns its verdict.
fn check_claim(c: &ClaimResult, trials: &[TrialRecord], view: &ReportView) -> ClaimVerdict {
    let name = &c.claim.statement;
    if !c.claim.testable {
        assert_eq!((c.verdict, c.measured.is_none()), (ClaimVerdict::NotTestable, true), "{name}");
        return c.verdict;
    }
    let refs = c.claim.check.cells();
    if refs.iter().any(|r| !trials.iter().any(|t| t.cell.stack == r.stack)) {
        assert_eq!(c.verdict, ClaimVerdict::NotMeasured, "{name}: a stack this run left out");
        return c.verdict;
    }
    // A cell the summary would not rank makes the claim inconclusive, saying so.
    let unranked = refs.iter().find_map(|r| {
        view.cells.iter().find(|s| {
            !s.rankable()
                && !s.unrankable.iter().all(Finding::is_deliberate_bug)
                && s.cell.stack == r.stack
                && Some(s.cell.scenario) == r.scenario
                && r.variant.as_ref().is_none_or(|v| &s.cell.variant == v)
        })
    });
    if let Some(s) = unranked {
        assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{name}: {:?}", s.unrankable);
        assert!(c.detail.contains("not ranked"), "{name}: {}", c.detail);
        return c.verdict;
    }
    // A cell whose requests/s is the load generator's ceiling is a lower bound: no throughput claim.
    let metric = match &c.claim.check {
        Check::Ratio { metric, .. } | Check::Faster { metric, .. } => metric.unwrap_or(Metric::RequestsPerSec),
        other => panic!("{name}: seed 001 has no {} claim", other.kind()),
    };
    let capped =
        refs.iter().any(|r| view.cells.iter().any(|s| s.client_bound && s.cell.stack == r.stack && Some(s.cell.scenario) == r.scenario));
    if capped && metric == Metric::RequestsPerSec {
        assert_eq!(c.verdict, ClaimVerdict::Inconclusive, "{name}");
        assert!(c.detail.contains("load generator's ceiling"), "{name}: {}", c.detail);
        return c.verdict;
    }
    // Two cells of one scenario pair block by block, on the slices the joint/solo rule chose from
    // the stored records (paired_ratio's own arithmetic is checked by hand in the model); cells of
    // two scenarios compare over their trials, computed here from first principles.
    let key = |r: &CellRef| trials.iter().find(|t| mine(r, t)).map(|t| t.cell.clone()).expect("a measured cell");
    let ratio = |a: &CellRef, b: &CellRef, m: Metric| {
        if refs[0].scenario != refs[1].scenario {
            return hodges_lehmann(&stored(trials, a, m), &stored(trials, b, m));
        }
        let pairs = bakeoff_model::statistics::pairing::pairs_between(trials, &key(a), &key(b), m, 0);
        let r = bakeoff_model::statistics::paired::paired_ratio(&pairs).expect("paired blocks");
        (r.ratio, r.low, r.high, r.confidence)
    };
    let ((value, low, high, coverage), allowed) = match &c.claim.check {
        Check::Ratio { metric, range, .. } => {
            let m = metric.unwrap_or(Metric::RequestsPerSec);
            (ratio(&refs[0], &refs[1], m), (range[0], range[1]))
        }
        Check::Faster { metric, by_percent, .. } => {
            let m = metric.unwrap_or(Metric::RequestsPerSec);
            let r = if m.higher_is_better() { ratio(&refs[0], &refs[1], m) } else { ratio(&refs[1], &refs[0], m) };
            (r, (1.0 + by_percent / 100.0, f64::INFINITY))
        }
        other => panic!("{name}: seed 001 has no {} claim", other.kind()),
    };
    let m = c.measured.as_ref().unwrap_or_else(|| panic!("{name}: a measured value"));
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs();
    assert!(close(m.value, value) && close(m.low, low) && close(m.high, high), "{name}: {m:?} vs stored {value} ({low}-{high})");
    assert!((m.confidence - coverage).abs() < 1e-12, "{name}: coverage {} vs {coverage}", m.confidence);
    let expected = if coverage < 0.9 {
        ClaimVerdict::Inconclusive
    } else if low >= allowed.0 && high <= allowed.1 {
        ClaimVerdict::Held
    } else if high < allowed.0 || low > allowed.1 {
        ClaimVerdict::Failed
    } else {
        ClaimVerdict::Inconclusive
    };
    assert_eq!(c.verdict, expected, "{name}: {m:?}, {}", c.detail);
    if coverage < 0.9 {
        assert!(c.detail.contains("under the 90% a verdict needs"), "{name}: {}", c.detail);
    }
    c.verdict
}

#[test]
fn seed_001_runs_for_real_and_its_claims_are_the_stored_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = bakeoff_store::Store::open(dir.path().join("seed.db")).unwrap();
    let plan = plan_run(request()).unwrap();
    let done = execute(plan, &mut store, &mut |_| {}, &NEVER).unwrap();
    assert!(!done.failed(), "{:?}", done.outcome.failed_cells);
    let data = store.load_run(&done.run.id).unwrap();
    let cells: Vec<&CellKey> = data.trials.iter().map(|t| &t.cell).collect();
    assert_eq!(cells.len(), 18, "rust/hyper x 2 variants and go/nethttp, on hello and greeting, 3 trials each");

    // Every claim of the study is in the report, each what the stored trials give.
    let view = ReportView::new(&data);
    let study = bakeoff_model::study::Study::load(&request().study.unwrap()).unwrap();
    let statements: Vec<&str> = view.claims.iter().map(|c| c.claim.statement.as_str()).collect();
    assert_eq!(statements, study.claims.iter().map(|c| c.statement.as_str()).collect::<Vec<_>>());
    let verdicts: Vec<ClaimVerdict> = view.claims.iter().map(|c| check_claim(c, &data.trials, &view)).collect();
    assert!(verdicts.iter().filter(|v| **v == ClaimVerdict::NotMeasured).count() >= 2, "Node.js and Scala were left out");
    let claim = view.claims.iter().find(|c| c.claim.statement.starts_with(BUG_CLAIM)).expect("the bug's claim");
    let measured = claim.measured.as_ref().expect("a measured value");
    assert!(measured.value > 1.0, "compiling a regex per request costs CPU: {measured:?}");

    // The reproduction is shown, never ranked: unranked for its bug, absent from every "vs best".
    let buggy: Vec<_> = view.cells.iter().filter(|c| c.cell.variant == "regex-per-request").collect();
    assert_eq!(buggy.len(), 2);
    assert!(buggy.iter().all(|c| c.unrankable.iter().any(Finding::is_deliberate_bug)), "{buggy:?}");
    assert!(view.scenarios.iter().flat_map(|s| &s.relative).all(|r| r.cell.variant != "regex-per-request"));
    // ...and never compared with another stack.
    let vs_go = view.claims.iter().find(|c| c.claim.statement.contains("lose to Go")).unwrap();
    assert_eq!(vs_go.verdict, ClaimVerdict::NotTestable);

    // Claims on stacks this run left out are said to be not measured, never dropped.
    let node = view.claims.iter().find(|c| c.claim.statement.contains("Node.js vs Go")).unwrap();
    assert_eq!(node.verdict, ClaimVerdict::NotMeasured);

    // Every format labels the reproduction and shows the bug's claim with the same value and coverage.
    let ratio = format!("{} (", bakeoff_report::sig3(measured.value));
    let coverage = format!(", {})", measured.coverage());
    for format in [Format::Text, Format::Markdown, Format::Html, Format::Json, Format::Csv] {
        let out = render(&data, format);
        assert!(out.contains("deliberate reproduction of a bug"), "{format:?} does not label the reproduction");
        if format != Format::Csv {
            assert!(out.contains(BUG_CLAIM), "{format:?} lacks the bug's claim");
        }
        if matches!(format, Format::Text | Format::Markdown | Format::Html) {
            assert!(out.contains(&ratio) && out.contains(&coverage), "{format:?} lacks the measured ratio {ratio}..{coverage}");
        }
    }
}
