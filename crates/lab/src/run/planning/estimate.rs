//! How long a planned run takes on this machine, estimated from its plan before anything runs:
//! cells, trials, each trial's schedule, start/stop and verification. `bakeoff studies` shows it
//! for every study file.

use crate::error::LabError;
use crate::run::planning::plan::{plan_run, RunPlan, RunRequest};
use crate::run::LoadSettings;
use anyhow::Context;
use bakeoff_model::study::{RampSetting, Study};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::run::planning::launches::START_STOP;
/// Verifying one stack variant (start, every contract check, stop).
const VERIFY: Duration = Duration::from_secs(10);
/// Verification warms a JIT stack's cost routes up for its manifest's warm-up, up to this bound
/// (the cost check's own bound).
const VERIFY_WARMUP_BOUND: Duration = Duration::from_secs(30);

/// A study and what running it costs.
pub struct StudyEstimate {
    /// The study file.
    pub path: PathBuf,
    /// The study as parsed.
    pub study: Study,
    /// The cells its run would measure on this machine.
    pub cells: usize,
    /// Trials per cell.
    pub trials: u32,
    /// Roughly how long its run would take on this machine: verification, warm-ups, trials, soak cells
    /// and ramp calibration.
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
    /// and with `ramp = "auto"` the calibration of each cell. A stack whose manifest asks for a
    /// longer warm-up (a JIT) gets it in every trial and once more in its verification, as the lab
    /// runs it: PyPy's 30 s warm-up is most of seed 000's time.
    pub(crate) fn estimate(&self) -> Result<Duration, LabError> {
        self.estimate_at(self.settings.trials)
    }

    /// `estimate` with `trials` trials of every regular cell instead of the settings' own.
    pub(crate) fn estimate_at(&self, trials: u32) -> Result<Duration, LabError> {
        let cells = self.cells()?;
        let s = &self.settings;
        let warmup = |stack: &crate::stacks::manifest::Stack| warmup_of(s, stack);
        let mut variants: Vec<(&str, &str, Duration)> =
            cells.iter().map(|c| (c.stack.name.as_str(), c.variant.name.as_str(), c.stack.warmup.unwrap_or_default())).collect();
        variants.sort();
        variants.dedup();
        let verify: Duration = variants.iter().map(|v| VERIFY + v.2.min(VERIFY_WARMUP_BOUND)).sum();
        let regular: Duration =
            cells.iter().filter(|c| c.soak.is_none()).map(|c| cell_time(s, c.can_pair(s), warmup(c.stack), trials)).sum();
        let soaked: Duration = cells.iter().filter_map(|c| c.soak.map(|k| trial_weight(s, c) * k.trials)).sum();
        // `ramp = "auto"` first measures each cell's maximum (at most 5 s) to calibrate its ladder.
        let calibration: Duration = match s.ramp {
            Some(RampSetting::Auto) => cells
                .iter()
                .filter(|c| c.soak.is_none())
                .map(|c| warmup(c.stack) + s.duration.min(Duration::from_secs(5)) + START_STOP)
                .sum(),
            _ => Duration::ZERO,
        };
        let curved = cells.iter().filter(|c| c.soak.is_none() && !c.key().twin).count() as u32;
        let under_load = under_load_total(s, curved, trials);
        let joint = joint_time(s, &cells, trials, crate::machine::cgroup::equal_shares());
        Ok(regular + joint + verify + soaked + calibration + under_load)
    }
}

/// Latency under load: once a launch of each of `cells` (regular, not the A/A twin) at `trials`
/// blocks or trials, a step per fraction.
fn under_load_total(s: &LoadSettings, cells: u32, trials: u32) -> Duration {
    let Some(u) = &s.latency_under_load else { return Duration::ZERO };
    let launches = match s.schedule {
        bakeoff_model::plan::schedule::Schedule::Trials => trials,
        _ => crate::run::planning::launches::LaunchPlan::for_blocks(trials, s).launches,
    };
    under_load_time(u) * cells * u.launches_of(launches)
}

