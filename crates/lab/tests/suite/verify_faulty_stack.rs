//! The verifier against a deliberately wrong stack (tests/fixtures/faulty-stack): each of its faults
//! must be caught, with a reason and a URL, in one report.

use crate::common;

use bakeoff_model::records::results::{MemorySink, Verdict, VerifyReport};

fn failed(report: &VerifyReport, scenario: &str, what_contains: &str) -> bool {
    report.checks.iter().any(|c| {
        c.scenario.to_string() == scenario
            && c.verdict == Verdict::Fail
            && c.what.contains(what_contains)
            && !c.url.is_empty()
            && !c.reason.is_empty()
    })
}

#[test]
fn verify_catches_every_fault_of_the_faulty_stack() {
    let stack = common::fixture_stack("faulty-stack");
    let scratch = common::Scratch::new("faulty");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let variant = &stack.variants[0];
    let report = lab.bench.verify_variant(&stack, variant, &stack.scenarios, 1);
    let dump = serde_json::to_string_pretty(&report).unwrap();

    assert!(failed(&report, "*", "its address only"), "listening on 0.0.0.0 must fail:\n{dump}");
    assert!(failed(&report, "*", "unknown route"), "200 for an unknown route must fail:\n{dump}");
    assert!(failed(&report, "hello", "Hello World"), "wrong Content-Type must fail:\n{dump}");
    assert!(failed(&report, "greeting", "greets"), "a constant greeting must fail:\n{dump}");
    assert!(failed(&report, "json", "length"), "a cached json length must fail:\n{dump}");
    assert!(failed(&report, "loop", "count"), "a wrong loop count must fail:\n{dump}");
    assert!(
        report.checks.iter().any(|c| c.scenario.to_string() == "loop" && c.what.contains("400") && c.verdict != Verdict::Pass),
        "no 400 for a bad n must be reported:\n{dump}"
    );
    assert!(failed(&report, "transfer", "records.json"), "a truncated transfer must fail:\n{dump}");
    assert!(failed(&report, "products", "live-data"), "cached products must fail the live-data probe:\n{dump}");
    assert!(!failed(&report, "products", "20 rows"), "the first products answer is right; only the probe fails:\n{dump}");
    assert_eq!(report.verdict(), Verdict::Fail);
    // The server was stopped: nothing listens on its port any more.
    let port: u16 = report.checks[0].url.rsplit(':').next().unwrap().trim_end_matches('/').parse().unwrap();
    assert!(bakeoff_lab::contract::verify::listening_addresses(port, None).is_empty(), "the faulty server must be stopped");
}
