//! `bakeoff verify`: starts each selected stack variant and checks its scenario contracts; prints
//! every problem with its reason and URL; exits non-zero when a check fails.

use crate::args::VerifyArgs;
use crate::context;
use bakeoff_lab::run::execute::{new_run, Workspace};
use bakeoff_lab::run::plan::default_settings;
use bakeoff_lab::run::verification::VerifyFilter;
use bakeoff_model::results::{ResultSink, Verdict, VerifyReport};
use bakeoff_model::RunStatus;
use std::process::ExitCode;

pub fn run(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let catalog = context::catalog(&root);
    let mut names = args.names.clone();
    names.extend(args.selection.stacks.iter().cloned());
    if names.is_empty() {
        names.push("all".into());
    }
    let stacks = catalog.select(&names)?;
    crate::commands::setup::setup_stacks(&stacks, &root, false);
    let cancel = context::cancel_on_ctrl_c();
    let mut store = bakeoff_store::Store::open(root.join(&args.db))?;
    let run = new_run(&root, "verify", serde_json::json!({"command": "verify"}));
    let ws = Workspace::create(&run.id, false)?;
    store.begin_run(&run)?;
    let mut events = context::print_event;
    let mut lab = ws.lab(&root, args.selection.docstore.clone(), default_settings(), &mut store, &mut events, cancel);
    let filter = VerifyFilter { variants: args.selection.variants.clone(), scenarios: args.selection.scenarios.clone() };
    let json = args.json;
    let reports = lab.verify_selection(&run.id, &stacks, &filter, &mut |report: &VerifyReport| {
        if json {
            println!("{}", serde_json::to_string(report).expect("a verify report serializes"));
        } else {
            print_report(report);
        }
    })?;
    lab.sink.finish_run(&run.id, &RunStatus::Complete)?;
    drop(lab);
    ws.finish(reports.iter().any(|r| r.verdict() == Verdict::Fail), &mut events);
    let failed = reports.iter().filter(|r| r.verdict() == Verdict::Fail).count();
    if !args.json {
        println!("{} of {} stack variants pass", reports.len() - failed, reports.len());
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn print_report(r: &VerifyReport) {
    let verdict = match r.verdict() {
        Verdict::Pass => "PASS",
        Verdict::Warn => "WARN",
        Verdict::Fail => "FAIL",
    };
    println!("{verdict} {} [{}] ({} checks)", r.stack, r.variant, r.checks.len());
    print_problems(r);
}

/// Prints the warnings and failures of a report, one per line with the URL and reason.
pub fn print_problems(r: &VerifyReport) {
    for c in r.checks.iter().filter(|c| c.verdict != Verdict::Pass) {
        let v = if c.verdict == Verdict::Fail { "fail" } else { "warn" };
        println!("  {v} {:<9} {}: {}\n       {}", c.scenario, c.what, c.url, c.reason);
    }
}
