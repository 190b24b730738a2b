//! The block schedule on real servers: a scenario's cells run side by side, every block measures
//! each once in a fresh order, servers are relaunched per launch, and the paired ratio finds a
//! deliberately slowed variant slower while its A/A twin stays level.

mod common;

use bakeoff_lab::run::cells::{plan, Cell};
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_model::paired::{paired_ratio, Pair};
use bakeoff_model::results::{MemorySink, TrialRecord};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::schedule::Schedule;
use bakeoff_model::study::WorkerCounts;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The burn fixture twice: as it is, and a variant that spins 300 µs of CPU per request.
fn burn_with_slow_variant() -> Stack {
    let mut burn = common::fixture_stack("burn-stack");
    let mut slow = burn.variants[0].clone();
    slow.name = "slow".into();
    slow.env.insert("BURN_US".into(), "300".into());
    burn.variants.push(slow);
    burn
}

/// Requests/s of each slice by (variant, twin) and block, with its launch.
fn by_cell(trials: &[TrialRecord]) -> BTreeMap<(String, bool), BTreeMap<u32, (u32, f64)>> {
    let mut out: BTreeMap<(String, bool), BTreeMap<u32, (u32, f64)>> = BTreeMap::new();
    for t in trials {
        let launch = t.launch.expect("a block-schedule slice records its launch");
        out.entry((t.cell.variant.clone(), t.cell.twin)).or_default().insert(t.trial, (launch, t.load.steps[0].requests_per_sec));
    }
    out
}

fn pairs(cell: &BTreeMap<u32, (u32, f64)>, reference: &BTreeMap<u32, (u32, f64)>) -> Vec<Pair> {
    cell.iter().filter_map(|(block, &(launch, v))| Pair::of(launch, v, reference.get(block)?.1)).collect()
}

#[test]
fn co_resident_cells_are_measured_in_blocks_and_compared_in_pairs() {
    let stack = burn_with_slow_variant();
    let scratch = common::Scratch::new("blocks");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.settings_mut().schedule = Schedule::Blocks;
    lab.settings_mut().trials = 6;
    lab.settings_mut().duration = Duration::from_secs(1);
    lab.settings_mut().warmup = Duration::from_millis(300);
    let variants = ["default".to_string(), "slow".to_string()];
    let mut cells: Vec<Cell<'_>> = plan(&[&stack], Some(&[Scenario::Hello]), Some(&variants), &WorkerCounts::same(&[1])).unwrap();
    let twin = Cell { twin: true, ..cells[0].clone() };
    cells.push(twin);
    let run = common::run_info("blocks");
    let outcome = lab.run(&run, &cells).unwrap();
    drop(lab);
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);

    // Six blocks over three launches of two blocks: every cell once per block.
    let cells = by_cell(&sink.trials);
    assert_eq!(cells.len(), 3, "{:?}", cells.keys());
    for (cell, slices) in &cells {
        assert_eq!(slices.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3, 4, 5, 6], "{cell:?}");
        let launches: BTreeSet<u32> = slices.values().map(|&(l, _)| l).collect();
        assert_eq!(launches, BTreeSet::from([0, 1, 2]), "{cell:?}");
    }
    // One server start per cell and launch (plus one verification per variant), not one per slice.
    let starts = std::fs::read_dir(scratch.dir.join("cells")).unwrap().filter_map(Result::ok).filter(|e| e.path().is_dir()).count();
    assert_eq!(starts, 2 + 3 * 3, "cells/index.txt:\n{}", std::fs::read_to_string(scratch.dir.join("cells/index.txt")).unwrap_or_default());

    // The order of the cells within a block is drawn afresh: not the same in every block. A
    // launch's first block is stored as it is measured (its last waits for the checks after the
    // load), so the store's order of blocks 1, 3 and 5 is the order they ran in.
    let mut orders: BTreeMap<u32, Vec<(String, bool)>> = BTreeMap::new();
    for t in sink.trials.iter().filter(|t| t.trial % 2 == 1) {
        orders.entry(t.trial).or_default().push((t.cell.variant.clone(), t.cell.twin));
    }
    let sequences: BTreeSet<Vec<(String, bool)>> = orders.into_values().collect();
    assert!(sequences.len() > 1, "every block ran the cells in one order: {sequences:?}");
    // The servers start in a fresh order per launch too: the cells' directories are numbered in
    // the order they were made, and the index says which launch of which cell each was.
    let index = std::fs::read_to_string(scratch.dir.join("cells/index.txt")).unwrap();
    let start_orders: BTreeSet<Vec<&str>> = (1..=3)
        .map(|launch| {
            let mut starts: Vec<(&str, &str)> = index
                .lines()
                .filter_map(|l| l.split_once('\t'))
                .filter_map(|(label, what)| Some((label, what.strip_prefix(&format!("launch {launch} of "))?)))
                .collect();
            starts.sort();
            assert_eq!(starts.len(), 3, "launch {launch}: {index}");
            starts.into_iter().map(|(_, cell)| cell).collect()
        })
        .collect();
    assert!(start_orders.len() > 1, "every launch started the cells in one order: {start_orders:?}");

    let default = &cells[&("default".to_string(), false)];
    let slow = paired_ratio(&pairs(&cells[&("slow".to_string(), false)], default)).unwrap();
    assert!(slow.high < 0.9, "300 µs more CPU per request is slower, paired: {slow:?}");
    let aa = paired_ratio(&pairs(&cells[&("default".to_string(), true)], default)).unwrap();
    assert!((0.85..1.15).contains(&aa.ratio), "the A/A twin is level with its cell: {aa:?}");
    assert_eq!((aa.blocks, aa.launches), (6, 3));
}

