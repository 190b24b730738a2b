//! `bakeoff report`: renders a stored run in any format from the same result structures.

use crate::args::ReportArgs;
use anyhow::{Context, Result};
use std::process::ExitCode;

pub fn run(args: &ReportArgs) -> Result<ExitCode> {
    let format: bakeoff_report::Format = args.format.parse().map_err(|e| anyhow::anyhow!("--format: {e}"))?;
    // A relative --db is inside the project folder, as `bakeoff run` writes it.
    let db = match crate::context::project_root(&crate::args::CommonArgs { root: None }) {
        Ok(root) if args.db.is_relative() => root.join(&args.db),
        _ => args.db.clone(),
    };
    let store = bakeoff_store::Store::open(&db)?;
    let id = match &args.run {
        Some(id) => id.clone(),
        None => store.latest_run_id()?.context("the results database has no runs yet\n  hint: run `bakeoff run` first")?,
    };
    let data = store.load_run(&id)?;
    let out = bakeoff_report::render(&data, format);
    match &args.out {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{out}"),
    }
    Ok(ExitCode::SUCCESS)
}
