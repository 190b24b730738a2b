//! The worker check on real process trees: with WORKERS=1 on two server CPUs, a fixture that ignores
//! WORKERS is flagged and the same fixture honouring it is not; and no HTTP stack of the project
//! keeps more than WORKERS + the slack cores busy. Short bounded loads: a few seconds per stack.

mod common;

use bakeoff_lab::run::cells::Cell;
use bakeoff_lab::stacks::manifest::{Stack, StackKind};
use bakeoff_model::results::{LabWarning, MemorySink};
use bakeoff_model::scenario::Scenario;
use std::time::Duration;

/// Both CPUs for the server, and the client on them too (a two-core machine has no third): the
/// client's share only makes a server look smaller, never larger.
fn two_cpu_lab_settings(lab: &mut bakeoff_lab::run::runner::Lab<'_>) {
    lab.settings.server_cpus = vec![0, 1];
    lab.settings.client_cpus = vec![0, 1];
    lab.settings.duration = Duration::from_secs(2);
    lab.settings.warmup = Duration::from_secs(1);
    lab.settings.connections = 64;
}

/// Cores the server used and whether the worker check fired, for `variant` of `stack` on hello.
fn measure(lab: &mut bakeoff_lab::run::runner::Lab<'_>, stack: &Stack, variant: &str) -> Result<(f64, bool), String> {
    let variant = stack.variant(variant).ok_or_else(|| format!("{} has no variant {variant}", stack.name))?;
    let cell = Cell { stack, scenario: Scenario::Hello, variant, workers: 1 };
    let trial = lab.measure(&cell, 1).map_err(|e| e.to_string())?;
    let flagged = trial.warnings.iter().any(|w| matches!(w, LabWarning::WorkersExceeded { .. }));
    Ok((trial.server.cpu_percent / 100.0, flagged))
}

fn enough_cpus() -> bool {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        eprintln!("skipped: the worker check needs two CPUs, this machine has {n}");
    }
    n >= 2
}

#[test]
fn a_server_that_ignores_workers_is_flagged_and_one_that_honours_them_is_not() {
    if !enough_cpus() {
        return;
    }
    let root = common::project_root();
    let stack = bakeoff_lab::stacks::catalog::load_dir(&root.join("tests/fixtures/greedy-stack")).unwrap();
    let scratch = common::Scratch::new("workers");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    two_cpu_lab_settings(&mut lab);
    let honest = measure(&mut lab, &stack, "honest").unwrap();
    let greedy = measure(&mut lab, &stack, "greedy").unwrap();
    assert!(!honest.1 && honest.0 < 1.3, "honest (cores, flagged): {honest:?}");
    assert!(greedy.1 && greedy.0 > 1.5, "greedy (cores, flagged): {greedy:?}");
}

#[test]
fn every_http_stack_keeps_to_its_workers() {
    if !enough_cpus() {
        return;
    }
    let root = common::project_root();
    let catalog = bakeoff_lab::stacks::catalog::discover(&root.join("stacks"));
    let scratch = common::Scratch::new("workers-all");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    two_cpu_lab_settings(&mut lab);
    let mut problems = Vec::new();
    for stack in catalog.stacks.iter().filter(|s| s.kind == StackKind::Http) {
        if let Some(job) = bakeoff_lab::stacks::setup::SetupJob::for_stack(stack) {
            bakeoff_lab::stacks::setup::run(&job, &root, false).unwrap();
        }
        // JIT runtimes get some warm-up (the JVM compiles on threads of its own), but at most 5 s.
        let mut stack = stack.clone();
        stack.warmup = stack.warmup.map(|w| w.min(Duration::from_secs(5)));
        let default = stack.variants_for(Scenario::Hello)[0].name.clone();
        match measure(&mut lab, &stack, &default) {
            Ok((cores, true)) => problems.push(format!("{}: {cores:.2} cores with WORKERS=1", stack.name)),
            Ok((cores, false)) => eprintln!("{:<34} {cores:.2} cores with WORKERS=1", stack.name),
            Err(e) => problems.push(format!("{}: {e}", stack.name)),
        }
    }
    assert!(problems.is_empty(), "stacks that spread beyond WORKERS=1:\n{}", problems.join("\n"));
}
