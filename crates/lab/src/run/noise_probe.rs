//! This machine's noise floor in about 25 seconds: an A/A measurement of one small server
//! already set up (two launches of it side by side, measured in short slices in a fresh random
//! order per block, as the block schedule measures a study), and what it implies for a study: the
//! precision its cells can expect, the time a precision target needs, what a budget reaches.
//! Used by `bakeoff doctor` and, before a run with a precision target, by the run.

use crate::error::LabError;
use crate::run::cells::Cell;
use crate::run::hosts::RunHosts;
use crate::run::plan::RunPlan;
use crate::run::workspace::{new_run, Workspace};
use crate::run::{LoadSettings, RunOutcome};
use crate::stacks::manifest::Stack;
use crate::stacks::setup::{is_current, SetupJob};
use bakeoff_model::paired::{minutes_spent, paired_half_width_factor, paired_ratio, PairedRatio};
use bakeoff_model::pairing::pairs_between;
use bakeoff_model::place::Roles;
use bakeoff_model::results::MemorySink;
use bakeoff_model::robust::robust_sigma;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::schedule::Schedule;
use bakeoff_model::summary::Metric;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The small servers the probe may use, cheapest to start and to load first.
const CANDIDATES: [&str; 4] = ["rust/actix", "go/fasthttp", "go/nethttp", "rust/hyper"];
/// Blocks of the probe: two slices each (one per arm), the fewest that give a 95% signed-rank
/// interval with room to spare (six is the least).
const BLOCKS: u32 = 8;
const SLICE: Duration = Duration::from_secs(1);
const WARMUP: Duration = Duration::from_millis(500);
/// z(0.975) times the median's asymptotic standard error over the standard deviation (√(π/2)):
/// a median interval's half-width is about this many σ / √n.
const MEDIAN_HALF_WIDTH_SIGMAS: f64 = 1.96 * 1.2533;
/// How long a probe usually takes: its slices, each arm's warm-up and two starts.
pub const EXPECTED: Duration = Duration::from_secs(25);
/// A probe this recent is reused by a run instead of measuring again.
const FRESH: Duration = Duration::from_secs(6 * 3600);

/// What the probe measured: the A/A ratio of the two launches and the spread of single slices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseFloor {
    /// The stack measured (its `hello`, one worker).
    pub stack: String,
    /// When it was measured (RFC 3339).
    pub measured_at: String,
    /// The A/A ratio of the two launches over the blocks, with its signed-rank interval.
    pub aa: PairedRatio,
    /// Minutes the two arms' slices took, as the report counts an A/A floor's minutes.
    pub minutes: f64,
    /// One slice's requests/s spread relative to its median: the robust σ (1.4826 × MAD) of the
    /// slices' logarithms, the two arms pooled.
    pub slice_spread: f64,
    /// Where the roles were placed when it was measured on hosts ("servers on ssh://..., load
    /// from 2 client hosts"); None for this machine alone.
    #[serde(default)]
    pub site: Option<String>,
}

impl NoiseFloor {
    /// "rust/actix hello A/A over 8 blocks: 1.004 (0.981-1.027), ±2.3% in 0.4 min".
    pub fn summary(&self) -> String {
        let a = &self.aa;
        format!(
            "{} hello A/A over {} blocks: {:.3} ({:.3}-{:.3}), ±{:.1}% in {:.1} min",
            self.stack,
            a.blocks,
            a.ratio,
            a.low,
            a.high,
            100.0 * a.relative_half_width(),
            self.minutes
        )
    }

    /// The A/A half-width after one minute of measuring a pair, in percent (the report's P).
    pub fn percent_per_minute(&self) -> f64 {
        self.aa.merit(self.minutes)
    }

    /// The half-width (a fraction) a cell's median interval can expect after `trials` slices.
    pub fn cell_half_width(&self, trials: u32) -> f64 {
        MEDIAN_HALF_WIDTH_SIGMAS * self.slice_spread / f64::from(trials.max(1)).sqrt()
    }

    /// The trials a cell needs for a half-width of `target` (a fraction).
    pub fn trials_for(&self, target: f64) -> u32 {
        ((MEDIAN_HALF_WIDTH_SIGMAS * self.slice_spread / target.max(1e-6)).powi(2).ceil() as u32).max(1)
    }

    /// The spread (σ) of one block's log ratio that the A/A pair's interval implies: its
    /// half-width over what its design (blocks, launches) gives per unit of σ.
    fn block_sigma(&self) -> f64 {
        self.aa.relative_half_width() / paired_half_width_factor(self.aa.blocks, self.aa.launches)
    }

