//! A scenario file's `[[cost]]` pair against a real server (tests/fixtures/shopcost, behind a
//! login per connection): `/work?n=` hashing N times declared heavy against an item lookup. The
//! honest server passes with its measured ratio, verification and after the load, and its cell is
//! no longer marked work_not_proven (the same file without the pair is); a memo of each N fails
//! verification naming the kinds, the ratio and the file's question; a memo that starts after 400
//! requests of `/work` passes verification and fails the pair run again after the load, leaving
//! the cell unranked.

use crate::common;

use bakeoff_lab::run::ScenarioFile;
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_model::records::finding::FindingKind;
use bakeoff_model::records::results::{Check, LabWarning, MemorySink, TrialRecord, Verdict, VerifyReport};
use bakeoff_model::scenario::{FileScenario, Scenario};
use bakeoff_model::statistics::summary::summarize;
use bakeoff_model::workload::Workload;
use std::time::Duration;

const QUESTION: &str = "is the hashing done on every request?";

fn stack() -> Stack {
    common::fixture_stack("shopcost")
}

fn work_file_text() -> String {
    std::fs::read_to_string(common::project_root().join("tests/fixtures/shopcost/work.toml")).unwrap()
}

/// The fixture's file, or its text as edited by `edit`.
fn work_file(edit: impl Fn(String) -> String) -> ScenarioFile {
    let path = common::project_root().join("tests/fixtures/shopcost/work.toml");
    ScenarioFile::new(Workload::parse(&path, &edit(work_file_text())).unwrap()).unwrap()
}

fn scenario() -> Scenario {
    Scenario::File(FileScenario::named("work"))
}

fn verify(variant: &str) -> VerifyReport {
    let stack = stack();
    let scratch = common::Scratch::new(&format!("file-cost-verify-{variant}"));
    let (mut sink, mut events) = (MemorySink::default(), common::ignore);
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.bench.settings_mut().scenario_files = vec![work_file(|t| t)];
    lab.bench.verify_variant(&stack, stack.variant(variant).unwrap(), &[scenario()], 1)
}

/// A first trial of the file's cell measured for `duration`, and the cost checks run again after it.
fn measure(variant: &str, file: ScenarioFile, duration: Duration) -> (TrialRecord, Vec<Check>) {
    common::measure_rechecked(&stack(), variant, scenario(), |s| {
        s.duration = duration;
        s.scenario_files = vec![file];
    })
}

fn cost_check(report: &VerifyReport) -> &Check {
    let dump = || serde_json::to_string_pretty(report).unwrap();
    let mut costs = report.checks.iter().filter(|c| c.what.starts_with("CPU cost"));
    let c = costs.next().unwrap_or_else(|| panic!("no cost check:\n{}", dump()));
    assert!(costs.next().is_none(), "one pair, one check:\n{}", dump());
    assert_eq!(c.scenario.to_string(), "file:work");
    assert_eq!(c.what, "CPU cost scales with the work: `work` vs `item`");
    assert!(c.url.contains("/work?n="), "the heavy side's URL: {}", c.url);
    c
}

/// The ratio a passing cost check begins its reason with (`12.3x (median of …`).
fn ratio(c: &Check) -> f64 {
    c.reason.split('x').next().unwrap().parse().unwrap_or_else(|_| panic!("{}", c.reason))
}

