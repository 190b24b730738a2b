//! Detection against a real misbehaving server (tests/fixtures/cheating-stack): right answers
//! without the work (precomputed, memoised per URL, or special-cased for the load's own URLs) fail
//! verification's CPU-cost check, errors under its bursts fail it too, a document cached for the
//! load's id fails the store's find count, a micro-cache of `/products` on PostgreSQL fails its
//! statement count (pg_stat_statements) while one query per request passes it, a process that escapes its group fails verification by
//! pid and command, and a hang, a stall, a cache that starts once warm or a memo that starts after
//! more requests than verification sends make a measured cell unrankable. The honest variant
//! passes the same checks, and no start can tell verification from measurement by its RUN_DIR.

use crate::common;

use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_load::Warning;
use bakeoff_model::records::finding::FindingKind;
use bakeoff_model::records::results::{Check, LabWarning, MemorySink, TrialRecord, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::summary::summarize;
use std::time::Duration;

fn stack() -> Stack {
    bakeoff_lab::stacks::catalog::load_dir(&common::project_root().join("tests/fixtures/cheating-stack")).unwrap()
}

fn verify(variant: &str) -> VerifyReport {
    let stack = stack();
    let scratch = common::Scratch::new(&format!("cheat-verify-{variant}"));
    let (mut sink, mut events) = (MemorySink::default(), common::ignore);
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let variant = stack.variant(variant).unwrap();
    lab.bench.verify_variant(&stack, variant, &variant.scenarios, 1)
}

fn measure(variant: &str, scenario: Scenario) -> TrialRecord {
    measure_rechecked(variant, scenario, common::quick_settings().duration).0
}

/// A first trial of the cell measured for `duration`, and the CPU-cost checks run again after it
/// (none for a scenario without a judged cost pair).
fn measure_rechecked(variant: &str, scenario: Scenario, duration: Duration) -> (TrialRecord, Vec<Check>) {
    common::measure_rechecked(&stack(), variant, scenario, |s| s.duration = duration)
}

fn cost_check<'a>(report: &'a VerifyReport, scenario: &str) -> &'a Check {
    let dump = || serde_json::to_string_pretty(report).unwrap();
    report
        .checks
        .iter()
        .find(|c| c.scenario.to_string() == scenario && c.what.starts_with("CPU cost"))
        .unwrap_or_else(|| panic!("no cost check:\n{}", dump()))
}

#[test]
fn precomputed_answers_fail_the_cpu_cost_check_naming_the_scenario_and_why() {
    let report = verify("precomputed");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    for (scenario, says) in [
        ("json", "/json?n=1000 costs the same as n=1"),
        ("loop", "/loop?n=1000000 costs the same as n=0"),
        ("msgpack", "/msgpack costs the same as /"),
    ] {
        let c = cost_check(&report, scenario);
        assert_eq!(c.verdict, Verdict::Fail, "{scenario}:\n{dump}");
        assert!(c.reason.starts_with(says) && c.reason.contains("honest stacks measure >="), "{scenario}: {}", c.reason);
    }
    assert!(cost_check(&report, "json").reason.ends_with("is the answer precomputed?"));
    // The bodies are right: only the cost gives the cheat away.
    assert!(report.checks.iter().filter(|c| !c.what.starts_with("CPU cost")).all(|c| c.verdict != Verdict::Fail), "{dump}");
}

/// A memo per URL and constants for the load's exact URLs both pass the body checks (inputs are
/// random there) and fail the cost check, whose heavy request is the load's own URL, repeated.
#[test]
fn a_memo_per_url_and_answers_special_cased_for_the_loads_urls_fail_the_cost_check() {
    for variant in ["memo", "exact"] {
        let report = verify(variant);
        let dump = serde_json::to_string_pretty(&report).unwrap();
        for (scenario, says) in [("json", "/json?n=1000 costs the same as n=1"), ("loop", "/loop?n=1000000 costs the same as n=0")] {
            let c = cost_check(&report, scenario);
            assert_eq!(c.verdict, Verdict::Fail, "{variant} {scenario}:\n{dump}");
            assert!(c.reason.starts_with(says), "{variant} {scenario}: {}", c.reason);
        }
        assert!(report.checks.iter().filter(|c| !c.what.starts_with("CPU cost")).all(|c| c.verdict != Verdict::Fail), "{dump}");
    }
}