    /// The half-width (a fraction) a paired ratio can expect after `blocks` blocks, spread over
    /// launches as a run spreads them: the block spread the A/A pair implies, times the interval's
    /// own factor for that design (six blocks give a far wider interval than √n scaling from the
    /// probe's eight says). What a block-scheduled run ranks and judges on; the pair's slices meet
    /// different moments of the machine, so it is wider than a cell's own spread alone predicts.
    pub fn ratio_half_width(&self, blocks: u32, schedule: Schedule) -> f64 {
        let launches = crate::run::launches::LaunchPlan::for_blocks(blocks, None, schedule).launches;
        self.block_sigma() * paired_half_width_factor(blocks, launches)
    }

    /// The blocks a paired ratio needs for a half-width of `target` (a fraction): the fewest whose
    /// expected half-width is within it (its launches as `schedule` spreads them), searched from
    /// the √n estimate.
    pub fn blocks_for(&self, target: f64, schedule: Schedule) -> u32 {
        let target = target.max(1e-6);
        let guess = ((1.96 * self.block_sigma() / target).powi(2).ceil() as u32).max(2);
        // Beyond a few hundred blocks the √n law holds and no run gets there: the guess stands.
        if guess > 240 {
            return guess;
        }
        let mut n = guess;
        while n > 2 && self.ratio_half_width(n - 1, schedule) <= target {
            n -= 1;
        }
        while self.ratio_half_width(n, schedule) > target && n < 240 {
            n += 1;
        }
        n
    }
}

/// A study's precision target against this machine's noise floor, said before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlook {
    /// The target, a fraction (0.05 = ±5%).
    pub target: f64,
    /// Trials per cell the target needs here.
    pub trials_needed: u32,
    /// The run's time with that many trials (None above the lab's cap on trials).
    pub needs: Option<Duration>,
    /// The run's time with the study's own trials.
    pub planned: Duration,
    /// The study's budget, if it has one.
    pub budget: Option<Duration>,
    /// Trials per cell that fit in the budget (the study's own when there is none).
    pub trials_possible: u32,
    /// The half-width those trials can expect, a fraction.
    pub reaches: f64,
    /// The run's schedule: where it is the block schedule, loading the cells at once is the way
    /// to a target the machine's noise puts out of reach.
    pub schedule: Schedule,
}

impl Outlook {
    /// Whether the target is expected within the budget.
    pub fn fits(&self) -> bool {
        self.reaches <= self.target
    }
}

/// A paired ratio's half-width measured `from` (blocks, launches), projected to `blocks` of
/// `schedule` (over `launches`, or as many as it spreads them over): the same spread per block,
/// with as many blocks. None when `from` held too few blocks for a 95% interval.
pub fn project_ratio_half_width(half_width: f64, from: (u32, u32), blocks: u32, launches: Option<u32>, schedule: Schedule) -> Option<f64> {
    let launches = crate::run::launches::LaunchPlan::for_blocks(blocks, launches, schedule).launches;
    let (then, now) = (paired_half_width_factor(from.0, from.1), paired_half_width_factor(blocks, launches));
    (then.is_finite() && then > 0.0).then(|| half_width * now / then)
}

/// The outlook of `plan` on a machine with `floor`; None without a precision target.
pub fn outlook(plan: &RunPlan, floor: &NoiseFloor) -> Result<Option<Outlook>, LabError> {
    let Some(target) = plan.settings.precision else { return Ok(None) };
    let trials = plan.settings.trials;
    let planned = plan.estimate()?;
    // Under the block schedule the target is met on paired ratios: project the A/A pair's width.
    let paired = plan.settings.schedule.pairs_blocks();
    let half_width = |n: u32| if paired { floor.ratio_half_width(n, plan.settings.schedule) } else { floor.cell_half_width(n) };
    let trials_needed = if paired { floor.blocks_for(target, plan.settings.schedule) } else { floor.trials_for(target) }.max(trials);
    let cap = crate::run::rounds::MAX_TRIALS;
    let needs = if trials_needed <= cap { Some(plan.estimate_at(trials_needed)?) } else { None };
    let mut trials_possible = trials;
    if let Some(budget) = plan.settings.budget {
        while trials_possible < cap && plan.estimate_at(trials_possible + 1)? <= budget {
            trials_possible += 1;
        }
    } else {
        trials_possible = trials_needed.min(cap);
    }
    let reaches = half_width(trials_possible);
    let (budget, schedule) = (plan.settings.budget, plan.settings.schedule);
    Ok(Some(Outlook { target, trials_needed, needs, planned, budget, trials_possible, reaches, schedule }))
}

