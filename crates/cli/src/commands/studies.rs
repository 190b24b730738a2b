//! `bakeoff studies`: every study file with one line each: its name, how many cells and trials it
//! measures and how long it takes here, estimated from the study itself.

use crate::args::StudiesArgs;
use crate::context;
use anyhow::{Context, Result};
use bakeoff_lab::run::runner::LoadSettings;
use bakeoff_lab::run::{plan_run, RunRequest};
use bakeoff_model::study::RampSetting;
use bakeoff_model::study::Study;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Starting a server, waiting until it is ready and quiet, and stopping it: a measured typical.
const START_STOP: Duration = Duration::from_secs(3);
/// Verifying one stack variant (start, every contract check, stop).
const VERIFY: Duration = Duration::from_secs(10);

/// A study and what running it costs.
pub struct StudyLine {
    pub path: PathBuf,
    pub study: Study,
    pub cells: usize,
    pub trials: u32,
    pub estimate: Duration,
}

pub fn run(args: &StudiesArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.common)?;
    let lines = study_lines(&root)?;
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

/// Every `studies/*.toml`, sorted by file name, planned on this machine as `bakeoff run --study` would.
pub fn study_lines(root: &Path) -> Result<Vec<StudyLine>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("studies"))
        .context("reading studies/")?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let plan = plan_run(RunRequest { root: root.to_path_buf(), study: Some(path.clone()), ..RunRequest::default() })?;
            let cells = plan.cells()?;
            let variants: BTreeSet<(&str, &str)> = cells.iter().map(|c| (c.stack.name.as_str(), c.variant.name.as_str())).collect();
            let estimate = estimate(&plan.settings, cells.len(), variants.len());
            let line = StudyLine { path, cells: cells.len(), trials: plan.settings.trials, estimate, study: plan.study.clone() };
            Ok(line)
        })
        .collect()
}

/// cells x trials x (warm-up + measured steps + SLO search + start/stop), plus verifying each stack
/// variant.
pub fn estimate(s: &LoadSettings, cells: usize, variants: usize) -> Duration {
    let b = &s.slo_budget;
    let slo = if s.slo.is_some() { (b.step_warmup + b.step_duration) * b.max_steps } else { Duration::ZERO };
    let per_trial = s.warmup + measured(s) + slo + START_STOP;
    per_trial * (cells as u32 * s.trials) + VERIFY * variants as u32
}

/// The measured time of one trial: one step, a ladder's steps, or a ramp's (auto: five), plus the
/// closed-model maximum step when asked.
fn measured(s: &LoadSettings) -> Duration {
    let steps = match (&s.conn_ladder, &s.ramp) {
        (Some(l), _) => l.len() as u32,
        (None, Some(RampSetting::Auto)) => 5,
        (None, Some(RampSetting::Ladder(r))) => return ramp_time(r) + s.duration * u32::from(s.max_throughput),
        (None, None) => 1,
    };
    s.duration * (steps + u32::from(s.max_throughput))
}

/// START:STEP:STEP_DURATION:MAX[:HOLD] takes (MAX - START) / STEP + 1 steps of STEP_DURATION, plus HOLD.
fn ramp_time(r: &bakeoff_load::Ramp) -> Duration {
    r.step_duration * (((r.max - r.start) / r.step).floor() as u32 + 1) + r.hold.unwrap_or_default()
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LoadSettings {
        let mut s = bakeoff_lab::run::plan::default_settings();
        (s.duration, s.warmup, s.trials, s.max_throughput) = (Duration::from_secs(5), Duration::from_secs(2), 3, false);
        s
    }

    #[test]
    fn estimate_is_cells_times_trials_times_a_trial_plus_verification() {
        // 4 cells x 3 trials x (2 s warm-up + 5 s + 3 s start/stop) + 2 variants x 10 s.
        assert_eq!(estimate(&settings(), 4, 2), Duration::from_secs(4 * 3 * 10 + 20));
        let ladder = LoadSettings { conn_ladder: Some(vec![1, 16, 64, 256]), ..settings() };
        assert_eq!(estimate(&ladder, 1, 0), Duration::from_secs(3 * (2 + 4 * 5 + 3)));
        let auto = LoadSettings { ramp: Some(RampSetting::Auto), max_throughput: true, ..settings() };
        assert_eq!(estimate(&auto, 1, 0), Duration::from_secs(3 * (2 + 6 * 5 + 3)));
        // An SLO search may take its whole budget: 8 steps of 0.5 s warm-up + 2 s.
        let slo = LoadSettings { slo: "p99<=10ms".parse().ok(), ..settings() };
        assert_eq!(estimate(&slo, 1, 0), Duration::from_secs(3 * (2 + 5 + 20 + 3)));
    }

    #[test]
    fn a_ramp_takes_its_steps_and_hold() {
        let ramp = |t: &str| ramp_time(&bakeoff_load::Ramp::parse(t).unwrap());
        assert_eq!(ramp("10000:5000:5s:25000"), Duration::from_secs(20));
        assert_eq!(ramp("10000:5000:5s:25000:10s"), Duration::from_secs(30));
    }
}
