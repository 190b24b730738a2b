//! Standalone `bakeoff-load` binary: the same flags as `bakeoff load`, before the CLI crate exists.

use clap::Parser;

#[derive(Parser)]
#[command(name = "bakeoff-load", version, about = "HTTP/1.1 load generator (wrk-like flags)")]
struct Cli {
    #[command(flatten)]
    args: bakeoff_load::LoadArgs,
}

fn main() -> anyhow::Result<std::process::ExitCode> {
    bakeoff_load::run_cli(&Cli::parse().args)
}
