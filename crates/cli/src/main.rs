//! The `bakeoff` binary: parses arguments and hands each subcommand to its module; nothing else.

mod args;
mod commands;
mod context;
mod progress;
mod status;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: args::Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        args::Command::Load(a) if a.hosts.clients.is_empty() => bakeoff_cli::load::run_cli(&a.load),
        args::Command::Load(a) => bakeoff_cli::load::run_clients(&a.load, &a.hosts, &bakeoff_cli::identity()),
        args::Command::Agent => commands::agent::run(),
        args::Command::Fixtures(a) => commands::fixtures::run(&a),
        args::Command::Stacks(a) => commands::stacks::run(&a),
        args::Command::Studies(a) => commands::studies::run(&a),
        args::Command::Setup(a) => commands::setup::run(&a),
        args::Command::Verify(a) => commands::verify::run(&a),
        args::Command::Run(a) => commands::run::run(&a),
        args::Command::Report(a) => commands::report::run(&a),
        args::Command::Runs(a) => commands::runs::run(&a),
        args::Command::Compare(a) => commands::compare::run(&a),
        args::Command::History(a) => commands::history::run(&a),
        args::Command::Doctor(a) => commands::doctor::run(&a),
        args::Command::Bench(a) => commands::bench::run(&a),
        args::Command::New(a) => commands::new::run(&a),
        args::Command::Scenario(args::ScenarioCommand::Check(a)) => commands::scenario::check(&a),
    }
}
