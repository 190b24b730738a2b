//! The worker check on real process trees: with WORKERS=1 on two server CPUs, a fixture that ignores
//! WORKERS is flagged and the same fixture honouring it is not; and no HTTP stack of the project
//! keeps more than WORKERS + the slack cores busy on json. Short bounded loads: a few seconds each.

use crate::common;

use bakeoff_lab::run::cells::Cell;
use bakeoff_lab::stacks::manifest::{Stack, StackKind};
use bakeoff_model::records::results::{LabWarning, MemorySink};
use bakeoff_model::scenario::Scenario;
use std::io::Write;
use std::time::Duration;

/// Both CPUs for the server, and the client on them too (a two-core machine has no third): the
/// client's share only makes a server look smaller, never larger.
fn two_cpu_lab_settings(lab: &mut bakeoff_lab::run::Lab<'_>) {
    lab.bench.settings_mut().server_cpus = vec![0, 1];
    lab.bench.settings_mut().client_cpus = vec![0, 1];
    lab.bench.settings_mut().duration = Duration::from_secs(2);
    lab.bench.settings_mut().warmup = Duration::from_secs(1);
    lab.bench.settings_mut().connections = 64;
}

/// What one short trial showed: the server's cores, whether the worker check fired, and the CPU
/// percent other processes of the machine used meanwhile (they take cores a server could spread to).
#[derive(Debug)]
struct Seen {
    cores: f64,
    flagged: bool,
    noise_percent: f64,
}

fn measure(lab: &mut bakeoff_lab::run::Lab<'_>, stack: &Stack, scenario: Scenario, variant: &str) -> Result<Seen, String> {
    let variant = stack.variant(variant).ok_or_else(|| format!("{} has no variant {variant}", stack.name))?;
    let cell = Cell { stack, scenario, variant, workers: 1, twin: false, soak: None, ramp: None };
    let trial = lab.bench.measure(&cell, 1).map_err(|e| e.to_string())?;
    let flagged = trial.warnings.iter().any(|w| matches!(w, LabWarning::WorkersExceeded { .. }));
    let noise_percent = trial
        .warnings
        .iter()
        .find_map(|w| match w {
            LabWarning::BackgroundNoise { cpu_percent } => Some(*cpu_percent),
            _ => None,
        })
        .unwrap_or(0.0);
    Ok(Seen { cores: trial.server.cpu_percent / 100.0, flagged, noise_percent })
}

/// Says that `test` checked nothing, and why, where `cargo test` shows it: the harness swallows a
/// passing test's `eprintln!`, not a write to the process's own stderr. libtest has no skipped
/// state, so such a test still counts as passed; this line is how a reader tells the two apart.
fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Two CPUs this process may run on (affinity and cgroup limits count), or a skip saying so.
fn enough_cpus(test: &str) -> bool {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        skipped(test, &format!("the worker check needs two CPUs, this process may use {n}"));
    }
    n >= 2
}

#[test]
fn a_server_that_ignores_workers_is_flagged_and_one_that_honours_them_is_not() {
    const TEST: &str = "a_server_that_ignores_workers_is_flagged_and_one_that_honours_them_is_not";
    if !enough_cpus(TEST) {
        return;
    }
    let stack = common::fixture_stack("greedy-stack");
    let scratch = common::Scratch::new("workers");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    two_cpu_lab_settings(&mut lab);
    let honest = measure(&mut lab, &stack, Scenario::Hello, "honest").unwrap();
    assert!(!honest.flagged && honest.cores < 1.3, "honest: {honest:?}");
    // Other work on the machine takes the cores the greedy server would spread to: up to three
    // tries, and a machine that stayed busy through all of them cannot show the spread.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let greedy = measure(&mut lab, &stack, Scenario::Hello, "greedy").unwrap();
        if greedy.flagged {
            assert!(greedy.cores > 1.5, "greedy: {greedy:?}");
            return;
        }
        seen.push(greedy);
    }
    if seen.iter().all(|s| s.noise_percent > 30.0) {
        let why = format!("inconclusive, other processes kept the CPUs busy in every try: {seen:?}");
        skipped(TEST, &why);
        return;
    }
    panic!("a server ignoring WORKERS was not flagged: {seen:?}");
}

#[test]
fn every_http_stack_keeps_to_its_workers() {
    if !enough_cpus("every_http_stack_keeps_to_its_workers") {
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
        // JIT runtimes get warm-up (the JVM compiles on threads of its own, and at 5 s pekko-http
        // still spread to 1.5 cores compiling), but at most 20 s.
        let mut stack = stack.clone();
        stack.warmup = stack.warmup.map(|w| w.min(Duration::from_secs(20)));
        // json: every HTTP stack spends far more CPU per request than the client does, so a stack
        // that ignored WORKERS would spread over both CPUs (hello is client-bound for the fast ones).
        let default = stack.variants_for(Scenario::Json)[0].name.clone();
        match measure(&mut lab, &stack, Scenario::Json, &default) {
            Ok(s) if s.flagged => problems.push(format!("{}: {:.2} cores with WORKERS=1", stack.name, s.cores)),
            Ok(s) => eprintln!("{:<34} {:.2} cores with WORKERS=1 (other processes: {:.0}% CPU)", stack.name, s.cores, s.noise_percent),
            Err(e) => problems.push(format!("{}: {e}", stack.name)),
        }
    }
    assert!(problems.is_empty(), "stacks that spread beyond WORKERS=1:\n{}", problems.join("\n"));
}
