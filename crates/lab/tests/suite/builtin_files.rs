//! The built-in contracts hello, greeting and json written as scenario files (scenarios/*.toml):
//! on go/nethttp, on the faulty stack (wrong answers) and on the cheating stack's precomputed
//! variant (right answers without the work), the file's verdict on the answers and on an unknown
//! path equals the built-in contract's. The one difference is the CPU-cost proof, which a file
//! cannot express: the precomputed json passes the file and fails only the built-in's cost check.

use crate::common;

use bakeoff_lab::contract::verify::verify_workload;
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_lab::stacks::setup::{self, SetupJob};
use bakeoff_model::records::results::{MemorySink, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::workload::Workload;
use std::time::Duration;

/// What a verification said of a server, in the terms both kinds share.
#[derive(Debug, PartialEq)]
struct Verdicts {
    /// Every answer of the scenario right (status, type, body).
    answers: bool,
    /// An unknown path answers 404.
    not_found: bool,
}

/// The built-in contract's verdicts (its cost checks left out, and returned apart: whether one failed).
fn builtin(report: &VerifyReport, scenario: Scenario) -> (Verdicts, bool) {
    let is_cost = |what: &str| what.starts_with("CPU cost");
    let failed = |c: &&bakeoff_model::records::results::Check| c.verdict == Verdict::Fail;
    let scoped: Vec<_> = report.checks.iter().filter(|c| c.scenario.to_string() == scenario.id()).collect();
    let answers = !scoped.iter().filter(|c| !is_cost(&c.what)).any(failed);
    let cost_failed = scoped.iter().filter(|c| is_cost(&c.what)).any(failed);
    let not_found = report.checks.iter().find(|c| c.what == "unknown route answers 404").map(|c| c.verdict != Verdict::Fail);
    (Verdicts { answers, not_found: not_found.expect("the built-in checks an unknown route") }, cost_failed)
}

/// Both verifications of `scenario` on `stack`'s `variant`: the built-in's, then the file's on a
/// server of its own (stopped before returning).
fn both(lab: &mut bakeoff_lab::run::Lab<'_>, stack: &Stack, variant: &str, scenario: Scenario) -> ((Verdicts, bool), Verdicts) {
    let variant = stack.variant(variant).unwrap_or_else(|| panic!("{}: no variant {variant}", stack.name));
    let report = lab.bench.verify_variant(stack, variant, &[scenario], 1);
    let workload = Workload::load(&common::project_root().join(format!("scenarios/{}.toml", scenario.id()))).unwrap();
    let (server, addr) = lab.bench.serve(stack, variant, 1).unwrap();
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    let v = verify_workload(addr, &workload, seed, Duration::from_secs(5));
    let left = server.map(|mut s| s.stop(Duration::from_secs(5))).unwrap_or_default();
    assert!(left.is_empty(), "{}: left running: {left:?}", stack.name);
    let file = Verdicts {
        answers: v.sent.iter().filter(|s| s.kind != "404").all(|s| s.passed()),
        not_found: v.sent.iter().filter(|s| s.kind == "404").all(|s| s.passed()),
    };
    (builtin(&report, scenario), file)
}

/// The three stacks the files are judged on: go/nethttp (set up), the faulty and the cheating stack.
fn stacks() -> [Stack; 3] {
    let root = common::project_root();
    let catalog = bakeoff_lab::stacks::catalog::discover(&root.join("stacks"));
    let go = catalog.stacks.iter().find(|s| s.name == "go/nethttp").expect("go/nethttp").clone();
    if let Some(job) = SetupJob::for_stack(&go) {
        setup::run(&job, &root, false).expect("go/nethttp sets up");
    }
    let faulty = common::fixture_stack("faulty-stack");
    let cheating = bakeoff_lab::stacks::catalog::load_dir(&root.join("tests/fixtures/cheating-stack")).unwrap();
    [go, faulty, cheating]
}

#[test]
fn the_built_ins_as_files_judge_as_the_built_in_contracts_do() {
    let [go, faulty, cheating] = stacks();
    let scratch = common::Scratch::new("builtin-files");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let all_right = Verdicts { answers: true, not_found: true };
    for scenario in [Scenario::Hello, Scenario::Greeting, Scenario::Json] {
        let ((built_in, cost_failed), file) = both(&mut lab, &go, "sqlite", scenario);
        assert_eq!((&built_in, cost_failed), (&all_right, false), "go/nethttp {scenario}: the built-in");
        assert_eq!(file, built_in, "go/nethttp {scenario}: the file as the built-in");
        let ((built_in, _), file) = both(&mut lab, &faulty, &faulty.variants[0].name.clone(), scenario);
        assert_eq!(built_in, Verdicts { answers: false, not_found: false }, "faulty {scenario}: the built-in");
        assert_eq!(file, built_in, "faulty {scenario}: the file as the built-in");
    }
    // Right answers from a table built at start-up: the answers pass both, only the cost fails.
    let ((built_in, cost_failed), file) = both(&mut lab, &cheating, "precomputed", Scenario::Json);
    assert_eq!((&built_in, cost_failed), (&all_right, true), "precomputed json: right answers, no work");
    assert_eq!(file, built_in, "precomputed json: the file passes what the built-in passes, and cannot see the cost");
}

/// scenarios/json-lengths.csv is the json contract's answer for every K: the length of the first
/// K records of the fixtures' records.json, compact.
#[test]
fn the_json_file_s_lengths_are_the_fixtures_answers() {
    let scratch = common::Scratch::new("json-lengths");
    bakeoff_lab::contract::fixtures::write_all(&scratch.dir).unwrap();
    let records: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(scratch.dir.join("records.json")).unwrap()).unwrap();
    let csv = std::fs::read_to_string(common::project_root().join("scenarios/json-lengths.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), records.len(), "a row for every K from 1 to 1,000");
    for (i, row) in rows.iter().enumerate() {
        let k = i + 1;
        let expected = serde_json::to_string(&records[..k]).unwrap().len();
        assert_eq!(*row, format!("{k},{expected}"), "row of K = {k}");
    }
}

/// The file's verdicts from a verification of `file` through the lab (its database made for the
/// start): every answer, probe and statement count right; the unknown path 404.
fn file_verdicts(report: &VerifyReport, file: Scenario) -> Verdicts {
    let scoped: Vec<_> = report.checks.iter().filter(|c| c.scenario.to_string() == file.id()).collect();
    let is_404 = |what: &str| what == "a path no request names answers 404";
    let failed = |c: &&&bakeoff_model::records::results::Check| c.verdict == Verdict::Fail;
    Verdicts {
        answers: !scoped.iter().filter(|c| !is_404(&c.what)).any(|c| failed(&c)),
        not_found: !scoped.iter().filter(|c| is_404(&c.what)).any(|c| failed(&c)),
    }
}

/// scenarios/products.toml against the built-in products contract, on SQLite and PostgreSQL: an
/// honest stack passes both, wrong answers fail both, and a micro-cache on PostgreSQL (which the
/// live-data probe misses) fails both, the built-in on its read count and the file on its
/// `[[statements]]`.
#[test]
fn the_products_file_judges_as_the_built_in_products_contract() {
    let [go, faulty, cheating] = stacks();
    let root = common::project_root();
    let scratch = common::Scratch::new("products-file");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let file = bakeoff_lab::run::ScenarioFile::load(&root.join("scenarios/products.toml"), "test").unwrap();
    let products_file = file.scenario();
    lab.bench.settings_mut().scenario_files = vec![file];
    let cases = [
        (&go, "sqlite", true),
        (&go, "postgres", true),
        (&faulty, faulty.variants[0].name.as_str(), false),
        (&cheating, "pg-honest", true),
        (&cheating, "pg-cache", false),
    ];
    for (stack, variant, honest) in cases {
        let v = stack.variant(variant).unwrap_or_else(|| panic!("{}: no variant {variant}", stack.name));
        let (built_in, _) = builtin(&lab.bench.verify_variant(stack, v, &[Scenario::Products], 1), Scenario::Products);
        let report = lab.bench.verify_variant(stack, v, &[products_file], 1);
        let file = file_verdicts(&report, products_file);
        assert_eq!(built_in.answers, honest, "{} [{variant}]: the built-in", stack.name);
        assert_eq!(file, built_in, "{} [{variant}]: the file as the built-in", stack.name);
    }
}