/// A server that spins 15% of a core while idle makes its peers' slices pay for it: found in the
/// first launch (a `busy_while_idle` warning on its slice), it is measured alone from the next
/// launch on, after the others, with no such warning there; its peer's slices stay side by side.
#[test]
fn a_server_busy_while_idle_is_measured_alone_from_its_next_launch_on() {
    let mut stack = common::fixture_stack("burn-stack");
    let mut busy = stack.variants[0].clone();
    busy.name = "busy".into();
    busy.env.insert("IDLE_BURN_PERCENT".into(), "15".into());
    stack.variants.push(busy);
    let scratch = common::Scratch::new("blocks-alone");
    let mut sink = MemorySink::default();
    let mut order = Vec::new();
    let mut events = |e: bakeoff_lab::run::Event<'_>| {
        if let bakeoff_lab::run::Event::TrialStarting { cell, trial, .. } = e {
            order.push((cell.variant.clone(), trial));
        }
    };
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.settings_mut().schedule = Schedule::Blocks;
    lab.settings_mut().trials = 4;
    lab.settings_mut().duration = Duration::from_millis(500);
    lab.settings_mut().warmup = Duration::from_millis(200);
    let variants = ["default".to_string(), "busy".to_string()];
    let cells: Vec<Cell<'_>> = plan(&[&stack], Some(&[Scenario::Hello]), Some(&variants), &WorkerCounts::same(&[1])).unwrap();
    let outcome = lab.run(&common::run_info("blocks-alone"), &cells).unwrap();
    drop(lab);
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    let flagged = |variant: &str, launch: u32| {
        sink.trials
            .iter()
            .filter(|t| t.cell.variant == variant && t.launch == Some(launch))
            .any(|t| t.warnings.iter().any(|w| matches!(w, bakeoff_model::results::LabWarning::BusyWhileIdle { .. })))
    };
    assert!(flagged("busy", 0) && !flagged("default", 0), "the busy server is found in the first launch");
    assert!(!flagged("busy", 1), "alone, its idle CPU is paid by nobody");
    // Four blocks in two launches of two: in the first, each block has both cells; in the second,
    // the default cell's blocks 3 and 4, then the busy one's alone.
    let second: Vec<(String, u32)> = order.iter().filter(|(_, block)| *block >= 3).cloned().collect();
    let want = [("default", 3), ("default", 4), ("busy", 3), ("busy", 4)].map(|(v, b)| (v.to_string(), b));
    assert_eq!(second, want, "{order:?}");
}

/// A server whose requests/s varies on its own (it stalls 150 ms at random moments) is found
/// noisier than its steady peer once each has its first blocks, and measures longer slices in
/// the precision launches that follow; its peer keeps the run's length throughout.
#[test]
fn a_cell_that_varies_on_its_own_gets_longer_slices_in_the_precision_launches() {
    let mut stack = common::fixture_stack("burn-stack");
    let mut stalling = stack.variants[0].clone();
    stalling.name = "stalling".into();
    stalling.env.insert("STALL_MS".into(), "150".into());
    stack.variants.push(stalling);
    let scratch = common::Scratch::new("blocks-lengthen");
    let mut sink = MemorySink::default();
    let mut lengthened = Vec::new();
    let mut events = |e: bakeoff_lab::run::Event<'_>| {
        if let bakeoff_lab::run::Event::SlicesLengthened { cell, factor } = e {
            lengthened.push((cell.variant.clone(), factor));
        }
    };
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.settings_mut().schedule = Schedule::Blocks;
    lab.settings_mut().trials = 6;
    lab.settings_mut().duration = Duration::from_millis(500);
    lab.settings_mut().warmup = Duration::from_millis(200);
    // A target no run meets: the precision launches go on until the budget is spent.
    lab.settings_mut().precision = Some(0.001);
    lab.settings_mut().budget = Some(Duration::from_secs(45));
    let variants = ["default".to_string(), "stalling".to_string()];
    let cells: Vec<Cell<'_>> = plan(&[&stack], Some(&[Scenario::Hello]), Some(&variants), &WorkerCounts::same(&[1])).unwrap();
    let outcome = lab.run(&common::run_info("blocks-lengthen"), &cells).unwrap();
    drop(lab);
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    assert!(!lengthened.is_empty() && lengthened.iter().all(|(v, f)| v == "stalling" && (2..=4).contains(f)), "{lengthened:?}");
    let slices = |variant: &str, later: bool| -> Vec<f64> {
        sink.trials.iter().filter(|t| t.cell.variant == variant && (t.trial > 6) == later).map(|t| t.load.steps[0].duration_s).collect()
    };
    // Sized as soon as its values say so, which may take a precision launch or two.
    assert!(slices("stalling", true).iter().any(|&d| d >= 0.95), "{:?}", slices("stalling", true));
    let steady: Vec<f64> = slices("stalling", false).into_iter().chain(slices("default", true)).chain(slices("default", false)).collect();
    assert!(steady.iter().all(|&d| d < 0.7), "the others keep 0.5 s: {steady:?}");
}
