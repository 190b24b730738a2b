//! Judging each kind of claim on synthetic summaries and trials: held, failed and inconclusive,
//! including the cases a single trial, too few trials for 90% coverage or a short measurement cannot
//! decide.

use super::*;
use crate::records::results::CellKey;
use crate::statistics::summary::{CellSummary, Estimate, Metric};
use std::collections::BTreeMap;

fn est(median: f64, half: f64, trials: u32) -> Estimate {
    Estimate { median, ci_low: median - half, ci_high: median + half, trials, confidence: 0.95 }
}

/// A cell-step whose every metric is `est(v, half, trials)` with `v` from `values` (else 1).
fn cell(stack: &str, scenario: &str, workers: u32, step_label: &str, values: &[(Metric, f64, f64)], trials: u32) -> CellSummary {
    let metrics: BTreeMap<Metric, Estimate> = Metric::ALL
        .iter()
        .map(|&m| {
            let (v, h) = values.iter().find(|x| x.0 == m).map(|x| (x.1, x.2)).unwrap_or((1.0, 0.0));
            (m, est(v, h, trials))
        })
        .collect();
    let key = CellKey { stack: stack.into(), scenario: scenario.parse().unwrap(), variant: "default".into(), workers, twin: false };
    CellSummary::plain(key, 0, step_label, None, metrics)
}

/// A summary's trials: `trials` values evenly spread over its interval (the median for one trial).
fn trial_values(summaries: &[CellSummary]) -> impl Fn(&CellKey, usize, Metric) -> Vec<f64> + '_ {
    move |key, step, m| {
        let Some(e) = summaries.iter().find(|s| &s.cell == key && s.step == step).map(|s| s.get(m)) else { return vec![] };
        let n = e.trials as usize;
        (0..n).map(|i| if n == 1 { e.median } else { e.ci_low + (e.ci_high - e.ci_low) * i as f64 / (n - 1) as f64 }).collect()
    }
}

/// Trials that started their own servers: no blocks shared.
fn no_pairs(_: &CellKey, _: &CellKey, _: usize, _: Metric) -> Vec<crate::statistics::paired::Pair> {
    vec![]
}

fn rps(stack: &str, scenario: &str, v: f64, half: f64, trials: u32) -> CellSummary {
    cell(stack, scenario, 1, "main", &[(Metric::RequestsPerSec, v, half)], trials)
}

fn claim(toml_check: &str) -> Claim {
    toml::from_str(&format!("statement = \"s\"\ncheck = {toml_check}\n")).unwrap()
}

