//! `bakeoff studies`: every study file with one line each: its name, how many cells and trials it
//! measures and how long it takes here, estimated from the study itself.

use crate::args::StudiesArgs;
use crate::context;
use anyhow::Result;
use bakeoff_lab::run::study_estimates;
use std::process::ExitCode;
use std::time::Duration;

pub fn run(args: &StudiesArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let lines = study_estimates(&root)?;
    if args.markdown {
        println!("| study | cells x trials | time here (est.) | what it measures |\n|---|---|---|---|");
        for l in &lines {
            let file = l.path.strip_prefix(&root).unwrap_or(&l.path).display().to_string();
            println!("| `{file}` | {} x {} | {} | {} |", l.cells, l.trials, minutes(l.estimate), l.study.description);
        }
    } else {
        println!("{:<20} {:>5} {:>6} {:>8}  description", "study", "cells", "trials", "time");
        for l in &lines {
            println!("{:<20} {:>5} {:>6} {:>8}  {}", l.study.name, l.cells, l.trials, minutes(l.estimate), l.study.description);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}
