//! `bakeoff agent` (hidden): what a controller runs on a client host over its session. It answers
//! JSON lines on stdin with JSON lines on stdout and exits when its input ends.

use std::process::ExitCode;

pub fn run() -> anyhow::Result<ExitCode> {
    let input = std::io::BufReader::new(std::io::stdin());
    // A closed output means the controller went away: exiting then is the intended end.
    let _ = bakeoff_lab::hosts::agent::serve(bakeoff_cli::identity(), input, std::io::stdout().lock());
    Ok(ExitCode::SUCCESS)
}
