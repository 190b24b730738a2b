//! This machine's noise floor in about 25 seconds: two unlike small servers already set up,
//! measured side by side in two launches of short slices in a fresh random order per block, as
//! the block schedule measures a study, and what it implies for a study: the precision its ratios
//! can expect, the time a precision target needs, what a budget reaches. Two copies of one server
//! meet a slow second alike where two different servers do not, so an A/A pair is only a lower
//! bound: the probe pairs different servers, and falls back to an A/A pair (and says so) only where
//! one small stack is set up. Used by `bakeoff doctor` and, before a run with a precision target,
//! by the run.

use crate::error::LabError;
use crate::run::planning::cells::Cell;
use crate::run::planning::plan::RunPlan;
use crate::run::roles::RunHosts;
use crate::run::workspace::{new_run, Workspace};
use crate::run::{LoadSettings, RunOutcome};
use crate::stacks::manifest::Stack;
use crate::stacks::setup::{is_current, SetupJob};
use bakeoff_model::plan::place::Roles;
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::records::results::MemorySink;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::forecast::widest_half_width;
use bakeoff_model::statistics::paired::{minutes_spent, paired_ratio, Components, PairedRatio};
use bakeoff_model::statistics::pairing::pairs_between;
use bakeoff_model::statistics::robust::robust_sigma;
use bakeoff_model::statistics::summary::Metric;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The small servers the probe may use, cheapest to start and to load first.
const CANDIDATES: [&str; 4] = ["rust/actix", "go/fasthttp", "go/nethttp", "rust/hyper"];
/// Blocks of the probe: two slices each (one per server), in two launches of four, so both parts
/// of a paired ratio's variance show: block to block within a launch, launch to launch.
const BLOCKS: u32 = 8;
const LAUNCHES: u32 = 2;
const SLICE: Duration = Duration::from_secs(1);
const WARMUP: Duration = Duration::from_millis(500);
/// z(0.975) times the median's asymptotic standard error over the standard deviation (√(π/2)):
/// a median interval's half-width is about this many σ / √n.
const MEDIAN_HALF_WIDTH_SIGMAS: f64 = 1.96 * 1.2533;
/// How long a probe usually takes: its slices, each arm's warm-up and two starts.
pub const EXPECTED: Duration = Duration::from_secs(25);
/// A probe this recent is reused by a run instead of measuring again.
const FRESH: Duration = Duration::from_secs(6 * 3600);

/// What the probe measured: the paired ratio of its two servers and the spread of single slices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseFloor {
    /// The stack measured (its `hello`, one worker).
    pub stack: String,
    /// The stack it was paired with: another small stack, or the same one again (an A/A pair,
    /// a lower bound on what pairs of different servers vary).
    pub other: String,
    /// When it was measured (RFC 3339).
    pub measured_at: String,
    /// The ratio of the two servers over the blocks of both launches, with its interval and the
    /// variance's parts it shows.
    pub pair: PairedRatio,
    /// Minutes the two arms' slices took, as the report counts an A/A floor's minutes.
    pub minutes: f64,
    /// One slice's requests/s spread relative to its median: the robust σ (1.4826 × MAD) of the
    /// slices' logarithms, the two arms pooled.
    pub slice_spread: f64,
    /// Where the roles were placed when it was measured on hosts ("servers on ssh://..., load
    /// from 2 client hosts"); None for this machine alone.
    #[serde(default)]
    pub site: Option<String>,
    /// The bakeoff executable that measured it (its size and modification time): a floor from
    /// another build (another load generator, another schedule) is not reused.
    #[serde(default)]
    pub binary: String,
}

