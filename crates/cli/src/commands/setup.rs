//! `bakeoff setup`: installs and builds stacks from their own dependency files, cached.

use crate::args::SetupArgs;
use crate::context;
use bakeoff_lab::stacks::manifest::Stack;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &SetupArgs) -> anyhow::Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let catalog = context::catalog(&root);
    let names = if args.all || args.stacks.is_empty() { vec!["all".to_string()] } else { args.stacks.clone() };
    let stacks = catalog.select(&names)?;
    let failed = setup_stacks(&stacks, &root, args.force, args.quiet);
    if context::cancel_on_ctrl_c().load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("setup stopped: the stacks not set up yet set up on the next `bakeoff setup` (or run)");
        return Ok(ExitCode::from(130));
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Sets up each stack, showing its phases as it goes and its outcome; returns how many failed
/// (others still run). Ctrl-C or SIGTERM stops the build that runs, every process of it, and the
/// stacks after it.
pub fn setup_stacks(stacks: &[&Stack], root: &Path, force: bool, quiet: bool) -> usize {
    let shown = crate::status::Shown::start(quiet);
    let cancel = context::cancel_on_ctrl_c();
    bakeoff_lab::run::setup_stacks(stacks.iter().copied(), root, force, cancel, &mut |e| shown.event(e))
}
