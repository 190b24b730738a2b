//! `bakeoff setup`: installs and builds stacks from their own dependency files, cached.

use crate::args::SetupArgs;
use crate::context;
use bakeoff_lab::remote::servers::RemoteServers;
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_model::plan::place::Place;
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &SetupArgs) -> anyhow::Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    if let Some(place) = &args.host {
        return on_host(place, args, &root);
    }
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

/// Sets the stacks up on `place`: the project's files go there first (only when the host lacks
/// them), then its agent runs the setup there, cached there. Exit 0 when every stack is set up, 1
/// when the host or a setup failed (the error names the host and what to do).
fn on_host(place: &Place, args: &SetupArgs, root: &Path) -> anyhow::Result<ExitCode> {
    let names = if args.all || args.stacks.is_empty() { vec!["all".to_string()] } else { args.stacks.clone() };
    let cancel = context::cancel_on_ctrl_c();
    let opened = RemoteServers::open(place, &args.agent.session_options()?, &bakeoff_cli::identity(), root);
    let done = opened.and_then(|mut host| {
        let sent = if host.sent_files() { "sent there" } else { "already there" };
        eprintln!("{}: the project's files are in {} ({sent}); setting up {}", host.host(), host.root(), names.join(", "));
        let set_up = host.setup(&names, cancel);
        host.close();
        set_up
    });
    match done {
        Ok(versions) => {
            eprintln!("{place}: set up: {}", names.join(", "));
            for (stack, text) in versions {
                let parts: Vec<String> = bakeoff_model::records::profile::Component::parse_lines(&text)
                    .iter()
                    .map(|c| format!("{} {}", c.name, c.version))
                    .collect();
                eprintln!("  {stack}: {}", parts.join(", "));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(if cancel.load(std::sync::atomic::Ordering::Relaxed) { 130 } else { 1 }))
        }
    }
}
