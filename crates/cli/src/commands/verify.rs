//! `bakeoff verify`: starts each selected stack variant and checks its scenario contracts; prints
//! every problem with its reason and URL; exits non-zero when a check fails.

use crate::args::VerifyArgs;
use crate::commands::run::{scenario_arg, ScenarioArg};
use crate::context;
use bakeoff_lab::run::{plan_verification, verify, VerifyFilter, VerifyRequest};
use bakeoff_model::records::results::{Verdict, VerifyReport};
use std::process::ExitCode;

pub fn run(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let mut stacks = args.names.clone();
    stacks.extend(args.selection.stacks.iter().cloned());
    let mut filter =
        VerifyFilter { variants: args.selection.variants.clone(), scenarios: args.selection.scenarios.clone(), ..VerifyFilter::default() };
    let mut scenario_files = Vec::new();
    // As in `run`: `--scenario` narrows what is checked to that scenario (and any `--scenarios`).
    match args.selection.scenario.as_deref().map(scenario_arg).transpose()? {
        Some(ScenarioArg::BuiltIn(scenario)) => filter.scenarios.push(scenario),
        Some(ScenarioArg::File(file)) => {
            filter.scenarios.push(file.scenario());
            scenario_files.push(file);
        }
        None => {}
    }
    let docstore = args.selection.docstore.clone();
    let plan = plan_verification(VerifyRequest { root: root.clone(), stacks, filter, docstore, scenario_files });
    context::print_problems(&plan.problems);
    let cancel = context::cancel_on_ctrl_c();
    let mut store = bakeoff_store::Store::open(root.join(&args.db))?;
    let json = args.json;
    let done = verify(plan, &mut store, &mut |e| crate::progress::print_event(&e), cancel, &mut |report: &VerifyReport| {
        if json {
            println!("{}", serde_json::to_string(report).expect("a verify report serializes"));
        } else {
            print_report(report);
        }
    })?;
    let (failed, all) = (done.failures(), done.reports.len());
    if !args.json {
        println!("{} of {all} stack variants pass", all - failed);
    }
    if done.interrupted {
        eprintln!("interrupted: the {all} variants checked before the stop are stored; the rest were not checked");
        return Ok(ExitCode::from(130));
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
    crate::progress::print_check_problems(r);
}
