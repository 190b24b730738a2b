//! Comparisons the report prints: paired block by block where cells share blocks, "within noise"
//! where the interval holds 1, and a client-bound cell shown as a lower bound that is never
//! ranked, the scenario then ranked by CPU per request.

use bakeoff_load::Warning;
use bakeoff_model::plan::goal::PrimaryMetric;
use bakeoff_model::records::results::TrialRecord;
use bakeoff_model::statistics::pairing::{JointSlice, PairSource};
use bakeoff_report::synthetic;
use bakeoff_report::{render, Format, ReportView};
use hdrhistogram::Histogram;

/// A hello trial of `stack` in block `block` whose requests/s is about `rps` (its latency set so).
pub(crate) fn slice(stack: &str, block: u32, rps: f64) -> TrialRecord {
    let mut h = Histogram::<u64>::new_with_bounds(1, 120_000_000, 3).unwrap();
    h.record_n(500, 10_000).unwrap();
    let mut t = synthetic::trial(stack, "hello", block, &[(None, h)]);
    t.load.steps[0].requests_per_sec = rps;
    t.server.cpu_us_per_request = 1e6 / rps;
    t.launch = Some((block - 1) / 2);
    t
}

fn data(trials: Vec<TrialRecord>) -> bakeoff_model::records::run_data::RunData {
    let mut d = synthetic::run_data();
    d.trials = trials;
    d.run.settings = serde_json::json!({ "load": { "rank_by": "capacity", "trials": 6 } });
    d.what_ran.clear();
    d
}