/// The live-data probe picks a random id and misses the one cached document 99 times in 100; the
/// store's count of find operations over a burst of the load's `/documents/42` does not.
#[test]
fn a_document_cached_for_the_loads_id_fails_the_document_stores_find_count() {
    let report = verify("doc-cache");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    let count = report.checks.iter().find(|c| c.what.contains("at least one read per request")).unwrap_or_else(|| panic!("{dump}"));
    assert_eq!(count.verdict, Verdict::Fail, "{dump}");
    assert!(count.reason.starts_with("the document store ran fewer find operations than the stack answered requests"), "{}", count.reason);
    assert!(count.reason.ends_with("is the answer cached?"), "{}", count.reason);
    assert!(count.url.ends_with("/documents/42"), "{}", count.url);
}

/// (statements, requests) from a read count's figure: `S statements over R requests, P per request`.
fn statements_and_requests(reason: &str) -> (u64, u64) {
    let words: Vec<&str> = reason.split([' ', '(']).collect();
    let at = words.windows(4).position(|w| w[1] == "statements" && w[2] == "over").unwrap_or_else(|| panic!("no figure: {reason}"));
    let number = |w: &str| w.parse::<u64>().unwrap_or_else(|_| panic!("`{w}` in {reason}"));
    (number(words[at]), number(words[at + 3]))
}

/// PostgreSQL counts the statements that read `product` (pg_stat_statements) over the `/products`
/// burst. `pg-cache` keeps the answer for 5 ms after each read, made under a lock that the
/// burst's other connections wait on: fewer statements than requests, a failure naming both.
/// `pg-honest` runs one query per request (a psql process each) and passes. One cluster serves both.
#[test]
fn a_products_cache_on_postgresql_fails_the_statement_count_and_one_query_per_request_passes() {
    const WHAT: &str = "the database answers at least one read per request";
    let stack = stack();
    let scratch = common::Scratch::new("cheat-verify-pg");
    let (mut sink, mut events) = (MemorySink::default(), common::ignore);
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    for name in ["pg-cache", "pg-honest"] {
        let variant = stack.variant(name).unwrap();
        let report = lab.bench.verify_variant(&stack, variant, &variant.scenarios, 1);
        let dump = serde_json::to_string_pretty(&report).unwrap();
        let count = report.checks.iter().find(|c| c.what == WHAT).unwrap_or_else(|| panic!("{name}: no read count:\n{dump}"));
        assert!(count.url.ends_with("/products"), "{}", count.url);
        let (statements, requests) = statements_and_requests(&count.reason);
        eprintln!("{name}: {}", count.reason);
        if name == "pg-cache" {
            assert_eq!(count.verdict, Verdict::Fail, "{dump}");
            assert!(count.reason.starts_with("the database ran fewer statements than the stack answered requests ("), "{}", count.reason);
            assert!(count.reason.ends_with("is the answer cached?"), "{}", count.reason);
            assert!(statements < requests, "{}", count.reason);
        } else {
            assert_eq!(count.verdict, Verdict::Pass, "{dump}");
            assert!(statements >= requests && requests > 0, "{}", count.reason);
            assert!(report.checks.iter().all(|c| c.verdict != Verdict::Fail), "{dump}");
        }
    }
}

#[test]
fn the_honest_variant_passes_the_cpu_cost_check_with_its_measured_ratio() {
    let report = verify("honest");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(report.verdict(), Verdict::Pass, "{dump}");
    for scenario in ["json", "loop"] {
        let c = cost_check(&report, scenario);
        let ratio: f64 = c.reason.split('x').next().unwrap().parse().unwrap_or_else(|_| panic!("{}", c.reason));
        assert!(ratio > 3.0, "{scenario}: {}", c.reason);
    }
}