#[test]
fn an_honest_server_passes_its_files_cost_pair_and_its_cell_is_not_marked_unproven() {
    let report = verify("honest");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report.verdict(), Verdict::Pass, "{dump}");
    let c = cost_check(&report);
    eprintln!("honest, verification: {}", c.reason);
    assert!(ratio(c) > 3.0, "{}", c.reason);
    let (trial, rechecked) = measure("honest", work_file(|t| t), Duration::from_secs(2));
    assert_eq!(rechecked.len(), 1, "{rechecked:?}");
    assert_eq!(rechecked[0].what, "CPU cost still scales with the work after the load: `work` vs `item`");
    assert_ne!(rechecked[0].verdict, Verdict::Fail, "{:?}", rechecked[0]);
    eprintln!("honest, after the load: {}", rechecked[0].reason);
    let kinds: Vec<(&str, u64)> = trial.load.steps[0].kinds.iter().map(|k| (k.name.as_str(), k.requests)).collect();
    assert!(kinds.iter().all(|&(_, n)| n > 0) && kinds.len() == 2, "{kinds:?}");
    assert_eq!(trial.load.steps[0].errors.total(), 0, "{:?}", trial.load.steps[0].errors);
    let proof = |w: &LabWarning| matches!(w, LabWarning::WorkNotProven { .. } | LabWarning::CostAfterLoad { .. });
    assert!(!trial.warnings.iter().any(proof), "{:?}", trial.warnings);
    // The same file without its pair proves nothing: the cell says so, and nothing runs again.
    let bare = work_file(|t| t[..t.find("[[cost]]").unwrap()].to_string());
    let (trial, rechecked) = measure("honest", bare, Duration::from_secs(1));
    assert!(rechecked.is_empty(), "{rechecked:?}");
    assert!(trial.warnings.iter().any(|w| matches!(w, LabWarning::WorkNotProven { .. })), "{:?}", trial.warnings);
}

#[test]
fn a_memo_of_each_input_fails_verification_naming_the_kinds_the_ratio_and_the_question() {
    let report = verify("memo");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    let c = cost_check(&report);
    eprintln!("memo, verification: {}", c.reason);
    assert_eq!(c.verdict, Verdict::Fail, "{dump}");
    assert!(c.reason.starts_with("`work` costs the same as `item` ("), "{}", c.reason);
    assert!(c.reason.contains("x; the file asks for >= 1.5x; median of "), "{}", c.reason);
    assert!(c.reason.ends_with(QUESTION), "{}", c.reason);
    // Its answers are right: only the cost gives the memo away, and nothing would be measured.
    assert!(report.checks.iter().filter(|c| !c.what.starts_with("CPU cost")).all(|c| c.verdict == Verdict::Pass), "{dump}");
    assert!(!report.passed_scenario(scenario()), "{dump}");
}

/// Verification sends `/work` fewer than 400 times; a trial of 5 s, more.
#[test]
fn a_memo_that_starts_after_400_requests_fails_the_pair_run_again_after_the_load() {
    let report = verify("late-memo");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    assert!(report.checks.iter().all(|c| c.verdict != Verdict::Fail), "verification cannot see it:\n{dump}");
    eprintln!("late-memo, verification: {}", cost_check(&report).reason);
    let (trial, rechecked) = measure("late-memo", work_file(|t| t), Duration::from_secs(5));
    let work = trial.load.steps[0].kinds.iter().find(|k| k.name == "work").map_or(0, |k| k.requests);
    assert!(work > 400, "the memo must have started during the load: {work} requests of /work measured");
    let after = trial
        .warnings
        .iter()
        .find(|w| matches!(w, LabWarning::CostAfterLoad { .. }))
        .unwrap_or_else(|| panic!("{:?}\nrechecked: {rechecked:?}", trial.warnings));
    let message = after.message();
    eprintln!("late-memo, after the load: {message}");
    assert!(message.starts_with("file:work: the work stopped costing what it claims under load"), "{message}");
    assert!(message.contains("`work` costs") && message.ends_with(QUESTION), "{message}");
    assert!(!trial.warnings.iter().any(|w| matches!(w, LabWarning::WorkNotProven { .. })), "{:?}", trial.warnings);
    let summary = &summarize(std::slice::from_ref(&trial))[0];
    assert!(
        summary.unrankable.iter().any(|r| matches!(r.kind, FindingKind::Lab(LabWarning::CostAfterLoad { .. }))),
        "{:?}",
        summary.unrankable
    );
}
