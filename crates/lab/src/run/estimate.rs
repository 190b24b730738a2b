//! How long a planned run takes on this machine, estimated from its plan before anything runs:
//! cells, trials, each trial's schedule, start/stop and verification. `bakeoff studies` shows it
//! for every study file.

use crate::error::LabError;
use crate::run::plan::{plan_run, RunPlan, RunRequest};
use crate::run::runner::LoadSettings;
use anyhow::Context;
use bakeoff_model::study::{RampSetting, Study};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Starting a server, waiting until it is ready and quiet, and stopping it: a measured typical.
const START_STOP: Duration = Duration::from_secs(3);
/// Verifying one stack variant (start, every contract check, stop).
const VERIFY: Duration = Duration::from_secs(10);

/// A study and what running it costs.
pub struct StudyEstimate {
    pub path: PathBuf,
    pub study: Study,
    pub cells: usize,
    pub trials: u32,
    pub estimate: Duration,
}

/// Every `studies/*.toml`, sorted by file name, planned on this machine as `bakeoff run --study` would.
pub fn study_estimates(root: &Path) -> anyhow::Result<Vec<StudyEstimate>> {
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
            let (cells, estimate) = (plan.cells()?.len(), plan.estimate()?);
            Ok(StudyEstimate { path, cells, trials: plan.settings.trials, estimate, study: plan.study })
        })
        .collect()
}

impl RunPlan {
    /// The plan's regular cells (`estimate` below), its soak cells' own trials of their own length,
    /// and with `ramp = "auto"` the calibration of each cell.
    pub fn estimate(&self) -> Result<Duration, LabError> {
        let cells = self.cells()?;
        let variants: BTreeSet<(&str, &str)> = cells.iter().map(|c| (c.stack.name.as_str(), c.variant.name.as_str())).collect();
        let regular = cells.iter().filter(|c| c.soak.is_none()).count();
        let soaks = cells.iter().filter_map(|c| c.soak);
        let soaked: Duration = soaks.map(|k| (self.settings.warmup + k.duration + START_STOP) * k.trials).sum();
        // `ramp = "auto"` first measures each cell's maximum (at most 5 s) to calibrate its ladder.
        let calibration = match self.settings.ramp {
            Some(RampSetting::Auto) => {
                (self.settings.warmup + self.settings.duration.min(Duration::from_secs(5)) + START_STOP) * regular as u32
            }
            _ => Duration::ZERO,
        };
        Ok(estimate(&self.settings, regular, variants.len()) + soaked + calibration)
    }
}

/// cells x trials x (warm-up + measured steps + SLO search + start/stop), plus verifying each stack
/// variant (a study's soak cells add their own trials of their own length).
fn estimate(s: &LoadSettings, cells: usize, variants: usize) -> Duration {
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
        // At most: the fastest cell's ladder (slower cells climb fewer steps).
        (None, Some(RampSetting::Auto)) => bakeoff_model::study::AUTO_STEPS,
        (None, Some(RampSetting::Ladder(r))) => return ramp_time(r) + s.duration * u32::from(s.max_throughput),
        (None, None) => 1,
    };
    s.duration * (steps + u32::from(s.max_throughput))
}

/// START:STEP:STEP_DURATION:MAX[:HOLD] takes (MAX - START) / STEP + 1 steps of STEP_DURATION, plus HOLD.
fn ramp_time(r: &bakeoff_load::Ramp) -> Duration {
    r.step_duration * (((r.max - r.start) / r.step).floor() as u32 + 1) + r.hold.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> LoadSettings {
        let mut s = crate::run::plan::default_settings();
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
        assert_eq!(estimate(&auto, 1, 0), Duration::from_secs(3 * (2 + 7 * 5 + 3)));
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
