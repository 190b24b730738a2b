//! The standalone `bakeoff-load` binary: the same flags as `bakeoff load`, without the lab, store or
//! reports linked in (bench/load-vs-wrk.sh compares it with wrk, peak RSS included).

use clap::Parser;

#[derive(Parser)]
#[command(name = "bakeoff-load", version, about = "HTTP/1.1 load generator (wrk-like flags)")]
struct Cli {
    #[command(flatten)]
    args: bakeoff_cli::load::LoadArgs,
}

fn main() -> anyhow::Result<std::process::ExitCode> {
    bakeoff_cli::load::run_cli(&Cli::parse().args)
}