/// The first candidate stack with a `hello` whose setup is current (the probe never builds).
fn probe_stack<'s>(stacks: &'s [Stack], root: &Path) -> Option<&'s Stack> {
    CANDIDATES.iter().find_map(|name| {
        let stack = stacks.iter().find(|s| s.name == *name)?;
        let job = SetupJob::for_stack(stack)?;
        (stack.scenarios.contains(&Scenario::Hello) && is_current(&job, root)).then_some(stack)
    })
}

/// Measures the noise floor with the server and client CPUs of `settings` (about 25 s); stops
/// early when `cancel` is set.
pub fn probe(root: &Path, settings: &LoadSettings, cancel: &AtomicBool) -> Result<NoiseFloor, LabError> {
    let catalog = crate::stacks::catalog::discover(&root.join("stacks"));
    let stack = probe_stack(&catalog.stacks, root).ok_or_else(|| {
        LabError::Selection(format!(
            "no small stack is set up for the noise probe (one of {})\n  hint: run `bakeoff setup rust/actix` first",
            CANDIDATES.join(", ")
        ))
    })?;
    measure(root, stack, settings, None, cancel)
}

/// Measures the noise floor where the run's roles are placed: the servers on their host, the load
/// from the client hosts, as the run will measure (a placed run's floor is not this machine's).
/// With the servers on a host, the probe's stack is one of the run's own small stacks: only they
/// are set up there. `hosts` are lent to the probe and handed back as they are after it.
pub(crate) fn probe_placed(
    root: &Path,
    settings: &LoadSettings,
    run_stacks: &[Stack],
    hosts: &mut RunHosts,
    cancel: &AtomicBool,
) -> Result<NoiseFloor, LabError> {
    let catalog;
    let stack = if hosts.server_host.is_some() {
        CANDIDATES.iter().find_map(|name| run_stacks.iter().find(|s| s.name == *name && s.scenarios.contains(&Scenario::Hello)))
    } else {
        catalog = crate::stacks::catalog::discover(&root.join("stacks"));
        probe_stack(&catalog.stacks, root)
    };
    let stack = stack.ok_or_else(|| {
        LabError::Selection(format!(
            "the noise probe on the run's hosts needs one of {} among the run's stacks\n  hint: add one to `--stacks` to see the outlook",
            CANDIDATES.join(", ")
        ))
    })?;
    let mut floor = measure(root, stack, settings, Some(hosts), cancel)?;
    floor.site = site_of(&settings.roles);
    Ok(floor)
}

/// Where a placed run measures, in words ("servers on netns:srv, load from ssh://u@a:22,
/// netns:b"); None when nothing is placed.
pub fn site_of(roles: &Roles) -> Option<String> {
    if roles.is_local() {
        return None;
    }
    let clients = match &roles.client[..] {
        [] => "this machine".to_string(),
        many => many.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
    };
    Some(format!("servers on {}, load from {clients}", roles.server))
}

/// The probe itself: `stack`'s hello and its A/A twin in blocks of short slices, on the run's
/// hosts when given (else here).
fn measure(
    root: &Path,
    stack: &Stack,
    settings: &LoadSettings,
    mut hosts: Option<&mut RunHosts>,
    cancel: &AtomicBool,
) -> Result<NoiseFloor, LabError> {
    let variant = stack
        .variants_for(Scenario::Hello)
        .into_iter()
        .next()
        .ok_or_else(|| LabError::Selection(format!("{} has no hello variant", stack.name)))?;
    let main = Cell { stack, scenario: Scenario::Hello, variant, workers: 1, twin: false, soak: None, ramp: None };
    let twin = Cell { twin: true, ..main.clone() };
    let probe_settings = LoadSettings {
        duration: SLICE,
        warmup: WARMUP,
        trials: BLOCKS,
        launches: Some(1),
        ceiling: false,
        // An at-once run's floor is measured at once: its pairs are that schedule's.
        schedule: floor_schedule(settings.schedule),
        precision: None,
        budget: None,
        server_cpus: settings.server_cpus.clone(),
        client_cpus: settings.client_cpus.clone(),
        ..LoadSettings::default()
    };
    let run = new_run(root, "noise-probe", serde_json::Value::Null);
    let ws = Workspace::create(&run.id, false)?;
    let mut sink = MemorySink::default();
    let mut quiet = |_: crate::run::Event<'_>| {};
    let mut outcome = RunOutcome { verifications: Vec::new(), trials_stored: 0, failed_cells: Vec::new(), interrupted: false };
    let measured = {
        let mut lab = ws.lab(root, None, probe_settings, &mut sink, &mut quiet, cancel);
        if let Some(h) = hosts.as_deref_mut() {
            lab = lab.with_hosts(std::mem::replace(h, RunHosts::local()));
        }
        let measured = lab.measure_blocks(&run, &[&main, &twin], &mut outcome);
        if let Some(h) = hosts {
            *h = std::mem::replace(&mut lab.hosts, RunHosts::local());
        }
        measured
    };
    ws.finish(false, &mut quiet);
    measured.map_err(|e| LabError::Sink(format!("{e:#}")))?;
    if let Some((cell, why)) = outcome.failed_cells.first() {
        return Err(LabError::Selection(format!("the noise probe's {} failed: {why}", cell.label())));
    }
    floor_of(&stack.name, &sink, &main.key(), &twin.key())
}

