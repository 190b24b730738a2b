//! Memory over time on real processes: a server that leaks on purpose is flagged with a slope near
//! its true rate, and the same server without the leak is not flagged.

use crate::common;

use bakeoff_model::records::results::{LabWarning, MemorySink};
use bakeoff_model::scenario::Scenario;
use std::time::Duration;

#[test]
fn a_leak_is_found_and_a_flat_line_is_not_flagged() {
    let stack = common::fixture_stack("leaky-stack");
    let scratch = common::Scratch::new("leak");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.bench.settings_mut().duration = Duration::from_secs(8);
    lab.bench.settings_mut().connections = 2;
    let mut slopes = Vec::new();
    for variant in ["flat", "leak"] {
        let trial = lab.bench.measure(&common::cell(&stack, variant, Scenario::Hello), 1).unwrap();
        let flagged = trial.warnings.iter().any(|w| matches!(w, LabWarning::MemoryGrowth { .. }));
        slopes.push((variant, trial.server.rss_slope_mib_per_min, flagged));
    }
    let (_, flat_slope, flat_flagged) = slopes[0];
    let (_, leak_slope, leak_flagged) = slopes[1];
    assert!(!flat_flagged && flat_slope.abs() < 5.0, "flat server: {slopes:?}");
    // 2 MiB per second is 120 MiB per minute; sampling and start-up blur it a little.
    assert!(leak_flagged && (80.0..=160.0).contains(&leak_slope), "leaking server: {slopes:?}");
}