impl NoiseFloor {
    /// "go/fasthttp vs rust/actix hello over 8 blocks in 2 launches: 0.912 (0.870-0.955), ±4.7% in 0.4 min".
    pub fn summary(&self) -> String {
        let a = &self.pair;
        let what = if self.other == self.stack { format!("{} hello A/A (a lower bound)", self.stack) } else { self.pair_name() };
        format!(
            "{what} over {} blocks in {} launches: {:.3} ({:.3}-{:.3}), ±{:.1}% in {:.1} min",
            a.blocks,
            a.launches,
            a.ratio,
            a.low,
            a.high,
            100.0 * a.relative_half_width(),
            self.minutes
        )
    }

    /// "go/fasthttp vs rust/actix hello": the pair an outlook projects from.
    pub fn pair_name(&self) -> String {
        format!("{} vs {} hello", self.other, self.stack)
    }

    /// The pair's half-width after one minute of measuring, in percent (the report's P).
    pub fn percent_per_minute(&self) -> f64 {
        self.pair.merit(self.minutes)
    }

    /// The half-width (a fraction) a cell's median interval can expect after `trials` slices.
    pub fn cell_half_width(&self, trials: u32) -> f64 {
        MEDIAN_HALF_WIDTH_SIGMAS * self.slice_spread / f64::from(trials.max(1)).sqrt()
    }

    /// The trials a cell needs for a half-width of `target` (a fraction).
    pub fn trials_for(&self, target: f64) -> u32 {
        ((MEDIAN_HALF_WIDTH_SIGMAS * self.slice_spread / target.max(1e-6)).powi(2).ceil() as u32).max(1)
    }

    /// The variance's parts an outlook projects from: the pair's block to block spread, and its
    /// launch to launch spread but never less than the block's (two launches estimate it on one
    /// degree of freedom, and an A/A pair's launches agree better than different servers').
    pub fn components(&self) -> Components {
        let c = self.pair.components;
        Components { block_sd: c.block_sd, launch_sd: c.launch_sd.max(c.block_sd), block_df: c.block_df }
    }
}

/// The half-width (a fraction) a paired ratio with variance parts `components` can expect after
/// `blocks` blocks, spread over launches as a run with `settings` spreads them.
pub fn project(components: Components, blocks: u32, settings: &LoadSettings) -> f64 {
    let plan = crate::run::planning::launches::LaunchPlan::for_blocks(blocks, settings);
    let half = components.expected_half_width(plan.launches, f64::from(plan.blocks) / f64::from(plan.launches));
    half.exp() - 1.0
}

/// The widest half-width (a fraction) `pairs`, each with its variance parts, can expect after
/// `blocks` blocks spread over launches as a run with `settings` spreads them: the median of their
/// widest over simulated runs (`bakeoff_model::statistics::forecast`).
pub fn forecast_widest(pairs: &[Components], blocks: u32, settings: &LoadSettings) -> f64 {
    let plan = crate::run::planning::launches::LaunchPlan::for_blocks(blocks, settings);
    let per_launch = f64::from(plan.blocks) / f64::from(plan.launches.max(1));
    widest_half_width(pairs, plan.launches, per_launch).map_or(f64::INFINITY, |h| h.exp() - 1.0)
}