#[test]
fn a_double_forked_setsid_child_fails_verification_by_pid_and_command_and_is_killed() {
    let report = verify("fork");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    let left = report.checks.iter().find(|c| c.what.contains("outlives its stop")).unwrap_or_else(|| panic!("{dump}"));
    assert_eq!(left.verdict, Verdict::Fail);
    assert!(left.reason.starts_with("pid ") && left.reason.contains("python3 server.py`)"), "{}", left.reason);
    let pid: u32 = left.reason["pid ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(!bakeoff_lab::machine::leftovers::alive(pid), "the lab killed pid {pid}");
}

#[test]
fn a_hang_is_unanswered_requests_a_stopped_answering_warning_and_an_unrankable_cell() {
    for variant in ["hang", "partial"] {
        let trial = measure(variant, Scenario::Hello);
        let step = &trial.load.steps[0];
        assert!(step.errors.unanswered > 0, "{variant}: {:?}", step.errors);
        assert!(step.warnings.iter().any(|w| w.kind() == "stopped_answering"), "{variant}: {:?}", step.warnings);
        let summary = &summarize(std::slice::from_ref(&trial))[0];
        assert!(!summary.rankable(), "{variant}");
        assert!(
            summary.unrankable.iter().any(|r| matches!(r.kind, FindingKind::Load(Warning::StoppedAnswering { .. }))),
            "{variant}: {:?}",
            summary.unrankable
        );
    }
}

#[test]
fn a_cache_that_starts_once_warm_is_stale_after_the_load_and_the_cell_unrankable() {
    let trial = measure("warm-cache", Scenario::Products);
    assert!(trial.load.steps[0].requests > 1000, "the cache must have started: {}", trial.load.steps[0].requests);
    let stale =
        trial.warnings.iter().find(|w| matches!(w, LabWarning::StaleAfterLoad { .. })).unwrap_or_else(|| panic!("{:?}", trial.warnings));
    assert!(stale.message().contains("is the answer cached?"), "{}", stale.message());
    assert!(!summarize(std::slice::from_ref(&trial))[0].rankable());
}

/// After the load, the live-data probe changes the load's own document (`/documents/42`), which a
/// cache of the load's answer holds: stale, and the cell is not ranked.
#[test]
fn a_document_cached_for_the_loads_id_is_stale_after_the_load() {
    let trial = measure("doc-cache", Scenario::Document);
    let stale =
        trial.warnings.iter().find(|w| matches!(w, LabWarning::StaleAfterLoad { .. })).unwrap_or_else(|| panic!("{:?}", trial.warnings));
    assert!(
        stale.message().starts_with("document: answer went stale under load: after the title was set to `probe "),
        "{}",
        stale.message()
    );
    assert!(stale.message().ends_with("(is the answer cached?)"), "{}", stale.message());
    assert!(!summarize(std::slice::from_ref(&trial))[0].rankable());
}

#[test]
fn an_honest_cell_stays_rankable_with_nothing_left_behind() {
    for scenario in [Scenario::Hello, Scenario::Json] {
        let (trial, rechecked) = measure_rechecked("honest", scenario, common::quick_settings().duration);
        let summary = &summarize(std::slice::from_ref(&trial))[0];
        assert!(summary.rankable(), "{scenario}: {:?}", summary.unrankable);
        assert_eq!(trial.load.steps[0].errors.unanswered, 0);
        assert!(!trial.warnings.iter().any(|w| matches!(w, LabWarning::CostAfterLoad { .. })), "{scenario}: {:?}", trial.warnings);
        // The json cell's cost pair ran again after the trial, and passed with its ratio.
        if scenario == Scenario::Json {
            assert_eq!(rechecked.len(), 1, "{rechecked:?}");
            assert_ne!(rechecked[0].verdict, Verdict::Fail, "{:?}", rechecked[0]);
            eprintln!("honest json, after the load: {}", rechecked[0].reason);
        } else {
            assert!(rechecked.is_empty(), "hello has no judged cost pair: {rechecked:?}");
        }
    }
}

/// `late-memo`: each URL's work done for its first 400 requests, then its answer kept.
/// `light-seen`: the work done only within 2 s of a request for another URL than the load's.
/// Verification passes both (it sends fewer requests, and interleaves light ones); the load
/// crosses both lines, and the cost check run again after the trial, its heavy bursts first, fails.
#[test]
fn work_that_stops_under_load_fails_the_cost_check_rerun_after_the_first_trial() {
    for variant in ["late-memo", "light-seen"] {
        let report = verify(variant);
        let dump = serde_json::to_string_pretty(&report).unwrap();
        assert!(report.checks.iter().all(|c| c.verdict != Verdict::Fail), "{variant}: verification cannot see it:\n{dump}");
        // 4 s, so that a slow or loaded machine still sends the load's URL more than 400 times.
        let mut attempt = measure_rechecked(variant, Scenario::Json, Duration::from_secs(4));
        // On a noisy machine the recheck's rounds can disagree: the lab says so (a warning, no
        // verdict), and the cell is measured once more, as a user would rerun it.
        let cost_after = |t: &bakeoff_model::records::results::TrialRecord| {
            t.warnings.iter().any(|w| matches!(w, LabWarning::CostAfterLoad { scenario: Scenario::Json, .. }))
        };
        if !cost_after(&attempt.0) && attempt.1.iter().any(|c| c.verdict == Verdict::Warn && c.reason.contains("rounds disagree")) {
            attempt = measure_rechecked(variant, Scenario::Json, Duration::from_secs(4));
        }
        let (trial, rechecked) = attempt;
        let requests = trial.load.steps[0].requests;
        assert!(requests > 400, "{variant}: the cheat must have started during the load: {requests} requests measured");
        let after = trial
            .warnings
            .iter()
            .find(|w| matches!(w, LabWarning::CostAfterLoad { scenario: Scenario::Json, .. }))
            .unwrap_or_else(|| panic!("{variant}: {:?}\nrechecked: {rechecked:?}", trial.warnings));
        let message = after.message();
        eprintln!("{variant} json, after the load: {message}");
        assert!(message.starts_with("json: the work stopped costing what it claims under load"), "{message}");
        assert!(message.contains("/json?n=1000 costs") && message.ends_with("is the answer precomputed?"), "{message}");
        assert!(after.advice().contains("do the work on every request"), "{}", after.advice());
        let summary = &summarize(std::slice::from_ref(&trial))[0];
        assert!(!summary.rankable(), "{variant}");
        assert!(
            summary.unrankable.iter().any(|r| matches!(r.kind, FindingKind::Lab(LabWarning::CostAfterLoad { .. }))),
            "{variant}: {:?}",
            summary.unrankable
        );
    }
}

/// Errors in a cost burst are the server's answer, not a machine too busy to measure: a failure
/// naming the URL and the count (the body checks' single requests to those URLs were answered).
#[test]
fn errors_under_the_cost_bursts_fail_naming_the_url_and_the_count() {
    let report = verify("errors");
    let dump = serde_json::to_string_pretty(&report).unwrap();
    for (scenario, url) in [("json", "/json?n=1000"), ("loop", "/loop?n=1000000")] {
        let c = cost_check(&report, scenario);
        assert_eq!(c.verdict, Verdict::Fail, "{scenario}:\n{dump}");
        assert!(c.reason.contains(&format!("requests to {} were answered with errors", c.url)), "{}", c.reason);
        assert!(c.url.ends_with(url) && c.reason.contains("(status 500: "), "{}", c.reason);
        let count: u64 = c.reason.split(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("starts with the count: {}", c.reason));
        assert!(count > 0, "{}", c.reason);
    }
    assert!(report.checks.iter().filter(|c| !c.what.starts_with("CPU cost")).all(|c| c.verdict != Verdict::Fail), "{dump}");
}

/// What a start is given (RUN_DIR, the SQLite file in DATABASE_URL) has one form for verification
/// and every trial: no `verify`, no scenario, no trial, no worker count. The index beside the
/// logs says what each start was for.
#[test]
fn a_start_cannot_tell_verification_from_measurement_by_its_directories() {
    let stack = stack();
    let scratch = common::Scratch::new("cheat-cell-dirs");
    let (mut sink, mut events) = (MemorySink::default(), common::ignore);
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let variant = stack.variant("honest").unwrap();
    assert_eq!(lab.bench.verify_variant(&stack, variant, &variant.scenarios, 1).verdict(), Verdict::Pass);
    lab.bench.measure(&common::cell(&stack, "honest", Scenario::Json), 1).unwrap();
    drop(lab);
    let cells = scratch.dir.join("cells");
    let mut seen = Vec::new();
    for n in 1..=2 {
        let label = format!("{n:03}-{}-honest", stack.name.replace('/', "-"));
        let log = std::fs::read_to_string(cells.join(&label).join("server.log")).unwrap_or_else(|e| panic!("{label}: {e}"));
        let given: Vec<&str> = log.lines().filter(|l| l.starts_with("RUN_DIR=") || l.starts_with("DATABASE_URL=")).collect();
        assert_eq!(given.len(), 2, "{log}");
        let dir = cells.join(&label).display().to_string();
        assert_eq!(given, [format!("RUN_DIR={dir}"), format!("DATABASE_URL=sqlite://{dir}/products.sqlite")], "{label}");
        seen.extend(given.iter().map(|l| l.to_string()));
    }
    for word in ["verify", "json", "-w1", "-t1", "trial"] {
        assert!(seen.iter().all(|l| !l.contains(word)), "`{word}` in {seen:?}");
    }
    let index = std::fs::read_to_string(cells.join("index.txt")).unwrap();
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(lines.len(), 2, "{index}");
    let prefix = stack.name.replace('/', "-");
    assert!(lines[0].starts_with(&format!("001-{prefix}-honest\tverify {} [honest]", stack.name)), "{index}");
    assert!(lines[1].starts_with(&format!("002-{prefix}-honest\ttrial 1 of ")), "{index}");
    assert!(lines[1].contains(" json w1"), "{index}");
}
