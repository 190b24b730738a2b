//! `bakeoff fixtures DIR`: writes the scenario fixtures, for testing a stack by hand.

use crate::args::FixturesArgs;
use std::process::ExitCode;

pub fn run(args: &FixturesArgs) -> anyhow::Result<ExitCode> {
    bakeoff_lab::contract::fixtures::write_all(&args.dir)?;
    println!("fixtures written to {}", args.dir.display());
    Ok(ExitCode::SUCCESS)
}