/// The fewest blocks whose forecast widest half-width is within `target` (a fraction); 240 when
/// none up to there is. The forecast shrinks as blocks grow, so the search halves its range.
pub fn blocks_for(pairs: &[Components], target: f64, settings: &LoadSettings) -> u32 {
    let (mut low, mut high) = (2, 240);
    if forecast_widest(pairs, high, settings) > target {
        return high;
    }
    while low < high {
        let mid = (low + high) / 2;
        if forecast_widest(pairs, mid, settings) <= target {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
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
    /// What the projection rests on: the last run of the study, or the probe's pair.
    pub from: String,
    /// How the run spreads its blocks over launches, and why.
    pub allocation: Option<String>,
}

impl Outlook {
    /// Whether the target is expected within the budget.
    pub fn fits(&self) -> bool {
        self.reaches <= self.target
    }
}

/// The outlook of `plan` on a machine with `floor`; None without a precision target. The widest
/// paired ratio is forecast from each ranked pair's variance parts, pooled over the study's
/// earlier runs where the plan carries them (its own pairs of different servers), else from the
/// probe's pair taken for every ranked pair of the plan.
pub fn outlook(plan: &RunPlan, floor: &NoiseFloor) -> Result<Option<Outlook>, LabError> {
    let s = &plan.settings;
    let Some(target) = s.precision else { return Ok(None) };
    let trials = s.trials;
    let planned = plan.estimate()?;
    let paired = s.schedule.pairs_blocks();
    let (pairs, from) = if s.pair_parts.is_empty() {
        let ranked = ranked_pairs(plan)?.max(1);
        (vec![floor.components(); ranked], format!("{} (taken for each of the {ranked} ranked pairs)", floor.pair_name()))
    } else {
        let n = s.pair_parts.len();
        (s.pair_parts.clone(), format!("this study's earlier runs here ({n} ranked pairs, each one's parts pooled over them)"))
    };
    let half_width = |n: u32| if paired { forecast_widest(&pairs, n, s) } else { floor.cell_half_width(n) };
    let trials_needed = if paired { blocks_for(&pairs, target, s) } else { floor.trials_for(target) }.max(trials);
    let cap = crate::run::schedule::tally::MAX_TRIALS;
    let needs = if trials_needed <= cap { Some(plan.estimate_at(trials_needed)?) } else { None };
    let mut trials_possible = trials;
    if let Some(budget) = s.budget {
        while trials_possible < cap && plan.estimate_at(trials_possible + 1)? <= budget {
            trials_possible += 1;
        }
    } else {
        trials_possible = trials_needed.min(cap);
    }
    let reaches = half_width(trials_possible);
    let allocation = crate::run::planning::launches::LaunchPlan::for_blocks(trials, s).allocation.map(|a| a.why());
    let (budget, schedule) = (s.budget, s.schedule);
    Ok(Some(Outlook { target, trials_needed, needs, planned, budget, trials_possible, reaches, schedule, from, allocation }))
}

/// The ratios the plan ranks: in each scenario, every cell but its best (A/A twins aside).
fn ranked_pairs(plan: &RunPlan) -> Result<usize, LabError> {
    let mut per_scenario = std::collections::BTreeMap::<Scenario, usize>::new();
    for cell in plan.cells()?.iter().filter(|c| !c.twin) {
        *per_scenario.entry(cell.scenario).or_default() += 1;
    }
    Ok(per_scenario.values().map(|n| n.saturating_sub(1)).sum())
}

/// The first two candidate stacks with a `hello` whose setup is current (the probe never
/// builds): the second is the first again where only one is.
fn probe_stacks<'s>(stacks: &'s [Stack], root: &Path) -> Option<(&'s Stack, &'s Stack)> {
    let ready = CANDIDATES.iter().filter_map(|name| {
        let stack = stacks.iter().find(|s| s.name == *name)?;
        let job = SetupJob::for_stack(stack)?;
        (stack.scenarios.contains(&Scenario::Hello) && is_current(&job, root)).then_some(stack)
    });
    two_or_twice(ready)
}

/// The first two of `stacks`, or the first twice.
fn two_or_twice<'s>(mut stacks: impl Iterator<Item = &'s Stack>) -> Option<(&'s Stack, &'s Stack)> {
    let first = stacks.next()?;
    Some((first, stacks.next().unwrap_or(first)))
}