/// The floor from the probe's stored slices.
fn floor_of(
    stack: &str,
    sink: &MemorySink,
    main: &bakeoff_model::results::CellKey,
    twin: &bakeoff_model::results::CellKey,
) -> Result<NoiseFloor, LabError> {
    let pairs = pairs_between(&sink.trials, twin, main, Metric::RequestsPerSec, 0);
    let aa = paired_ratio(&pairs).ok_or_else(|| LabError::Selection("the noise probe measured no pair of slices".into()))?;
    let logs = |key| -> Vec<f64> {
        sink.trials.iter().filter(|t| &t.cell == key).map(|t| Metric::RequestsPerSec.of(t, 0)).filter(|v| *v > 0.0).map(f64::ln).collect()
    };
    let spread = (robust_sigma(&logs(main)) + robust_sigma(&logs(twin))) / 2.0;
    Ok(NoiseFloor {
        stack: stack.to_string(),
        measured_at: bakeoff_model::now_rfc3339(),
        aa,
        minutes: minutes_spent(&sink.trials, &[main, twin]),
        slice_spread: spread,
        site: None,
    })
}

/// The schedule a run's floor is probed on: at once for an at-once run, else in blocks (a trials
/// run's outlook projects each cell's own interval from the blocks' slices).
fn floor_schedule(run: Schedule) -> Schedule {
    if run == Schedule::AtOnce {
        Schedule::AtOnce
    } else {
        Schedule::Blocks
    }
}

/// Where the last probe of this placement and schedule is kept: `<root>/.bakeoff-cache/noise-floor.json`
/// for a run on this machine alone, a file named after the placement's hash for placed roles (their
/// floor is the hosts', not this machine's); an at-once floor has `-at-once` in its name.
fn cache_file(root: &Path, roles: &Roles, schedule: Schedule) -> std::path::PathBuf {
    let placed = if roles.is_local() {
        String::new()
    } else {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(serde_json::to_vec(roles).unwrap_or_default());
        let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        format!("-{hex}")
    };
    let at_once = if floor_schedule(schedule) == Schedule::AtOnce { "-at-once" } else { "" };
    root.join(".bakeoff-cache").join(format!("noise-floor{placed}{at_once}.json"))
}

/// Keeps `floor` for later runs of the same placement and schedule (best effort: a read-only
/// folder only means the next run measures).
pub fn remember(root: &Path, roles: &Roles, schedule: Schedule, floor: &NoiseFloor) {
    if let Ok(text) = serde_json::to_string_pretty(floor) {
        let _ = std::fs::create_dir_all(root.join(".bakeoff-cache"));
        let _ = std::fs::write(cache_file(root, roles, schedule), text);
    }
}

