//! A seed study run for real: studies/seed-001-greeting.toml on rust/hyper (the fixed service and its
//! deliberate reproduction of the regex bug) and go/nethttp, with short trials (the flags' override),
//! stored in SQLite and read back; the report's claims must be the values the stored trials give.

use bakeoff_lab::run::execute::execute;
use bakeoff_lab::run::plan::{plan_run, Overrides, RunRequest, Selection};
use bakeoff_model::results::{CellKey, TrialRecord, DELIBERATE_BUG};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::ClaimVerdict;
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
            trials: Some(2),
            ..Default::default()
        },
        root,
        ..Default::default()
    }
}

/// The median of a cell's stored server CPU per request, computed here from the trials (not by the model).
fn stored_median_cpu(trials: &[TrialRecord], stack: &str, variant: &str, scenario: Scenario) -> f64 {
    let mut v: Vec<f64> = trials
        .iter()
        .filter(|t| t.cell.stack == stack && t.cell.variant == variant && t.cell.scenario == scenario)
        .map(|t| t.server.cpu_us_per_request)
        .collect();
    assert_eq!(v.len(), 2, "{stack}[{variant}] {scenario}: two trials stored");
    v.sort_by(f64::total_cmp);
    (v[0] + v[1]) / 2.0
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
    assert_eq!(cells.len(), 12, "rust/hyper x 2 variants and go/nethttp, on hello and greeting, 2 trials each");

    // The claim of the bug's cost is the ratio of the stored medians of CPU per request, buggy over fixed.
    let view = ReportView::new(&data);
    let claim = view.claims.iter().find(|c| c.claim.statement.starts_with(BUG_CLAIM)).expect("the bug's claim");
    let measured = claim.measured.as_ref().expect("a measured value");
    let fixed = stored_median_cpu(&data.trials, "rust/hyper", "sqlite", Scenario::Greeting);
    let buggy = stored_median_cpu(&data.trials, "rust/hyper", "regex-per-request", Scenario::Greeting);
    assert!((measured.value - buggy / fixed).abs() < 1e-9 * measured.value, "{} vs {}", measured.value, buggy / fixed);
    assert!(buggy > fixed, "compiling a regex per request costs CPU: {buggy:.1} vs {fixed:.1} µs/request");
    assert_ne!(claim.verdict, ClaimVerdict::NotMeasured, "{}", claim.detail);

    // The reproduction is shown, never ranked: unranked for its bug, absent from every "vs best".
    let buggy: Vec<_> = view.cells.iter().filter(|c| c.cell.variant == "regex-per-request").collect();
    assert_eq!(buggy.len(), 2);
    assert!(buggy.iter().all(|c| c.unrankable.iter().any(|r| r.starts_with(DELIBERATE_BUG))), "{buggy:?}");
    assert!(view.scenarios.iter().flat_map(|s| &s.relative).all(|r| r.cell.variant != "regex-per-request"));
    // ...and never compared with another stack.
    let vs_go = view.claims.iter().find(|c| c.claim.statement.contains("lose to Go")).unwrap();
    assert_eq!(vs_go.verdict, ClaimVerdict::NotTestable);

    // Claims on stacks this run left out are said to be not measured, never dropped.
    let node = view.claims.iter().find(|c| c.claim.statement.contains("Node.js vs Go")).unwrap();
    assert_eq!(node.verdict, ClaimVerdict::NotMeasured);

    // Every format labels the reproduction and shows the bug's claim with the same value.
    let ratio = bakeoff_report::numbers::sig3(measured.value);
    for format in [Format::Text, Format::Markdown, Format::Html, Format::Json, Format::Csv] {
        let out = render(&data, format);
        assert!(out.contains("deliberate reproduction of a bug"), "{format:?} does not label the reproduction");
        if format != Format::Csv {
            assert!(out.contains(BUG_CLAIM), "{format:?} lacks the bug's claim");
        }
        if matches!(format, Format::Text | Format::Markdown) {
            assert!(out.contains(&ratio), "{format:?} lacks the measured ratio {ratio}");
        }
    }
}