/// Under the block schedule, every block of a scenario with two or more cells that can share the
/// server CPUs holds one joint slice more (`equal_shares`: the lab can give them equal shares).
fn joint_time(s: &LoadSettings, cells: &[crate::run::planning::cells::Cell<'_>], trials: u32, equal_shares: bool) -> Duration {
    if s.schedule != bakeoff_model::plan::schedule::Schedule::Blocks || !equal_shares {
        return Duration::ZERO;
    }
    let mut sharing: std::collections::BTreeMap<bakeoff_model::scenario::Scenario, u32> = Default::default();
    for c in cells.iter().filter(|c| c.soak.is_none() && c.can_pair(s)) {
        *sharing.entry(c.scenario).or_default() += 1;
    }
    (s.duration + crate::run::planning::launches::SLICE_WARMUP) * trials * sharing.values().filter(|&&n| n >= 2).count() as u32
}

/// A regular cell's `trials`: under the block schedule (cells that can share the server CPUs) a
/// start, stop and warm-up per launch and a settled slice per block; else a whole trial each.
fn cell_time(s: &LoadSettings, pairable: bool, warmup: Duration, trials: u32) -> Duration {
    if s.schedule.pairs_blocks() && pairable {
        let launches = crate::run::planning::launches::LaunchPlan::for_blocks(trials, s).launches;
        (s.duration + crate::run::planning::launches::SLICE_WARMUP) * trials + (warmup + START_STOP) * launches
    } else {
        trial_time(s, warmup) * trials
    }
}

/// The plan's time for one trial of `cell`: under the block schedule a slice with its share of its
/// launch's start, stop and warm-up; else a whole trial, a soak cell's of its own length. The
/// progress line weighs what is left of a run by it.
pub(crate) fn trial_weight(s: &LoadSettings, cell: &crate::run::planning::cells::Cell<'_>) -> Duration {
    let warmup = warmup_of(s, cell.stack);
    match cell.soak {
        Some(k) => warmup + k.duration + START_STOP,
        None => cell_time(s, cell.can_pair(s), warmup, s.trials.max(1)) / s.trials.max(1),
    }
}

/// A stack's warm-up in every trial or launch: the run's, or the longer one its manifest asks for (a JIT).
fn warmup_of(s: &LoadSettings, stack: &crate::stacks::manifest::Stack) -> Duration {
    s.warmup.max(stack.warmup.unwrap_or_default())
}

/// One trial with this warm-up: warm-up + measured steps + SLO search + start/stop.
fn trial_time(s: &LoadSettings, warmup: Duration) -> Duration {
    let b = &s.slo_budget;
    let slo = if s.slo.is_some() { (b.step_warmup + b.step_duration) * b.max_steps } else { Duration::ZERO };
    warmup + measured(s) + slo + START_STOP
}

/// One cell's curve: a step and its warm-up per fraction.
fn under_load_time(u: &bakeoff_model::slo::UnderLoad) -> Duration {
    (u.step + u.warmup()) * u.fractions.len() as u32
}

/// cells x a plain cell's trials at the study's warm-up, plus verifying each stack variant (without
/// a stack's own warm-up).
#[cfg(test)]
fn estimate(s: &LoadSettings, cells: usize, variants: usize) -> Duration {
    cell_time(s, s.allows_blocks(), s.warmup, s.trials) * cells as u32 + VERIFY * variants as u32
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
    use bakeoff_model::plan::schedule::Schedule;

    fn settings() -> LoadSettings {
        let mut s = crate::run::LoadSettings::default();
        (s.duration, s.warmup, s.trials, s.max_throughput) = (Duration::from_secs(5), Duration::from_secs(2), 3, false);
        s.schedule = Schedule::Trials;
        s
    }

    #[test]
    fn estimate_is_cells_times_trials_times_a_trial_plus_verification() {
        // 4 cells x 3 trials x (2 s warm-up + 5 s + 1 s start/stop) + 2 variants x 10 s.
        assert_eq!(estimate(&settings(), 4, 2), Duration::from_secs(4 * 3 * 8 + 20));
        let ladder = LoadSettings { conn_ladder: Some(vec![1, 16, 64, 256]), ..settings() };
        assert_eq!(estimate(&ladder, 1, 0), Duration::from_secs(3 * (2 + 4 * 5 + 1)));
        let auto = LoadSettings { ramp: Some(RampSetting::Auto), max_throughput: true, ..settings() };
        assert_eq!(estimate(&auto, 1, 0), Duration::from_secs(3 * (2 + 7 * 5 + 1)));
        // Five fractions of 1 s after 0.25 s each.
        let u = bakeoff_model::slo::UnderLoad::from_percent(&[25.0, 50.0, 75.0, 90.0, 100.0], Duration::from_secs(1), None).unwrap();
        assert_eq!(under_load_time(&u), Duration::from_millis(6250));
        // Once a launch: every trial is one under the trials schedule; 6 blocks in 2 launches.
        let every = LoadSettings { latency_under_load: Some(u.clone()), ..settings() };
        assert_eq!(under_load_total(&every, 2, 3), Duration::from_millis(2 * 3 * 6250));
        let blocks = LoadSettings { schedule: Schedule::Blocks, launches: Some(2), ..every.clone() };
        assert_eq!(under_load_total(&blocks, 2, 6), Duration::from_millis(2 * 2 * 6250));
        let first = LoadSettings { latency_under_load: Some(bakeoff_model::slo::UnderLoad { launches: Some(1), ..u }), ..every };
        assert_eq!(under_load_total(&first, 2, 3), Duration::from_millis(2 * 6250));
        assert_eq!(under_load_total(&settings(), 2, 3), Duration::ZERO);
        // An SLO search may take its whole budget: 8 steps of 0.5 s warm-up + 2 s.
        let slo = LoadSettings { slo: "p99<=10ms".parse().ok(), ..settings() };
        assert_eq!(estimate(&slo, 1, 0), Duration::from_secs(3 * (2 + 5 + 20 + 1)));
    }

    #[test]
    fn a_block_scheduled_cell_starts_and_warms_once_per_launch() {
        // 6 blocks in 3 launches: 6 x (5 s + 0.25 s) + 3 x (2 s warm-up + 1 s start/stop).
        let three = LoadSettings { schedule: Schedule::Blocks, trials: 6, launches: Some(3), ..settings() };
        assert_eq!(estimate(&three, 1, 0), Duration::from_millis(6 * 5250 + 3 * 3000));
        // Launches left to the allocation: as many as it chooses, each a warm-up and a start.
        let blocks = LoadSettings { launches: None, ..three };
        let launches = crate::run::planning::launches::LaunchPlan::for_blocks(6, &blocks).launches;
        assert_eq!(estimate(&blocks, 1, 0), Duration::from_millis(6 * 5250 + u64::from(launches) * 3000));
        // A ramp keeps a server per trial: whole trials, as on the trial schedule.
        let ramp = LoadSettings { ramp: Some(RampSetting::Auto), ..blocks.clone() };
        assert_eq!(estimate(&ramp, 1, 0), Duration::from_secs(6 * (2 + 6 * 5 + 1)));
    }

    /// The plan of the repository's study `name`.
    fn plan_of(name: &str) -> RunPlan {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let study = root.join(format!("studies/{name}.toml"));
        plan_run(RunRequest { root, study: Some(study), ..RunRequest::default() }).unwrap()
    }

    #[test]
    fn a_jit_stacks_own_warm_up_counts_in_every_trial_and_in_its_verification() {
        let plan = plan_of("seed-000-rest");
        let cells = plan.cells().unwrap();
        let pypy = cells.iter().filter(|c| c.stack.name == "pypy/werkzeug-uwsgi").count() as u32;
        assert_eq!(pypy, 5, "PyPy serves seed 000's five scenarios");
        let s = &plan.settings;
        let at_study_warmup = estimate(s, cells.len(), 4);
        // PyPy's manifest asks for 30 s of warm-up: 28 s more than the study's 2 s in each of its
        // launches (as many as the block schedule splits the study's blocks into), and 30 s in its
        // verification.
        let launches = crate::run::planning::launches::LaunchPlan::for_blocks(s.trials, s).launches;
        assert!(launches >= 2, "seed 000 restarts its servers between blocks");
        let extra = Duration::from_secs(28) * (pypy * launches) + Duration::from_secs(30);
        let joint = joint_time(s, &cells, s.trials, crate::machine::cgroup::equal_shares());
        assert_eq!(plan.estimate().unwrap(), at_study_warmup + joint + extra);
    }

    #[test]
    fn a_block_holds_one_joint_slice_per_scenario_of_two_cells_or_more_that_can_share() {
        let plan = plan_of("quick");
        let cells = plan.cells().unwrap();
        let s = LoadSettings { schedule: Schedule::Blocks, ..plan.settings.clone() };
        let scenarios: std::collections::BTreeSet<_> = cells.iter().map(|c| c.scenario).collect();
        assert_eq!(scenarios.len(), 3, "the default study's hello, json and products, each of three or four cells");
        let slice = s.duration + crate::run::planning::launches::SLICE_WARMUP;
        assert_eq!(joint_time(&s, &cells, 10, true), slice * 10 * 3);
        assert_eq!(joint_time(&s, &cells, 10, false), Duration::ZERO, "no equal shares: no joint slice");
        let at_once = LoadSettings { schedule: Schedule::AtOnce, ..s.clone() };
        assert_eq!(joint_time(&at_once, &cells, 10, true), Duration::ZERO, "at once, the joint slice is the cells' own");
        let one = [cells[0].clone()];
        assert_eq!(joint_time(&s, &one, 10, true), Duration::ZERO, "a lone cell has no one to share with");
    }

    /// The progress line weighs what is left of a run by `trial_weight`: a cell's weights add up to
    /// what the estimate counts for it, a soak's included (seed 002 soaks 90 s per trial).
    #[test]
    fn a_cells_trial_weights_add_up_to_its_share_of_the_estimate() {
        let plan = plan_of("seed-002-orm");
        let s = &plan.settings;
        let cells = plan.cells().unwrap();
        let soak = cells.iter().find(|c| c.soak.is_some()).expect("seed 002 soaks a cell");
        let k = soak.soak.unwrap();
        assert_eq!(trial_weight(s, soak), warmup_of(s, soak.stack) + k.duration + START_STOP);
        assert!(trial_weight(s, soak) >= Duration::from_secs(90));
        for c in cells.iter().filter(|c| c.soak.is_none()) {
            let all = cell_time(s, c.can_pair(s), warmup_of(s, c.stack), s.trials);
            let summed = trial_weight(s, c) * s.trials;
            assert!(all.abs_diff(summed) < Duration::from_millis(s.trials as u64), "{}: {all:?} against {summed:?}", c.key().label());
        }
    }

    #[test]
    fn a_ramp_takes_its_steps_and_hold() {
        let ramp = |t: &str| ramp_time(&bakeoff_load::Ramp::parse(t).unwrap());
        assert_eq!(ramp("10000:5000:5s:25000"), Duration::from_secs(20));
        assert_eq!(ramp("10000:5000:5s:25000:10s"), Duration::from_secs(30));
    }
}
