//! `bakeoff compare RUN_A RUN_B`: per shared cell, the change of each primary metric and of p99
//! with a 95% interval and a verdict; exits 1 when `--fail-if-slower` finds a regression beyond
//! noise larger than its threshold (a CI gate).

use crate::args::CompareArgs;
use anyhow::{bail, Context, Result};
use bakeoff_model::statistics::comparison::compare;
use bakeoff_report::Format;
use std::process::ExitCode;

pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    let format = args.format;
    if format == Format::Csv {
        bail!("--format csv: a comparison is written as text, markdown, json or html");
    }
    let threshold = args.fail_if_slower;
    let store = crate::context::open_results(&args.db)?;
    let a = store.load_run(&args.run_a)?;
    let b = store.load_run(&args.run_b)?;
    // Ranked as run B asks (its study's rank_by), unless told otherwise.
    let primary = args.rank_by.unwrap_or_else(|| bakeoff_report::view::policy(&b.run.settings).primary);
    let mut comparison = compare((&a.run.id, &a.trials), (&b.run.id, &b.trials), primary, threshold);
    if bakeoff_report::view::loaded_together(&a) && bakeoff_report::view::loaded_together(&b) {
        comparison = comparison.judged_on_ratios(&a.trials, &b.trials);
    }
    if comparison.cells.is_empty() {
        bail!("runs {} and {} share no cell\n  hint: compare two runs of the same study (`bakeoff runs` lists them)", a.run.id, b.run.id);
    }
    let out = bakeoff_report::compare::render(&comparison, format);
    match &args.out {
        Some(path) => std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?,
        None => print!("{out}"),
    }
    Ok(if comparison.regressions().next().is_some() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
