//! `bakeoff runs`: lists the runs in the results database, newest first, so a report can name one.

use crate::args::RunsArgs;
use anyhow::Result;
use bakeoff_store::RunListing;
use std::process::ExitCode;

pub fn run(args: &RunsArgs) -> Result<ExitCode> {
    let store = crate::context::open_results(&args.db)?;
    let runs = store.list_runs()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
    } else if runs.is_empty() {
        eprintln!("no runs yet\n  hint: run `bakeoff run` first");
    } else {
        print!("{}", table(&runs));
    }
    Ok(ExitCode::SUCCESS)
}

/// One row per run; `trials` 0 marks a run of checks only (`bakeoff verify`) or one that measured
/// nothing before it stopped.
fn table(runs: &[RunListing]) -> String {
    let header = ["run", "started", "status", "study", "trials", "commit"];
    let rows: Vec<[String; 6]> = runs
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.started_at.clone(),
                r.status.to_string(),
                r.study.clone(),
                r.trials.to_string(),
                r.git_commit.as_deref().map(|c| c.chars().take(10).collect()).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header.map(String::from));
    out += &line(&widths.map(|w| "-".repeat(w)));
    for row in &rows {
        out += &line(row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(id: &str, study: &str, trials: u64) -> RunListing {
        RunListing {
            id: id.into(),
            started_at: "2026-11-22T10:00:00Z".into(),
            finished_at: None,
            status: bakeoff_model::RunStatus::Complete,
            study: study.into(),
            git_commit: Some("0123456789abcdef".into()),
            trials,
        }
    }

    #[test]
    fn table_aligns_columns_and_shortens_commits() {
        let t = table(&[listing("20261122-100000-quick", "quick", 12), listing("v1", "verify", 0)]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "run                    started               status    study   trials  commit");
        assert_eq!(lines[2], "20261122-100000-quick  2026-11-22T10:00:00Z  complete  quick   12      0123456789");
        assert_eq!(lines[3], "v1                     2026-11-22T10:00:00Z  complete  verify  0       0123456789");
    }
}
