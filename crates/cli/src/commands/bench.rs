//! `bakeoff bench --cmd`: a user's own start command measured as an ad-hoc stack beside the stacks
//! named with it, through the same plan, lifecycle and report as `bakeoff run`.

use crate::args::BenchArgs;
use crate::commands::run::{request, run_request};
use crate::context;
use anyhow::{bail, Result};
use bakeoff_lab::stacks::adhoc::AdHocSpec;
use bakeoff_model::scenario::Scenario;
use std::process::ExitCode;

pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.run.common)?;
    let Some(command) = &args.cmd else {
        bail!("bench needs the command that starts your server\n  hint: pass --cmd 'COMMAND using $PORT and $WORKERS'");
    };
    let mut req = request(&args.run, &root);
    // The hello scenario unless another is asked for: every server can implement it in minutes.
    if req.selection.scenarios.is_empty() {
        req.selection.scenarios = vec![Scenario::Hello];
    }
    req.adhoc.push(AdHocSpec {
        command: command.clone(),
        setup: args.setup.clone(),
        name: args.name.clone(),
        dir: std::env::current_dir()?,
        scenarios: req.selection.scenarios.clone(),
        ready_timeout: args.ready_timeout,
    });
    run_request(&args.run, &root, req)
}