#[test]
fn a_shared_slow_block_cancels_in_the_paired_ratio() {
    // Block 3 is slow for everyone; "b" is 20% slower than "a" in every block.
    let machine = [100_000.0, 101_000.0, 60_000.0, 99_000.0, 100_500.0, 98_500.0];
    let mut trials = Vec::new();
    for (i, m) in machine.iter().enumerate() {
        let block = i as u32 + 1;
        trials.push(slice("a", block, *m));
        trials.push(slice("b", block, m * 0.8));
        trials.push(slice("c", block, m * [1.004, 0.997, 0.999, 1.003, 0.996, 1.002][i]));
    }
    let d = data(trials);
    let view = ReportView::new(&d);
    let hello = &view.scenarios[0];
    let b = hello.relative.iter().find(|r| r.cell.stack == "b").unwrap();
    assert_eq!(b.paired, Some((6, 3)), "{b:?}");
    // Against the best (a or c, within 0.4% of each other per block) every block says about 0.8,
    // though block 3 ran at 60% of the others: unpaired, that block alone would widen it to ±20%.
    assert!((b.ratio - 0.8).abs() < 0.005 && b.high - b.low < 0.01, "{b:?}");
    let best_or_c: Vec<_> = hello.relative.iter().filter(|r| r.cell.stack != "b").collect();
    assert!(best_or_c.iter().any(|r| r.within_noise()), "a and c differ by ±0.4% per block: {best_or_c:?}");
    let text = render(&d, Format::Text);
    assert!(text.contains("0.80 (0.80–0.80, paired)"), "{text}");
    assert!(text.contains("paired): within noise"), "{text}");
    // Block 3's slump is slice-to-slice noise within launch 2; the launches' means differ less.
    assert!(text.contains("variance components of requests/s (sd, median over 3 cells): slice to slice within a launch"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let rel = &json["relative"]["hello"];
    assert!(rel.as_array().unwrap().iter().any(|r| r["paired"]["blocks"] == 6 && r["within_noise"] == false), "{rel}");
}

/// A slice with the figure its cell answered in the block's joint slice (`joint_rps`).
fn with_joint(mut t: TrialRecord, cells: u32, joint_rps: f64) -> TrialRecord {
    // Every server took its equal share of the joint slice and the whole server CPU alone: the
    // joint/solo rule lets the joint slices carry the ratio.
    t.joint = Some(JointSlice {
        cells,
        requests_per_sec: joint_rps,
        mib_per_sec: 1.0,
        cpu_us_per_request: 1e6 / joint_rps,
        cpu_share: Some(1.0 / f64::from(cells)),
        server_cpus: Some(1),
    });
    t.server.cpu_percent = 100.0;
    t
}

/// `t` as a slice of variant `variant` of its stack.
fn of_variant(mut t: TrialRecord, variant: &str) -> TrialRecord {
    t.cell.variant = variant.into();
    t
}

#[test]
fn joint_slices_carry_the_ratio_where_they_agree_and_give_way_where_they_do_not() {
    // Solo slices one after the other on a machine that swings ±25%: variant b of one server is
    // 0.8 of variant a, but the swing does not cancel. Loaded at once, every block's swing falls
    // on both.
    let swing = [1.0, 1.25, 0.8, 1.2, 0.75, 1.1];
    let (mut agree, mut unlike, mut disagree) = (Vec::new(), Vec::new(), Vec::new());
    for (i, s) in swing.iter().enumerate() {
        let block = i as u32 + 1;
        let other = swing[(i + 3) % 6];
        agree.push(of_variant(with_joint(slice("one", block, 100_000.0 * s), 2, 50_000.0 * s), "a"));
        agree.push(of_variant(with_joint(slice("one", block, 80_000.0 * other), 2, 40_000.0 * s), "b"));
        // The same figures from two different servers: their joint slices never carry the ratio.
        unlike.push(with_joint(slice("a", block, 100_000.0 * s), 2, 50_000.0 * s));
        unlike.push(with_joint(slice("b", block, 80_000.0 * other), 2, 40_000.0 * s));
        // On an equal share b keeps up with a, yet alone it is half as fast, every block: alone
        // it used half the server CPUs (one of two workers' worth), so the rule keeps its
        // throughput ratio on the solo slices before looking at any ratio.
        disagree.push(of_variant(with_joint(slice("one", block, 100_000.0 * s), 2, 50_000.0 * s), "a"));
        let mut half = of_variant(with_joint(slice("one", block, 50_000.0 * s), 2, 50_000.0 * s), "b");
        half.server.cpu_percent = 50.0;
        disagree.push(half);
    }
    let d = data(agree);
    let view = ReportView::new(&d);
    let b = view.scenarios[0].relative.iter().find(|r| r.cell.variant == "b").unwrap().clone();
    assert_eq!((b.source, b.joint_disagreed), (PairSource::Joint, None), "{b:?}");
    assert!((b.ratio - 0.8).abs() < 0.005 && b.high - b.low < 0.01, "the joint pairs' tight 0.80: {b:?}");
    let (scenario, widest) = bakeoff_report::scenario::widest_paired(&view.scenarios).unwrap();
    assert_eq!((scenario.id(), widest.cell.variant.as_str()), ("hello", "b"), "the one ratio ranked");
    let text = render(&d, Format::Text);
    assert!(text.contains("0.80 (0.80–0.80, paired at once)"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    assert!(json["relative"]["hello"].as_array().unwrap().iter().any(|r| r["paired"]["slices"] == "joint"), "{json}");

    let d = data(unlike);
    let view = ReportView::new(&d);
    let b = view.scenarios[0].relative.iter().find(|r| r.cell.stack == "b").unwrap().clone();
    assert_eq!(b.source, PairSource::Solo, "different servers pair on their solo slices: {b:?}");
    assert!(b.solo_because.as_deref().is_some_and(|w| w.contains("are different servers")), "{b:?}");
    assert!(b.high - b.low > 0.05, "the swing stays in the solo ratio: {b:?}");

    let d = data(disagree);
    let view = ReportView::new(&d);
    let b = view.scenarios[0].relative.iter().find(|r| r.cell.variant == "b").unwrap().clone();
    assert_eq!(b.source, PairSource::Solo, "{b:?}");
    assert!((b.ratio - 0.5).abs() < 0.005, "the solo ratio is shown: {b:?}");
    assert!(b.joint_disagreed.is_some_and(|(r, _, _)| (r - 1.0).abs() < 0.005), "{b:?}");
    let text = render(&d, Format::Text);
    assert!(text.contains("0.50 (0.50–0.50, paired)"), "{text}");
    assert!(text.contains("loaded at once with the best, its ratio was 1.00 (1.00–1.00), outside the 0.50"), "{text}");
}

#[test]
fn a_client_bound_cell_is_a_lower_bound_and_the_scenario_ranks_by_cpu() {
    let mut trials = Vec::new();
    for block in 1..=6 {
        let mut fast = slice("fast", block, 166_000.0);
        fast.server.cpu_us_per_request = 6.0;
        fast.load.warnings.push(Warning::ClientSaturated { cpu_percent: 95.0, threads: 1 });
        let mut slow = slice("slow", block, 140_000.0);
        slow.server.cpu_us_per_request = 7.0;
        trials.extend([fast, slow]);
    }
    let d = data(trials);
    let view = ReportView::new(&d);
    let hello = &view.scenarios[0];
    assert_eq!(hello.ranked_by, PrimaryMetric::Efficiency);
    let fast = hello.relative.iter().find(|r| r.cell.stack == "fast").unwrap();
    assert!(fast.fastest, "ranked by CPU per request, the client-bound cell can still be best: {:?}", hello.relative);
    let text = render(&d, Format::Text);
    assert!(text.contains("≥ 166,000 (client-bound)"), "{text}");
    assert!(text.contains("vs best (efficiency: the client capped req/s)"), "{text}");
    // Ranked by capacity it would be out of the ranking: only its lower bound is known.
    let by_capacity = bakeoff_report::scenario::relative_speeds(&hello.headline, PrimaryMetric::Capacity, &d.trials);
    assert!(by_capacity.iter().all(|r| r.cell.stack != "fast"), "{by_capacity:?}");
}

#[test]
fn a_precision_target_is_judged_on_the_paired_ratios_of_a_block_run() {
    // The machine swings ±20% from block to block; "b" is 0.8 of "a" in every block.
    let machine = [100_000.0, 120_000.0, 80_000.0, 115_000.0, 85_000.0, 110_000.0];
    let mut trials = Vec::new();
    for (i, m) in machine.iter().enumerate() {
        trials.push(slice("a", i as u32 + 1, *m));
        trials.push(slice("b", i as u32 + 1, m * 0.8));
    }
    let mut d = data(trials.clone());
    d.run.settings = serde_json::json!({ "load": { "rank_by": "capacity", "trials": 6, "precision": 0.05, "schedule": "blocks" } });
    let text = render(&d, Format::Text);
    assert!(text.contains("target ±5.0% on every ranked ratio (paired) and unpaired cell: 1 met it, 0 missed"), "{text}");
    assert!(!text.contains("precision missed"), "no cell is flagged for its own (drifting) interval: {text}");
    // The same values from the trial schedule: each cell's own interval, which the swing widens.
    d.run.settings = serde_json::json!({ "load": { "rank_by": "capacity", "trials": 6, "precision": 0.05, "schedule": "trials" } });
    let text = render(&d, Format::Text);
    assert!(text.contains("target ±5.0% on every cell's primary metric: 0 met it, 2 missed"), "{text}");
    // A ratio that wanders from block to block misses, named against the best.
    let mut wander = trials;
    for (i, t) in wander.iter_mut().filter(|t| t.cell.stack == "b").enumerate() {
        t.load.steps[0].requests_per_sec *= [1.0, 1.2, 0.85, 1.15, 0.9, 1.1][i];
    }
    let mut d = data(wander.clone());
    d.run.settings = serde_json::json!({ "load": { "rank_by": "capacity", "trials": 6, "precision": 0.05, "schedule": "blocks" } });
    let text = render(&d, Format::Text);
    assert!(text.contains("missed: b hello w2 / a hello w2 reached ±"), "{text}");
    // P of the pair: its half-width in percent x √ the minutes both cells' slices took.
    let json: serde_json::Value = serde_json::from_str(&render(&d, Format::Json)).unwrap();
    let b = json["relative"]["hello"].as_array().unwrap().iter().find(|r| r["stack"] == "b").unwrap().clone();
    let half = (b["high"].as_f64().unwrap() - b["low"].as_f64().unwrap()) / 2.0 / b["ratio"].as_f64().unwrap();
    let minutes = wander.iter().map(|t| t.elapsed_s).sum::<f64>() / 60.0;
    let merit = &json["precision"]["merit"];
    assert!((merit["max"].as_f64().unwrap() - 100.0 * half * minutes.sqrt()).abs() < 1e-9, "{merit}");
    assert_eq!((merit["ratios"].as_u64(), merit["max_pair"].as_str()), (Some(1), Some("b hello w2 / a hello w2")));
    assert!(text.contains(&format!("figure of merit P (the 95% half-width in % x √ the minutes both cells were measured; lower is better): median {:.1} over 1 ranked ratio(s)", merit["median"].as_f64().unwrap())), "{text}");
}

#[test]
fn compare_finds_a_change_against_a_peer_that_a_slower_day_hides() {
    // Run B's machine is 5% faster all day and its blocks swing ±10%; "x" got 5% slower: the
    // absolute comparison sees no change, the ratio to its peer in the same blocks does.
    let swing = [1.00, 0.90, 1.10, 0.95, 1.05, 0.92, 1.08, 1.00];
    let run = |day: f64, x_cost: f64| -> Vec<TrialRecord> {
        let mut trials = Vec::new();
        for (i, s) in swing.iter().enumerate() {
            let (block, m) = (i as u32 + 1, 100_000.0 * day * s);
            let jitter = if i % 2 == 0 { 1.003 } else { 0.997 };
            trials.push(slice("peer", block, m));
            trials.push(slice("x", block, m * x_cost * jitter));
        }
        trials
    };
    let (a, b) = (run(1.0, 1.0), run(1.05, 0.95));
    let c = bakeoff_model::statistics::comparison::compare(("a", &a), ("b", &b), PrimaryMetric::Capacity, None);
    let x = c.cells.iter().find(|c| c.cell.stack == "x").unwrap();
    assert_eq!(x.verdict, bakeoff_model::statistics::comparison::Change::NoDetectableChange, "{x:?}");
    let rel = x.relative.as_ref().expect("paired with peer in both runs");
    assert_eq!(rel.reference.stack, "peer");
    assert_eq!((rel.blocks_a, rel.blocks_b, rel.launches_a, rel.launches_b), (8, 8, 4, 4));
    assert!((rel.ratio - 0.95).abs() < 0.01 && rel.high.unwrap() < 1.0, "{rel:?}");
    assert_eq!(rel.verdict, bakeoff_model::statistics::comparison::Change::Slower);
    let text = bakeoff_report::compare::render(&c, Format::Text);
    assert!(text.contains("▼ slower against peer hello w2 (8/8 blocks, 4/4 launches)"), "{text}");
    // Trials that started their own servers share no blocks with a peer: no such column.
    let solo: Vec<TrialRecord> = a.iter().filter(|t| t.cell.stack == "x").cloned().collect();
    let c = bakeoff_model::statistics::comparison::compare(("a", &solo), ("b", &solo), PrimaryMetric::Capacity, None);
    assert!(c.cells[0].relative.is_none());
    assert!(!bakeoff_report::compare::render(&c, Format::Text).contains("against a peer"));
}

#[test]
fn a_drift_of_the_whole_machine_between_runs_is_no_change_of_a_cell() {
    // Run B's machine is 4% slower for every cell alike (a drift between the runs, not the code):
    // each cell's own medians moved, its ratio to its peer did not, so neither is called changed.
    // Where x really got 8% slower on the same day, both tests agree and x alone is.
    let run = |day: f64, x_cost: f64| -> Vec<TrialRecord> {
        let mut trials = Vec::new();
        for block in 1..=10u32 {
            let jitter = 1.0 + 0.002 * f64::from(block % 3);
            trials.push(slice("peer", block, 100_000.0 * day * jitter));
            trials.push(slice("x", block, 80_000.0 * day * x_cost * jitter));
        }
        trials
    };
    let verdicts = |a: &[TrialRecord], b: &[TrialRecord]| {
        let c = bakeoff_model::statistics::comparison::compare(("a", a), ("b", b), PrimaryMetric::Capacity, None);
        let of = |stack: &str| c.cells.iter().find(|x| x.cell.stack == stack).unwrap().clone();
        (of("peer"), of("x"))
    };
    let (peer, x) = verdicts(&run(1.0, 1.0), &run(0.96, 1.0));
    use bakeoff_model::statistics::comparison::Change;
    assert_eq!(peer.changes[0].verdict, Change::Slower, "its own medians moved: {peer:?}");
    assert_eq!((peer.verdict, x.verdict), (Change::NoDetectableChange, Change::NoDetectableChange), "{peer:?} {x:?}");
    let (peer, x) = verdicts(&run(1.0, 1.0), &run(1.0, 0.92));
    assert_eq!((peer.verdict, x.verdict), (Change::NoDetectableChange, Change::Slower), "{peer:?} {x:?}");
}

#[test]
fn runs_whose_launches_differ_are_not_called_changed_by_their_many_blocks() {
    // x runs a few percent off its peer per launch (where its workers landed, a JIT's choices)
    // while its blocks agree closely within a launch: a run's 12 blocks are 3 observations of the
    // launch level, not 12. Pooled, the same code's two runs would be called faster; by launches,
    // no change. A 15% slowdown is still found.
    use bakeoff_model::statistics::comparison::Change;
    let run = |launch_levels: [f64; 3], x_cost: f64| -> Vec<TrialRecord> {
        let mut trials = Vec::new();
        for block in 1..=12u32 {
            let launch = (block - 1) / 4;
            let jitter = 1.0 + 0.001 * f64::from(block % 2);
            let mut peer = slice("peer", block, 100_000.0 * jitter);
            let mut x = slice("x", block, 80_000.0 * launch_levels[launch as usize] * x_cost * jitter);
            (peer.launch, x.launch) = (Some(launch), Some(launch));
            trials.extend([peer, x]);
        }
        trials
    };
    let x_of = |a: &[TrialRecord], b: &[TrialRecord]| {
        let c = bakeoff_model::statistics::comparison::compare(("a", a), ("b", b), PrimaryMetric::Capacity, None);
        c.cells.into_iter().find(|x| x.cell.stack == "x").unwrap()
    };
    let a = run([1.00, 1.04, 0.97], 1.0);
    let x = x_of(&a, &run([1.05, 1.01, 1.06], 1.0));
    let rel = x.relative.as_ref().expect("paired with peer in both runs");
    assert_eq!((rel.blocks_a, rel.launches_a, rel.blocks_b, rel.launches_b), (12, 3, 12, 3));
    assert!(rel.low.unwrap() < 1.0 && rel.high.unwrap() > 1.0, "{rel:?}");
    assert_eq!(x.changes[0].verdict, Change::NoDetectableChange, "{:?}", x.changes[0]);
    assert_eq!(x.verdict, Change::NoDetectableChange);
    let x = x_of(&a, &run([1.05, 1.01, 1.06], 0.85));
    assert_eq!((x.verdict, x.relative.unwrap().verdict), (Change::Slower, Change::Slower));
}

#[test]
fn runs_loaded_at_once_are_judged_on_each_cells_ratio_to_its_peer() {
    // Loaded at once, every cell's rate swings 30% from block to block with the machine, alike;
    // x burns 5% more in run B. Its own medians cannot tell; its ratio to a steady peer can, and
    // for two at-once runs that ratio is the verdict (and the gate), the peers staying unchanged.
    use bakeoff_model::statistics::comparison::{Change, Comparison};
    let run = |stacks: &[&str], x_cost: f64, phase: u32| -> Vec<TrialRecord> {
        let mut trials = Vec::new();
        for block in 1..=10u32 {
            let machine = [1.0, 0.7, 1.2, 0.85, 1.1][((block + phase) % 5) as usize];
            for (i, &stack) in stacks.iter().enumerate() {
                let cost = if stack == "x" { x_cost } else { 1.0 };
                let jitter = 1.0 + 0.002 * f64::from((block + i as u32) % 3);
                trials.push(slice(stack, block, 20_000.0 * machine * cost * jitter));
            }
        }
        trials
    };
    let compared = |stacks: &[&str], at_once: bool| {
        let (a, b) = (run(stacks, 1.0, 0), run(stacks, 0.95, 2));
        let c = bakeoff_model::statistics::comparison::compare(("a", &a), ("b", &b), PrimaryMetric::Capacity, Some(0.02));
        if at_once {
            c.judged_on_ratios(&a, &b)
        } else {
            c
        }
    };
    let of = |c: &Comparison, stack: &str| c.cells.iter().find(|x| x.cell.stack == stack).unwrap().clone();
    let plain = compared(&["peer", "other", "x"], false);
    assert_eq!(of(&plain, "x").changes[0].verdict, Change::NoDetectableChange, "its own medians cannot tell: {:?}", of(&plain, "x"));
    assert_eq!(of(&plain, "x").verdict, Change::NoDetectableChange);
    let at_once = compared(&["peer", "other", "x"], true);
    let x = of(&at_once, "x");
    assert_eq!((x.verdict, x.regressed), (Change::Slower, true), "{x:?}");
    for steady in ["peer", "other"] {
        let c = of(&at_once, steady);
        assert_eq!((c.verdict, c.regressed), (Change::NoDetectableChange, false), "{c:?}");
    }
    let text = bakeoff_report::compare::render(&at_once, bakeoff_report::Format::Text);
    assert!(text.contains("both runs loaded their cells at once"), "{text}");
    // Two cells alone moved apart: which one did, no ratio can say.
    let two = compared(&["peer", "x"], true);
    assert_eq!((of(&two, "peer").verdict, of(&two, "x").verdict), (Change::NoDetectableChange, Change::NoDetectableChange));
}

#[test]
fn the_leader_is_the_one_the_paired_ratios_put_first_never_a_ratio_above_one() {
    // a's median (160) is above b's (152), but block by block b is ahead in its launches on
    // balance: the paired ratio b / a is 1.11, so b leads and a is shown below 1.
    let (a, b) = ([100.0, 100.0, 160.0, 160.0, 160.0, 160.0], [160.0, 160.0, 144.0, 144.0, 152.0, 152.0]);
    let mut trials = Vec::new();
    for block in 1..=6u32 {
        trials.push(slice("a", block, 1000.0 * a[block as usize - 1]));
        trials.push(slice("b", block, 1000.0 * b[block as usize - 1]));
    }
    let d = data(trials);
    let view = ReportView::new(&d);
    let rel = &view.scenarios[0].relative;
    let leader = rel.iter().find(|r| r.fastest).unwrap();
    assert_eq!(leader.cell.stack, "b", "{rel:?}");
    let other = rel.iter().find(|r| !r.fastest).unwrap();
    assert!(other.ratio < 1.0 && other.paired.is_some(), "{other:?}");
    assert!(rel.iter().all(|r| r.ratio <= 1.0), "{rel:?}");
}