/// The last probe of this placement and schedule, if it was measured within the last six hours.
pub fn recent(root: &Path, roles: &Roles, schedule: Schedule) -> Option<NoiseFloor> {
    let file = cache_file(root, roles, schedule);
    let age = std::fs::metadata(&file).ok()?.modified().ok()?.elapsed().ok()?;
    (age < FRESH).then(|| serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A floor whose slices spread by `spread` and whose A/A pair is ±0.8 × spread over 8 blocks.
    fn floor(spread: f64) -> NoiseFloor {
        let aa = PairedRatio { ratio: 1.0, low: 1.0 - 0.8 * spread, high: 1.0 + 0.8 * spread, confidence: 0.95, blocks: 8, launches: 1 };
        NoiseFloor { stack: "rust/actix".into(), measured_at: String::new(), aa, minutes: 0.25, slice_spread: spread, site: None }
    }

    #[test]
    fn a_ratio_measured_once_projects_to_more_or_fewer_blocks() {
        // The same spread per block: four times the blocks, about half the width.
        let quadrupled = project_ratio_half_width(0.068, (10, 3), 40, None, Schedule::Blocks).unwrap();
        assert!((0.030..0.038).contains(&quadrupled), "{quadrupled}");
        let fewer = project_ratio_half_width(0.068, (10, 3), 8, None, Schedule::Blocks).unwrap();
        assert!(fewer > 0.068 && fewer < 0.09, "{fewer}");
        let same = project_ratio_half_width(0.068, (10, 3), 10, Some(3), Schedule::Blocks).unwrap();
        assert!((same - 0.068).abs() < 1e-9, "{same}");
        assert_eq!(project_ratio_half_width(0.2, (3, 1), 10, None, Schedule::Blocks), None, "three blocks hold no 95% interval");
    }

    #[test]
    fn the_floor_projects_half_widths_and_trials() {
        let f = floor(0.05);
        // ±4% over a quarter minute is ±2% after one minute (half-width × √minutes).
        assert!((f.percent_per_minute() - 2.0).abs() < 1e-9);
        // 2.456 σ / √n: 5% spread over 4 trials is ±6.1%; ±5% needs 7 trials.
        assert!((f.cell_half_width(4) - 0.0614).abs() < 1e-3, "{}", f.cell_half_width(4));
        assert_eq!(f.trials_for(0.05), 7);
        assert!(f.cell_half_width(f.trials_for(0.05)) <= 0.05);
        assert!(f.cell_half_width(f.trials_for(0.05) - 1) > 0.05);
    }

    #[test]
    fn the_outlook_of_the_default_study_follows_the_floor() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let plan = crate::run::plan_run(crate::run::RunRequest { root, ..Default::default() }).unwrap();
        let calm = outlook(&plan, &floor(0.01)).unwrap().expect("the default study has a precision target");
        assert!(calm.fits() && calm.trials_needed == plan.settings.trials, "{calm:?}");
        assert_eq!(calm.needs, Some(calm.planned));
        let noisy = outlook(&plan, &floor(0.15)).unwrap().unwrap();
        assert!(!noisy.fits() && noisy.trials_needed > noisy.trials_possible, "{noisy:?}");
        assert!(noisy.needs.is_none_or(|n| n > noisy.budget.unwrap()), "{noisy:?}");
        assert!(plan.estimate_at(noisy.trials_possible).unwrap() <= noisy.budget.unwrap());
        // Steady slices but a wide A/A pair: the block schedule's paired ratios miss the target
        // that each cell's own median would reach on the trial schedule.
        let mut split = floor(0.01);
        (split.aa.low, split.aa.high) = (0.88, 1.12);
        let blocks = outlook(&plan, &split).unwrap().unwrap();
        assert!(
            !blocks.fits() && (blocks.reaches - split.ratio_half_width(blocks.trials_possible, Schedule::Blocks)).abs() < 1e-12,
            "{blocks:?}"
        );
        let mut trials_plan = plan;
        trials_plan.settings.schedule = Schedule::Trials;
        assert!(outlook(&trials_plan, &split).unwrap().unwrap().fits());
    }

    #[test]
    fn a_paired_ratio_needs_the_blocks_the_aa_pair_projects() {
        // ±4% over 8 blocks of one launch. Six blocks over three launches give a far wider
        // interval than √(8/6) × 4% = 4.6% (the exact interval of six is the range of their
        // Walsh averages): ±5% needs more, and never fewer than six blocks.
        let f = floor(0.05);
        assert!(
            f.ratio_half_width(6, Schedule::Blocks) > 0.04 * (8.0f64 / 6.0).sqrt() * 1.1,
            "{}",
            f.ratio_half_width(6, Schedule::Blocks)
        );
        let n = f.blocks_for(0.05, Schedule::Blocks);
        assert!(n > 6 && f.ratio_half_width(n, Schedule::Blocks) <= 0.05 && f.ratio_half_width(n - 1, Schedule::Blocks) > 0.05, "{n}");
        assert!(f.ratio_half_width(5, Schedule::Blocks).is_infinite() && floor(0.001).blocks_for(0.05, Schedule::Blocks) == 6);
        // Many blocks: the √n law again.
        let (a, b) = (f.ratio_half_width(60, Schedule::Blocks), f.ratio_half_width(120, Schedule::Blocks));
        assert!((a / b - 2f64.sqrt()).abs() < 0.1, "{a} {b}");
    }
}
