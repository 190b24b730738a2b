//! The shop of scenarios/shop.toml on the repository's stacks that serve it: each one started
//! (default variant, WORKERS=1), verified against the file, sent two whole passes of the file's deck
//! on one thread with every answer's status and known body checked, and stopped with nothing left.

mod common;

use bakeoff_lab::contract::verify::verify_workload;
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_lab::stacks::setup::{self, SetupJob};
use bakeoff_load::LoadPlan;
use bakeoff_model::results::MemorySink;
use bakeoff_model::workload::Workload;
use std::time::Duration;

/// The stacks whose READMEs say they serve the shop.
const SHOP_STACKS: [&str; 4] = ["go/nethttp", "rust/actix", "node/cluster-http", "python/wsgi-gunicorn-sync"];

/// Sets `stack` up (cached), starts it, verifies and loads it, stops it: what it served, or what went wrong.
fn shop_on(lab: &mut bakeoff_lab::run::Lab<'_>, workload: &Workload, stack: &Stack) -> Result<String, String> {
    let root = common::project_root();
    if let Some(job) = SetupJob::for_stack(stack) {
        setup::run(&job, &root, false).map_err(|e| format!("setup: {e}"))?;
    }
    let (server, addr) = lab.serve(stack, &stack.variants[0], 1).map_err(|e| format!("start: {e}"))?;
    let mut server = server.ok_or("the lab started no process")?;
    let result = verify_and_load(workload, addr);
    let left = server.stop(Duration::from_secs(5));
    if !left.is_empty() {
        return Err(format!("left running after stop: {left:?}"));
    }
    result
}

fn verify_and_load(workload: &Workload, addr: std::net::SocketAddr) -> Result<String, String> {
    // Fresh draws each run, as the CLI's; the seed is in any failure, so it can be drawn again.
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    let verification = verify_workload(addr, workload, seed, Duration::from_secs(5));
    if !verification.passed() {
        let wrong: Vec<String> =
            verification.failures().map(|s| format!("{} {} {:?} {:?}", s.kind, s.request, s.failed, s.mismatches)).collect();
        return Err(format!("not verified (seed {seed}):\n{}", wrong.join("\n")));
    }
    let deck = workload.load_deck()?;
    let plan = LoadPlan::builder(&format!("http://{addr}/"))
        .connections(4)
        .threads(1)
        .requests(2 * deck.entries.len() as u64)
        .timeout(Duration::from_secs(5))
        .deck(deck)
        .build()
        .map_err(|e| e.to_string())?;
    let report = bakeoff_load::run(&plan).map_err(|e| e.to_string())?;
    let step = &report.steps[0];
    let kinds: Vec<(&str, u64, u64)> = step.kinds.iter().map(|k| (k.name.as_str(), k.requests, k.errors.total())).collect();
    if kinds != [("item", 1200, 0), ("search", 600, 0), ("cart", 200, 0)] || step.errors.total() != 0 {
        return Err(format!("deck of 2000: kinds {kinds:?}, errors {:?}", step.errors));
    }
    Ok(format!("verified {} answers, deck {kinds:?}", verification.sent.len()))
}

#[test]
fn the_shop_stacks_pass_the_shop_file_and_serve_its_deck() {
    let workload = Workload::load(&common::project_root().join("scenarios/shop.toml")).expect("scenarios/shop.toml");
    let scratch = common::Scratch::new("shop-stacks");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    let catalog = bakeoff_lab::stacks::catalog::discover(&common::project_root().join("stacks"));
    let mut problems = Vec::new();
    for name in SHOP_STACKS {
        let Some(stack) = catalog.stacks.iter().find(|s| s.name == name) else {
            problems.push(format!("{name}: no such stack"));
            continue;
        };
        match shop_on(&mut lab, &workload, stack) {
            Ok(seen) => eprintln!("{name:<28} {seen}"),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
