//! `bakeoff report`: renders a stored run in any format from the same result structures.

use crate::args::ReportArgs;
use anyhow::{Context, Result};
use std::process::ExitCode;

pub fn run(args: &ReportArgs) -> Result<ExitCode> {
    let store = crate::context::open_results(&args.db)?;
    let id = match &args.run {
        Some(id) => id.clone(),
        None => {
            let id = store.default_report_run_id()?.context("the results database has no runs yet\n  hint: run `bakeoff run` first")?;
            // Said on stderr so a report piped to a file stays clean.
            eprintln!("report of run {id} (the newest with measurements; `bakeoff runs` lists all)");
            id
        }
    };
    let mut data = store.load_run(&id)?;
    if let Some(price) = args.price {
        // The report's price, not the stored run's: the run's settings as this report reads them.
        if let Some(study) = data.run.settings.get_mut("study").and_then(|s| s.as_object_mut()) {
            study.insert("price".into(), serde_json::Value::String(price.to_string()));
        }
    }
    let out = bakeoff_report::render(&data, args.format);
    match &args.out {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{out}"),
    }
    Ok(ExitCode::SUCCESS)
}