/// Measures the noise floor with the server and client CPUs of `settings` (about 25 s); stops
/// early when `cancel` is set.
pub fn probe(root: &Path, settings: &LoadSettings, cancel: &AtomicBool) -> Result<NoiseFloor, LabError> {
    let catalog = crate::stacks::catalog::discover(&root.join("stacks"));
    let stacks = probe_stacks(&catalog.stacks, root).ok_or_else(|| {
        LabError::Selection(format!(
            "no small stack is set up for the noise probe (one of {})\n  hint: run `bakeoff setup rust/actix` first",
            CANDIDATES.join(", ")
        ))
    })?;
    measure(root, stacks, settings, None, cancel)
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
    let stacks = if hosts.server_host.is_some() {
        two_or_twice(
            CANDIDATES.iter().filter_map(|name| run_stacks.iter().find(|s| s.name == *name && s.scenarios.contains(&Scenario::Hello))),
        )
    } else {
        catalog = crate::stacks::catalog::discover(&root.join("stacks"));
        probe_stacks(&catalog.stacks, root)
    };
    let stacks = stacks.ok_or_else(|| {
        LabError::Selection(format!(
            "the noise probe on the run's hosts needs one of {} among the run's stacks\n  hint: add one to `--stacks` to see the outlook",
            CANDIDATES.join(", ")
        ))
    })?;
    let mut floor = measure(root, stacks, settings, Some(hosts), cancel)?;
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

/// The probe itself: the two stacks' hello (or one's and its A/A twin, where they are the same)
/// in blocks of short slices over two launches, on the run's hosts when given (else here).
fn measure(
    root: &Path,
    (stack, other_stack): (&Stack, &Stack),
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
    let other = match other_stack.variants_for(Scenario::Hello).into_iter().next() {
        Some(variant) if other_stack.name != stack.name => Cell { stack: other_stack, variant, ..main.clone() },
        _ => Cell { twin: true, ..main.clone() },
    };
    let probe_settings = LoadSettings {
        duration: SLICE,
        warmup: WARMUP,
        trials: BLOCKS,
        launches: Some(LAUNCHES),
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
        let measured = lab.blocks().measure(&run, &[&main, &other], &mut outcome);
        if let Some(h) = hosts {
            *h = std::mem::replace(&mut lab.bench.place.hosts, RunHosts::local());
        }
        measured
    };
    ws.finish(false, &mut quiet);
    measured.map_err(|e| LabError::Sink(format!("{e:#}")))?;
    if let Some((cell, why)) = outcome.failed_cells.first() {
        return Err(LabError::Selection(format!("the noise probe's {} failed: {why}", cell.label())));
    }
    floor_of((&stack.name, &other.stack.name), &sink, &main.key(), &other.key())
}

/// The floor from the probe's stored slices.
fn floor_of(
    (stack, other): (&str, &str),
    sink: &MemorySink,
    main: &bakeoff_model::records::results::CellKey,
    twin: &bakeoff_model::records::results::CellKey,
) -> Result<NoiseFloor, LabError> {
    let pairs = pairs_between(&sink.trials, twin, main, Metric::RequestsPerSec, 0);
    let pair = paired_ratio(&pairs).ok_or_else(|| LabError::Selection("the noise probe measured no pair of slices".into()))?;
    let logs = |key| -> Vec<f64> {
        sink.trials.iter().filter(|t| &t.cell == key).map(|t| Metric::RequestsPerSec.of(t, 0)).filter(|v| *v > 0.0).map(f64::ln).collect()
    };
    let spread = (robust_sigma(&logs(main)) + robust_sigma(&logs(twin))) / 2.0;
    Ok(NoiseFloor {
        stack: stack.to_string(),
        other: other.to_string(),
        measured_at: bakeoff_model::now_rfc3339(),
        pair,
        minutes: minutes_spent(&sink.trials, &[main, twin]),
        slice_spread: spread,
        site: None,
        binary: binary_identity(),
    })
}

/// This executable's size and modification time: what tells one build of bakeoff from another
/// without a version bump (every build of a checkout says 0.1.0).
fn binary_identity() -> String {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    let modified = meta.as_ref().ok().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    match (meta.as_ref().ok().map(|m| m.len()), modified) {
        (Some(len), Some(t)) => format!("{len}:{}.{:09}", t.as_secs(), t.subsec_nanos()),
        _ => String::new(),
    }
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

/// The last probe of this placement and schedule, if this build of bakeoff measured it within the
/// last six hours.
pub fn recent(root: &Path, roles: &Roles, schedule: Schedule) -> Option<NoiseFloor> {
    let file = cache_file(root, roles, schedule);
    let age = std::fs::metadata(&file).ok()?.modified().ok()?.elapsed().ok()?;
    let floor: NoiseFloor = (age < FRESH).then(|| serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()).flatten()?;
    (floor.binary == binary_identity()).then_some(floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::statistics::paired::{IntervalBasis, Pair};

    /// A floor whose slices spread by `spread` and whose pair shows these variance parts.
    fn floor(spread: f64, components: Components) -> NoiseFloor {
        let pair = PairedRatio {
            ratio: 1.0,
            low: 0.98,
            high: 1.02,
            confidence: 0.95,
            blocks: 8,
            launches: 2,
            basis: IntervalBasis::Launches,
            components,
        };
        NoiseFloor {
            stack: "rust/actix".into(),
            other: "go/fasthttp".into(),
            measured_at: String::new(),
            pair,
            minutes: 0.25,
            slice_spread: spread,
            site: None,
            binary: binary_identity(),
        }
    }

    fn quick() -> RunPlan {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        crate::run::plan_run(crate::run::RunRequest { root, ..Default::default() }).unwrap()
    }

    #[test]
    fn a_kept_floor_is_reused_by_the_build_that_measured_it_only() {
        let root = std::env::temp_dir().join(format!("bakeoff-floor-cache-{}", std::process::id()));
        let roles = Roles::default();
        let kept = floor(0.05, Components::default());
        remember(&root, &roles, Schedule::Blocks, &kept);
        assert_eq!(recent(&root, &roles, Schedule::Blocks).map(|f| f.slice_spread), Some(0.05));
        // The same file written by another build of bakeoff is measured again.
        let other = NoiseFloor { binary: "1234:5.000000000".into(), ..kept };
        remember(&root, &roles, Schedule::Blocks, &other);
        assert!(recent(&root, &roles, Schedule::Blocks).is_none());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_floor_projects_half_widths_and_trials() {
        let f = floor(0.05, Components::default());
        // ±2% over a quarter minute is ±1% after one minute (half-width × √minutes).
        assert!((f.percent_per_minute() - 1.0).abs() < 1e-9);
        // 2.456 σ / √n: 5% spread over 4 trials is ±6.1%; ±5% needs 7 trials.
        assert!((f.cell_half_width(4) - 0.0614).abs() < 1e-3, "{}", f.cell_half_width(4));
        assert_eq!(f.trials_for(0.05), 7);
    }

    #[test]
    fn launches_never_count_as_steadier_than_blocks_in_an_outlook() {
        let f = floor(0.05, Components { block_sd: 0.02, launch_sd: 0.001, block_df: 0 });
        assert_eq!(f.components(), Components { block_sd: 0.02, launch_sd: 0.02, block_df: 0 });
        let varying = floor(0.05, Components { block_sd: 0.02, launch_sd: 0.05, block_df: 0 });
        assert_eq!(varying.components().launch_sd, 0.05);
    }

    #[test]
    fn a_projection_matches_what_simulated_runs_of_that_design_reach() {
        // Blocks drawn with both parts, through the same interval the report prints: the
        // projection is the median half-width, within 15%.
        let c = Components { block_sd: 0.015, launch_sd: 0.03, block_df: 0 };
        let s = quick().settings;
        let plan = crate::run::planning::launches::LaunchPlan::for_blocks(8, &s);
        let mut rng = bakeoff_model::rng::SplitMix64(7);
        let mut widths: Vec<f64> = (0..401)
            .map(|_| {
                let pairs: Vec<Pair> = (0..plan.launches)
                    .flat_map(|l| {
                        let level = c.launch_sd * bakeoff_model::rng::standard_normal(&mut rng);
                        let n = plan.blocks_in(l);
                        (0..n)
                            .map(|_| Pair { launch: l, log_ratio: level + c.block_sd * bakeoff_model::rng::standard_normal(&mut rng) })
                            .collect::<Vec<_>>()
                    })
                    .collect();
                paired_ratio(&pairs).unwrap().relative_half_width()
            })
            .collect();
        widths.sort_by(f64::total_cmp);
        let (median, projected) = (widths[200], project(c, 8, &s));
        assert!((projected / median - 1.0).abs() < 0.15, "projected {projected}, simulated median {median}");
    }

    #[test]
    fn the_outlook_of_the_default_study_follows_the_pairs_parts() {
        let plan = quick();
        let calm = outlook(&plan, &floor(0.01, Components { block_sd: 0.004, launch_sd: 0.002, block_df: 0 }))
            .unwrap()
            .expect("a precision target");
        assert!(calm.fits() && calm.trials_needed == plan.settings.trials, "{calm:?}");
        assert!(calm.from.contains("go/fasthttp vs rust/actix"), "{}", calm.from);
        let noisy = outlook(&plan, &floor(0.15, Components { block_sd: 0.06, launch_sd: 0.06, block_df: 0 })).unwrap().unwrap();
        assert!(!noisy.fits() && noisy.trials_needed > noisy.trials_possible, "{noisy:?}");
        assert!(plan.estimate_at(noisy.trials_possible).unwrap() <= noisy.budget.unwrap());
        // The earlier runs' own pairs win over the probe's.
        let mut own = quick();
        let loud = Components { block_sd: 0.06, launch_sd: 0.06, block_df: 0 };
        own.settings.pair_parts = vec![loud, Components { block_sd: 0.01, launch_sd: 0.01, block_df: 0 }];
        own.settings.components = Some(loud);
        let o = outlook(&own, &floor(0.01, Components { block_sd: 0.004, launch_sd: 0.002, block_df: 0 })).unwrap().unwrap();
        assert!(!o.fits() && o.from.contains("earlier runs") && o.from.contains("2 ranked pairs"), "{o:?}");
        assert!(o.allocation.is_some_and(|a| a.contains("launches of")));
    }

    #[test]
    fn the_probes_pair_stands_for_every_ranked_pair_of_the_plan() {
        // The default study ranks two ratios in each of its three scenarios: the widest of six
        // alike pairs is wider than one pair's expectation.
        let plan = quick();
        let c = Components { block_sd: 0.02, launch_sd: 0.02, block_df: 0 };
        let o = outlook(&plan, &floor(0.02, c)).unwrap().unwrap();
        assert!(o.from.contains("each of the 6 ranked pairs"), "{}", o.from);
        let one = project(c, o.trials_possible, &plan.settings);
        assert!(o.reaches > 1.1 * one, "widest {} vs one pair {one}", o.reaches);
    }

    #[test]
    fn more_blocks_are_needed_for_a_tighter_target_and_many_blocks_follow_the_root_law() {
        let s = quick().settings;
        let c = [Components { block_sd: 0.02, launch_sd: 0.02, block_df: 0 }];
        let n = blocks_for(&c, 0.02, &s);
        assert!(forecast_widest(&c, n, &s) <= 0.02 && forecast_widest(&c, n - 1, &s) > 0.02, "{n}");
        assert!(blocks_for(&c, 0.01, &s) > n);
        let (a, b) = (forecast_widest(&c, 60, &s), forecast_widest(&c, 120, &s));
        assert!((a / b - 2f64.sqrt()).abs() < 0.15, "{a} {b}");
        // One pair's forecast is its closed-form projection.
        assert!((forecast_widest(&c, 12, &s) / project(c[0], 12, &s) - 1.0).abs() < 0.03);
    }
}
