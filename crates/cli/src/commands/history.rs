//! `bakeoff history`: the A/B verdicts of the results file's successive runs (`bench --cmd A --cmd
//! B`), per scenario and metric, oldest first, with their product since the first run.

use crate::args::HistoryArgs;
use anyhow::{bail, Context, Result};
use bakeoff_report::Format;
use std::process::ExitCode;

pub fn run(args: &HistoryArgs) -> Result<ExitCode> {
    if args.format == Format::Csv {
        bail!("--format csv: a history is written as text, markdown, json or html");
    }
    let store = crate::context::open_results(&args.db)?;
    // A/B runs come from `bench`, whose runs are ad hoc: only those are read.
    let listed = store.list_runs()?;
    let runs: Vec<_> = listed.iter().filter(|r| r.study == "adhoc").filter_map(|r| store.load_run(&r.id).ok()).collect();
    let trends = bakeoff_report::history::history(&runs);
    if trends.is_empty() {
        bail!(
            "{} holds no A/B run\n  hint: measure two builds side by side, `bakeoff bench --cmd base='…' --cmd head='…'`: each such run adds a point",
            args.db.display()
        );
    }
    let out = bakeoff_report::history::render(&trends, args.format);
    match &args.out {
        Some(path) => std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?,
        None => print!("{out}"),
    }
    Ok(ExitCode::SUCCESS)
}
