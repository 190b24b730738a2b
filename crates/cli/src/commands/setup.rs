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
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Sets up each stack, showing its phases as it goes and its outcome; returns how many failed
/// (others still run).
pub fn setup_stacks(stacks: &[&Stack], root: &Path, force: bool, quiet: bool) -> usize {
    let shown = crate::status::Shown::start(quiet);
    bakeoff_lab::run::setup_stacks(stacks.iter().copied(), root, force, &mut |e| shown.event(e))
}
