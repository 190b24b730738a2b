//! The synthetic run's scenario file: a small shop (an item 60%, a search 30%, a POST to the cart
//! 10%) for Rust and Go, each trial reporting its request kinds; Go's searches fail now and then,
//! and in its second trial it sends carts more often than the deck holds them (`mix_drift`).

use super::trials::{latency_histogram, noise, trial, with_usage};
use bakeoff_load::{encode_histogram, latency_stats, ErrorCounts, KindReport, Warning};
use bakeoff_model::records::results::{LabWarning, TrialRecord};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The file as the run's settings keep it (its text shortened to what the demo needs).
pub(super) const SHOP_TEXT: &str = "name = \"shop\"\n\n[vars]\nid = { range = [1, 50] }\n\n\
[[requests]]\nname = \"item\"\nweight = 6\npath = \"/items/{{id}}\"\n\n\
[[requests]]\nname = \"search\"\nweight = 3\npath = \"/search?q=red\"\n\n\
[[requests]]\nname = \"cart\"\nmethod = \"POST\"\npath = \"/cart\"\nbody = \"{{id}}\"\n";

/// The shop's kinds: name, share of the deck, latency relative to an item's.
const KINDS: [(&str, f64, f64); 3] = [("item", 0.6, 1.0), ("search", 0.3, 3.0), ("cart", 0.1, 1.5)];

/// Round `n`'s shop trials of Rust and Go.
pub(super) fn shop_trials(n: u32, drift: f64) -> Vec<TrialRecord> {
    [("rust-actix", 90.0, 1.0), ("go-fasthttp", 120.0, 2.0)]
        .iter()
        .enumerate()
        .map(|(ki, &(stack, base, tail))| {
            let seed = 1_000 + n as u64 * 10 + ki as u64;
            // Go sends a cart in place of an item more often than the deck says in its second trial.
            let drifted = stack == "go-fasthttp" && n == 2;
            let total = (64.0 / (base * 1.9 * drift * 1e-6) * 10.0) as u64;
            let mut merged = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).expect("valid bounds");
            let kinds: Vec<KindReport> = KINDS
                .iter()
                .enumerate()
                .map(|(i, &(name, share, cost))| {
                    let share = share + if drifted { [-0.03, 0.0, 0.03][i] } else { 0.002 * noise(seed + i as u64) };
                    let h = latency_histogram(base * cost * drift, tail, (total as f64 * share) as u64);
                    merged.add(&h).expect("same bounds");
                    let failed = if stack == "go-fasthttp" && name == "search" { 12 * n as u64 } else { 0 };
                    let status = if failed > 0 { BTreeMap::from([(500, failed)]) } else { BTreeMap::new() };
                    KindReport {
                        name: name.into(),
                        requests: h.len() + failed,
                        requests_per_sec: (h.len() + failed) as f64 / 10.0,
                        latency: latency_stats(&h),
                        errors: ErrorCounts { status, ..Default::default() },
                        histogram: encode_histogram(&h),
                    }
                })
                .collect();
            let mut t = trial(stack, "file:shop", n, &[(None, merged)]);
            let step = &mut t.load.steps[0];
            // A failed status is a completed response: the step counts it, its latency does not.
            for k in &kinds {
                step.errors.merge(&k.errors);
            }
            step.requests = kinds.iter().map(|k| k.requests).sum();
            step.requests_per_sec = step.requests as f64 / step.duration_s;
            if drifted {
                step.warnings.push(Warning::MixDrift {
                    step: step.label.clone(),
                    request_kind: "cart".into(),
                    deck_percent: 10.0,
                    sent_percent: 13.0,
                });
            }
            step.kinds = kinds;
            // What the lab says of every scenario file's cell today: answers checked, work not proven.
            t.warnings.push(LabWarning::WorkNotProven { scenario: t.cell.scenario });
            with_usage(t, seed, 16.0 + 4.0 * ki as f64, 0.0, 0.3)
        })
        .collect()
}