/// "go serves 3 to 8 times py's requests/s on hello".
fn go_py_3_to_8() -> Claim {
    claim(r#"{ kind = "ratio", a = "go", b = "py", scenario = "hello", range = [3.0, 8.0] }"#)
}

/// A claim judged on go against py on hello, each given as (requests/s, half-width, trials).
fn go_v_py(c: &Claim, go: (f64, f64, u32), py: (f64, f64, u32)) -> ClaimResult {
    verdict_of(c, &[rps("go", "hello", go.0, go.1, go.2), rps("py", "hello", py.0, py.1, py.2)])
}

fn verdict_of(c: &Claim, summaries: &[CellSummary]) -> ClaimResult {
    let none = |_: &CellKey| vec![];
    let trials = trial_values(summaries);
    judge(
        std::slice::from_ref(c),
        &Evidence { summaries, trials: &trials, pairs: &no_pairs, memory: &none, throughput: &none, server_cpus: 1 },
    )
    .remove(0)
}

#[test]
fn ratio_held_failed_and_inconclusive_by_where_the_interval_lies() {
    let c = go_py_3_to_8();
    let held = go_v_py(&c, (5000.0, 100.0, 3), (1000.0, 50.0, 3));
    assert_eq!(held.verdict, ClaimVerdict::Held, "{held:?}");
    let m = held.measured.unwrap();
    // 3 v 3 trials: the Hodges-Lehmann ratio within the smallest and largest of the nine trial ratios.
    assert!((m.value - 5.0).abs() < 1e-9 && (m.low - 4900.0 / 1050.0).abs() < 1e-9 && (m.high - 5100.0 / 950.0).abs() < 1e-9);
    assert!((m.confidence - 0.9).abs() < 1e-12 && m.coverage() == "90%", "{m:?}");
    let failed = go_v_py(&c, (10000.0, 100.0, 3), (1000.0, 50.0, 3));
    assert_eq!(failed.verdict, ClaimVerdict::Failed);
    // 7.6 to 8.4 straddles the upper bound.
    let open = go_v_py(&c, (8000.0, 200.0, 3), (1000.0, 25.0, 3));
    assert_eq!(open.verdict, ClaimVerdict::Inconclusive);
}

#[test]
fn a_verdict_needs_90_percent_coverage_from_the_trials() {
    let c = go_py_3_to_8();
    // Disjoint and well inside the range: 3 v 3 trials decide (90%), 4 v 4 too (97.1%).
    let r = go_v_py(&c, (5000.0, 100.0, 3), (1000.0, 50.0, 3));
    assert_eq!(r.verdict, ClaimVerdict::Held);
    assert!(r.detail.ends_with("3 v 3 trials"), "{}", r.detail);
    let r = go_v_py(&c, (5000.0, 100.0, 4), (1000.0, 50.0, 4));
    assert_eq!((r.verdict, r.measured.unwrap().coverage()), (ClaimVerdict::Held, "97.1%".to_string()));
    // The same values from 2 v 2 trials (66.7%) or 3 v 2 (80%) cover too little to decide.
    let r = go_v_py(&c, (5000.0, 100.0, 2), (1000.0, 50.0, 2));
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    assert!(r.detail.contains("2 v 2 trials: 66.7% coverage, under the 90% a verdict needs"), "{}", r.detail);
    let r = go_v_py(&c, (5000.0, 100.0, 3), (1000.0, 50.0, 2));
    assert!(r.detail.contains("3 v 2 trials: 80% coverage"), "{}", r.detail);
    // Clearly contradicted, but from 2 v 2 trials: still no verdict.
    let r = go_v_py(&c, (20000.0, 100.0, 2), (1000.0, 50.0, 2));
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    // Overlapping trials, 3 v 3: the trial ratios 0.96 to 1.04 straddle the bound of a "faster".
    let f = claim(r#"{ kind = "faster", faster = "a", slower = "b", scenario = "hello" }"#);
    let r = verdict_of(&f, &[rps("a", "hello", 1010.0, 20.0, 3), rps("b", "hello", 1000.0, 20.0, 3)]);
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive, "{r:?}");
    let m = r.measured.unwrap();
    assert!(m.low < 1.0 && m.high > 1.0 && m.confidence >= 0.9, "{m:?}");
}

#[test]
fn a_single_trial_never_decides() {
    let c = go_py_3_to_8();
    let r = go_v_py(&c, (5000.0, 0.0, 1), (1000.0, 0.0, 1));
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    assert!(r.detail.contains("1 trial"), "{}", r.detail);
    let f = claim(r#"{ kind = "faster", faster = "rust", slower = "py", scenario = "proxy" }"#);
    let r = verdict_of(&f, &[rps("rust", "proxy", 14853.0, 0.0, 1), rps("py", "proxy", 14000.0, 0.0, 1)]);
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive, "one trial at a ratio of 1.06 decides nothing");
}

#[test]
fn faster_honours_by_percent_and_lower_is_better_metrics() {
    let c = claim(r#"{ kind = "faster", faster = "a", slower = "b", scenario = "hello", by_percent = 20.0 }"#);
    let r = verdict_of(&c, &[rps("a", "hello", 1300.0, 10.0, 3), rps("b", "hello", 1000.0, 10.0, 3)]);
    assert_eq!(r.verdict, ClaimVerdict::Held);
    let r = verdict_of(&c, &[rps("a", "hello", 1100.0, 10.0, 3), rps("b", "hello", 1000.0, 10.0, 3)]);
    assert_eq!(r.verdict, ClaimVerdict::Failed, "10% is not the 20% claimed");
    let p = claim(r#"{ kind = "faster", faster = "a", slower = "b", scenario = "hello", metric = "p99_us" }"#);
    let lat = |s: &str, v: f64| cell(s, "hello", 1, "main", &[(Metric::P99Us, v, 5.0)], 3);
    assert_eq!(verdict_of(&p, &[lat("a", 100.0), lat("b", 200.0)]).verdict, ClaimVerdict::Held);
    assert_eq!(verdict_of(&p, &[lat("a", 300.0), lat("b", 200.0)]).verdict, ClaimVerdict::Failed);
}

#[test]
fn geomean_over_scenarios() {
    let c = claim(r#"{ kind = "geomean", a = "rust", b = "go", scenarios = ["hello", "json"], range = [1.5, 2.5] }"#);
    // Ratios 1 and 4: geometric mean 2, from six trials a cell.
    let at = |trials: u32| {
        [
            rps("rust", "hello", 100.0, 0.0, trials),
            rps("go", "hello", 100.0, 0.0, trials),
            rps("rust", "json", 400.0, 0.0, trials),
            rps("go", "json", 100.0, 0.0, trials),
        ]
    };
    let r = verdict_of(&c, &at(6));
    assert_eq!(r.verdict, ClaimVerdict::Held, "{r:?}");
    let m = r.measured.unwrap();
    assert!((m.value - 2.0).abs() < 1e-9);
    assert!(m.confidence >= 0.95, "6 v 6 composite trials: {m:?}");
    // Each round's geometric mean over the scenarios is one value: 3 v 3 rounds cover 90%, as
    // two cells of 3 trials do, and decide.
    let r = verdict_of(&c, &at(3));
    assert_eq!(r.verdict, ClaimVerdict::Held, "{r:?}");
    assert!(r.detail.contains("3 v 3 trials, each the geometric mean of its round over 2 scenarios"), "{}", r.detail);
    assert!((r.measured.unwrap().confidence - 0.9).abs() < 1e-9);
    // 2 v 2 rounds cover only 67%: inconclusive, saying so.
    let r = verdict_of(&c, &at(2));
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive, "{r:?}");
    assert!(r.detail.contains("66.7% coverage, under the 90%"), "{}", r.detail);
    let s = [
        rps("rust", "hello", 100.0, 1.0, 6),
        rps("go", "hello", 100.0, 1.0, 6),
        rps("rust", "json", 100.0, 1.0, 6),
        rps("go", "json", 100.0, 1.0, 6),
    ];
    assert_eq!(verdict_of(&c, &s).verdict, ClaimVerdict::Failed);
    assert_eq!(verdict_of(&c, &s[..2]).verdict, ClaimVerdict::NotMeasured, "json was not measured");
}

#[test]
fn memory_ordering() {
    let c = claim(r#"{ kind = "memory", less = "py", more = "go", scenario = "products" }"#);
    let mem = |s: &str, v: f64| cell(s, "products", 1, "main", &[(Metric::PeakRssMib, v, 2.0)], 3);
    assert_eq!(verdict_of(&c, &[mem("py", 48.0), mem("go", 66.0)]).verdict, ClaimVerdict::Held);
    assert_eq!(verdict_of(&c, &[mem("py", 80.0), mem("go", 66.0)]).verdict, ClaimVerdict::Failed);
    assert_eq!(verdict_of(&c, &[mem("py", 65.0), mem("go", 66.0)]).verdict, ClaimVerdict::Inconclusive);
}

#[test]
fn memory_trend_needs_a_soak_and_reads_the_slope_interval() {
    let grows = claim(r#"{ kind = "memory_trend", cell = "go", scenario = "products", trend = "grows" }"#);
    let bounded = claim(r#"{ kind = "memory_trend", cell = "go", scenario = "products", trend = "bounded" }"#);
    let s = [rps("go", "products", 1000.0, 10.0, 1)];
    let judge_trials = |c: &Claim, series: Vec<(f64, f64)>, trials: usize| {
        let mem = move |_: &CellKey| vec![series.clone(); trials];
        let none = |_: &CellKey| vec![];
        judge(
            std::slice::from_ref(c),
            &Evidence { summaries: &s, trials: &trial_values(&s), pairs: &no_pairs, memory: &mem, throughput: &none, server_cpus: 1 },
        )
        .remove(0)
    };
    let judge_with = |c: &Claim, series: Vec<(f64, f64)>| judge_trials(c, series, 2);
    // Four minutes at 4 samples/s: 20 MiB/min with a little noise, and a flat line.
    let leak: Vec<(f64, f64)> = (0..960).map(|i| (i as f64 / 240.0, 50.0 + 20.0 * i as f64 / 240.0 + (i % 3) as f64 * 0.1)).collect();
    let flat: Vec<(f64, f64)> = (0..960).map(|i| (i as f64 / 240.0, 50.0 + (i % 3) as f64 * 0.1)).collect();
    assert_eq!(judge_with(&grows, leak.clone()).verdict, ClaimVerdict::Held);
    assert_eq!(judge_with(&bounded, leak).verdict, ClaimVerdict::Failed);
    assert_eq!(judge_with(&grows, flat.clone()).verdict, ClaimVerdict::Failed);
    assert_eq!(judge_with(&bounded, flat.clone()).verdict, ClaimVerdict::Held);
    // One trial never decides, however long.
    let one = judge_trials(&bounded, flat, 1);
    assert_eq!(one.verdict, ClaimVerdict::Inconclusive);
    assert!(one.detail.contains("1 trial"), "{}", one.detail);
    // Five seconds decide nothing, however steep.
    let short: Vec<(f64, f64)> = (0..20).map(|i| (i as f64 / 240.0, 50.0 + i as f64)).collect();
    let r = judge_with(&grows, short);
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    assert!(r.detail.contains("needs 1 min"), "{}", r.detail);
}

#[test]
fn scaling_efficiency_and_a_machine_with_one_server_cpu() {
    let c = claim(r#"{ kind = "scaling", cell = "go", scenario = "products", efficiency = [0.6, 0.9] }"#);
    let s = [
        cell("go", "products", 1, "main", &[(Metric::RequestsPerSec, 1000.0, 10.0)], 3),
        cell("go", "products", 4, "main", &[(Metric::RequestsPerSec, 3000.0, 10.0)], 3),
    ];
    let at = |cpus: u32| {
        let none = |_: &CellKey| vec![];
        judge(
            std::slice::from_ref(&c),
            &Evidence { summaries: &s, trials: &trial_values(&s), pairs: &no_pairs, memory: &none, throughput: &none, server_cpus: cpus },
        )
        .remove(0)
    };
    let r = at(4);
    assert_eq!(r.verdict, ClaimVerdict::Held, "{r:?}");
    assert!((r.measured.unwrap().value - 0.75).abs() < 0.01);
    let one = at(1);
    assert_eq!(one.verdict, ClaimVerdict::Inconclusive);
    assert!(one.detail.contains("nothing to scale"), "{}", one.detail);
}

#[test]
fn spread_by_stddev_and_by_tail_ratio() {
    let c = claim(r#"{ kind = "spread", steadier = "rust", noisier = "go", scenario = "proxy", measure = "stddev" }"#);
    let sd = |s: &str, v: f64| cell(s, "proxy", 1, "main", &[(Metric::StddevUs, v, 5.0)], 3);
    assert_eq!(verdict_of(&c, &[sd("rust", 50.0), sd("go", 400.0)]).verdict, ClaimVerdict::Held);
    assert_eq!(verdict_of(&c, &[sd("rust", 400.0), sd("go", 50.0)]).verdict, ClaimVerdict::Failed);
    let t = claim(r#"{ kind = "spread", steadier = "rust", noisier = "py", scenario = "proxy", measure = "tail_ratio" }"#);
    let tail = |s: &str, p50: f64, p9999: f64| cell(s, "proxy", 1, "main", &[(Metric::P50Us, p50, 1.0), (Metric::P9999Us, p9999, 10.0)], 3);
    // rust: 1000/100 = 10; py: 20000/200 = 100.
    let r = verdict_of(&t, &[tail("rust", 100.0, 1000.0), tail("py", 200.0, 20000.0)]);
    assert_eq!(r.verdict, ClaimVerdict::Held, "{r:?}");
}

#[test]
fn untestable_and_unmeasured_claims_say_so() {
    let c: Claim =
        toml::from_str("statement = \"s\"\ntestable = false\nwhy = \"no laptop charger here\"\ncheck = { kind = \"qualitative\" }\n")
            .unwrap();
    let r = verdict_of(&c, &[]);
    assert_eq!((r.verdict, r.detail.as_str()), (ClaimVerdict::NotTestable, "no laptop charger here"));
    let c = claim(r#"{ kind = "ratio", a = "go", b = "py", scenario = "hello", range = [1.0, 2.0] }"#);
    assert_eq!(verdict_of(&c, &[rps("go", "hello", 1.0, 0.1, 3)]).verdict, ClaimVerdict::NotMeasured);
}

#[test]
fn cells_pick_their_step_variant_and_workers() {
    let c = claim(
        r#"{ kind = "ratio", a = { stack = "go", step = "max" }, b = { stack = "go", step = 0 }, scenario = "proxy", range = [1.5, 2.5] }"#,
    );
    let mut first = rps("go", "proxy", 1000.0, 10.0, 3);
    first.step_label = "rate 1000/s".into();
    let mut max = rps("go", "proxy", 2000.0, 10.0, 3);
    (max.step, max.step_label) = (1, "max".into());
    assert_eq!(verdict_of(&c, &[first, max]).verdict, ClaimVerdict::Held);
}

#[test]
fn claims_of_runs_stored_before_kinds_still_read() {
    let old = serde_json::json!([{ "statement": "Go beats Python", "scenario": "hello", "faster": "go", "slower": "py", "metric": null, "by_percent": 0.0 }]);
    let claims = claims_from_stored(&old);
    assert_eq!(claims.len(), 1);
    assert!(matches!(&claims[0].check, Check::Faster { faster, .. } if faster.stack == "go"));
    let new = serde_json::to_value(&claims).unwrap();
    assert_eq!(claims_from_stored(&new), claims, "the typed form round-trips");
}

#[test]
fn claim_problems_have_hints() {
    let bad = |t: &str| toml::from_str::<Claim>(t).map(|c| c.problem().map(|p| p.0)).unwrap_or_else(|e| Some(e.to_string()));
    assert!(bad("statement = \"s\"\ncheck = { kind = \"qualitative\" }\n").unwrap().contains("cannot be judged"));
    assert!(bad("statement = \"s\"\ntestable = false\ncheck = { kind = \"qualitative\" }\n").unwrap().contains("needs `why`"));
    assert!(bad("statement = \"s\"\ncheck = { kind = \"ratio\", a = \"x\", b = \"y\", scenario = \"hello\", range = [3.0, 1.0] }\n")
        .unwrap()
        .contains("not [low, high]"));
    assert!(bad("statement = \"s\"\ncheck = { kind = \"ratio\", a = \"x\", b = \"y\", scenario = \"hello\", rnage = [1.0, 3.0] }\n")
        .unwrap()
        .contains("rnage"));
    assert!(bad("statement = \"s\"\ncheck = { kind = \"ratio\", a = \"x\", b = \"y\", range = [1.0, 3.0] }\n")
        .unwrap()
        .contains("no scenario"));
}

#[test]
fn throughput_trend_compares_late_with_early_over_two_soak_trials() {
    let declines = claim(r#"{ kind = "throughput_trend", cell = "go", scenario = "products", late_over_early = [0.0, 0.9] }"#);
    let s = [rps("go", "products", 1000.0, 10.0, 2)];
    let judge_with = |series: Vec<Vec<(f64, f64)>>| {
        let rps = move |_: &CellKey| series.clone();
        let none = |_: &CellKey| vec![];
        judge(
            std::slice::from_ref(&declines),
            &Evidence { summaries: &s, trials: &trial_values(&s), pairs: &no_pairs, memory: &none, throughput: &rps, server_cpus: 1 },
        )
        .remove(0)
    };
    // Three minutes, one point per second: halving over the soak, and flat.
    let halving: Vec<(f64, f64)> = (0..180).map(|i| (i as f64 / 60.0, 2000.0 - 1000.0 * i as f64 / 180.0)).collect();
    let flat: Vec<(f64, f64)> = (0..180).map(|i| (i as f64 / 60.0, 2000.0 + (i % 3) as f64)).collect();
    let r = judge_with(vec![halving.clone(), halving.clone()]);
    assert_eq!(r.verdict, ClaimVerdict::Held, "{r:?}");
    assert!(r.measured.unwrap().value < 0.7);
    assert_eq!(judge_with(vec![flat.clone(), flat.clone()]).verdict, ClaimVerdict::Failed);
    assert_eq!(judge_with(vec![halving.clone(), flat]).verdict, ClaimVerdict::Inconclusive, "the trials disagree");
    let one = judge_with(vec![halving.clone()]);
    assert_eq!(one.verdict, ClaimVerdict::Inconclusive);
    assert!(one.detail.contains("1 trial"), "{}", one.detail);
    let short = judge_with(vec![halving[..20].to_vec(), halving[..20].to_vec()]);
    assert_eq!(short.verdict, ClaimVerdict::Inconclusive);
    assert!(short.detail.contains("needs 1 min"), "{}", short.detail);
}

#[test]
fn a_step_that_fell_short_of_its_target_rate_decides_nothing() {
    let c = claim(
        r#"{ kind = "spread", steadier = { stack = "rust", step = 0 }, noisier = { stack = "go", step = 0 }, scenario = "proxy", measure = "stddev" }"#,
    );
    let at = |stack: &str, achieved: f64| {
        let mut s = cell(stack, "proxy", 1, "10000 req/s", &[(Metric::RequestsPerSec, achieved, 10.0), (Metric::StddevUs, 50.0, 1.0)], 3);
        s.target_rate = Some(10_000.0);
        s
    };
    let mut noisier = at("go", 9990.0);
    noisier.metrics.insert(Metric::StddevUs, est(500.0, 5.0, 3));
    assert_eq!(verdict_of(&c, &[at("rust", 9980.0), noisier.clone()]).verdict, ClaimVerdict::Held);
    let r = verdict_of(&c, &[at("rust", 7000.0), noisier]);
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    assert!(r.detail.contains("fell short") && r.detail.contains("7000 of its target 10000"), "{}", r.detail);
}

#[test]
fn a_reproduction_of_a_bug_is_judged_against_its_own_stack_only() {
    let bug = |stack: &str, variant: &str, v: f64| {
        let mut c = rps(stack, "greeting", v, 1.0, 3);
        c.cell.variant = variant.into();
        if variant == "buggy" {
            let bug = crate::records::results::LabWarning::DeliberateBug { reproduces: "regex per request".into() };
            c.unrankable.push(crate::records::finding::Finding::of_cell(crate::records::finding::FindingKind::Lab(bug)));
        }
        c
    };
    let s = [bug("rust", "fixed", 300.0), bug("rust", "buggy", 100.0), bug("go", "fixed", 200.0)];
    let cost = claim(
        r#"{ kind = "faster", faster = { stack = "rust", variant = "fixed" }, slower = { stack = "rust", variant = "buggy" }, scenario = "greeting", by_percent = 10 }"#,
    );
    assert_eq!(verdict_of(&cost, &s).verdict, ClaimVerdict::Held);
    let peers = claim(r#"{ kind = "faster", faster = "go", slower = { stack = "rust", variant = "buggy" }, scenario = "greeting" }"#);
    let r = verdict_of(&peers, &s);
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    assert!(r.detail.contains("not ranked"), "{}", r.detail);
    // Unnamed, rust's variant is the ranked one, though "buggy" sorts first.
    let unnamed = claim(r#"{ kind = "ratio", a = "rust", b = "go", scenario = "greeting", range = [1.4, 1.6] }"#);
    assert_eq!(verdict_of(&unnamed, &s).verdict, ClaimVerdict::Held);
}

#[test]
fn a_client_bound_cell_is_not_claimed_about_on_throughput_but_is_on_cpu() {
    let mut rust = rps("rust", "hello", 166_000.0, 1000.0, 6);
    rust.client_bound = true;
    rust.metrics.insert(Metric::CpuUsPerRequest, Estimate { median: 6.0, ci_low: 5.9, ci_high: 6.1, trials: 6, confidence: 0.97 });
    let mut go = rps("go", "hello", 140_000.0, 1000.0, 6);
    go.metrics.insert(Metric::CpuUsPerRequest, Estimate { median: 7.0, ci_low: 6.9, ci_high: 7.1, trials: 6, confidence: 0.97 });
    let cells = [rust, go];
    let throughput = verdict_of(&claim(r#"{ kind = "faster", faster = "rust", slower = "go", scenario = "hello" }"#), &cells);
    assert_eq!(throughput.verdict, ClaimVerdict::Inconclusive);
    assert!(throughput.detail.contains("load generator's ceiling"), "{}", throughput.detail);
    let cpu = claim(r#"{ kind = "faster", faster = "rust", slower = "go", scenario = "hello", metric = "cpu_us_per_request" }"#);
    assert_eq!(verdict_of(&cpu, &cells).verdict, ClaimVerdict::Held);
}

#[test]
fn two_cells_measured_side_by_side_are_judged_on_their_block_ratios() {
    // Each cell's own trials spread ±30% (slow and fast blocks hit both), but go/py is 1.20 in every
    // block within ±1%: unpaired the claim is open, paired it holds.
    let c = claim(r#"{ kind = "faster", faster = "go", slower = "py", scenario = "hello", by_percent = 10 }"#);
    let s = [rps("go", "hello", 1200.0, 360.0, 6), rps("py", "hello", 1000.0, 300.0, 6)];
    let none = |_: &CellKey| vec![];
    let trials = trial_values(&s);
    let per_block = [1.19, 1.21, 1.20, 1.205, 1.195, 1.20];
    let pairs = |a: &CellKey, b: &CellKey, _: usize, _: Metric| {
        assert_eq!((a.stack.as_str(), b.stack.as_str()), ("go", "py"));
        per_block.iter().enumerate().filter_map(|(i, r)| crate::statistics::paired::Pair::of(i as u32 / 2, *r, 1.0)).collect()
    };
    let judged = |pairs: PairedValues<'_>| {
        judge(
            std::slice::from_ref(&c),
            &Evidence { summaries: &s, trials: &trials, pairs, memory: &none, throughput: &none, server_cpus: 1 },
        )
        .remove(0)
    };
    let unpaired = judged(&no_pairs);
    assert_eq!(unpaired.verdict, ClaimVerdict::Inconclusive, "{unpaired:?}");
    let paired = judged(&pairs);
    assert_eq!(paired.verdict, ClaimVerdict::Held, "{paired:?}");
    let m = paired.measured.unwrap();
    assert!((m.value - 1.20).abs() < 0.005 && m.low > 1.1 && m.high < 1.22, "{m:?}");
    assert!(paired.detail.ends_with("6 blocks paired over 3 launches"), "{}", paired.detail);
    // Four blocks of one launch cannot reach 90% signed-rank coverage (87.5%): the trials decide,
    // as without pairs. Two launches of two blocks can: Student's t over the two launches.
    let one_launch = |a: &CellKey, b: &CellKey, s: usize, m: Metric| {
        pairs(a, b, s, m).into_iter().take(4).map(|p| crate::statistics::paired::Pair { launch: 0, ..p }).collect::<Vec<_>>()
    };
    assert_eq!(judged(&one_launch).verdict, ClaimVerdict::Inconclusive);
    let two_launches = |a: &CellKey, b: &CellKey, s: usize, m: Metric| pairs(a, b, s, m).into_iter().take(4).collect::<Vec<_>>();
    assert!(judged(&two_launches).detail.ends_with("4 blocks paired over 2 launches"));
}

#[test]
fn no_claim_is_held_about_a_cell_whose_work_is_not_proven() {
    let unproven = |stack: &str, v: f64, mark: bool| {
        let mut c = rps(stack, "file:shop", v, 1.0, 3);
        if mark {
            let w = crate::records::results::LabWarning::WorkNotProven { scenario: c.cell.scenario };
            c.warnings.push(crate::records::finding::Finding::of_cell(crate::records::finding::FindingKind::Lab(w)));
        }
        c
    };
    let c = claim(r#"{ kind = "faster", faster = "rust", slower = "go", scenario = "file:shop" }"#);
    assert_eq!(verdict_of(&c, &[unproven("rust", 300.0, false), unproven("go", 100.0, false)]).verdict, ClaimVerdict::Held);
    let r = verdict_of(&c, &[unproven("rust", 300.0, true), unproven("go", 100.0, true)]);
    assert_eq!(r.verdict, ClaimVerdict::Inconclusive);
    assert!(r.detail.contains("work is not proven"), "{}", r.detail);
}

#[test]
fn a_study_of_many_claims_confirms_only_what_holds_at_holms_stricter_levels() {
    // go / py in three launches of two blocks, launch estimates 0.025, 0.05, 0.04 (log ratio):
    // t = 5.28 over 2 degrees of freedom. Alone, its 95% interval excludes 1 (t(2) = 4.30); as one
    // of three such claims the first step asks 96.7% (t = 5.64), which none reaches.
    let s = [rps("go", "hello", 1040.0, 300.0, 6), rps("py", "hello", 1000.0, 300.0, 6)];
    let none = |_: &CellKey| vec![];
    let trials = trial_values(&s);
    let logs = [0.025, 0.025, 0.05, 0.05, 0.04, 0.04];
    let pairs = |_: &CellKey, _: &CellKey, _: usize, _: Metric| {
        logs.iter().enumerate().map(|(i, &v)| crate::statistics::paired::Pair { launch: i as u32 / 2, log_ratio: v }).collect()
    };
    let c = claim(r#"{ kind = "faster", faster = "go", slower = "py", scenario = "hello" }"#);
    let judged = |claims: &[Claim]| {
        judge(claims, &Evidence { summaries: &s, trials: &trials, pairs: &pairs, memory: &none, throughput: &none, server_cpus: 1 })
    };
    let alone = judged(std::slice::from_ref(&c));
    assert_eq!((alone[0].verdict, alone[0].family), (ClaimVerdict::Held, ClaimVerdict::Held), "{alone:?}");
    let three = judged(&[c.clone(), c.clone(), c.clone()]);
    assert!(three.iter().all(|r| r.verdict == ClaimVerdict::Held && r.family == ClaimVerdict::Inconclusive), "{three:?}");
    // A claim no study could decide stays what it was in the family too.
    let open = claim(r#"{ kind = "faster", faster = "go", slower = "py", scenario = "hello", by_percent = 20 }"#);
    let mixed = judged(&[c, open]);
    assert_eq!(mixed[1].family, mixed[1].verdict);
}
