//! How often the paired intervals a report prints really hold the true ratio: runs simulated from
//! fitted variance components (blocks, launches, joint slices, slow episodes, a server that
//! cannot use its share), each chosen and estimated by the product's own rule and interval.
//!
//! An interval that claims 95% is only worth printing if about 95 runs in 100 catch the truth, so
//! the simulation goes through `joint_rule`, `choose_pairs` and `paired_ratio` unchanged rather
//! than a copy of them: what is measured is what ships.

use crate::records::metric::Metric;
use crate::rng::{standard_normal, SplitMix64};
use crate::statistics::design::Allocation;
use crate::statistics::paired::{paired_ratio, Pair, PairedRatio, PAIRED_CONFIDENCE};
use crate::statistics::pairing::{choose_pairs, joint_rule, CpuUse, PairChoice, SoloBecause};
use statrs::distribution::{Beta, ContinuousCDF};

/// Relative noise (uniform, ±) on each measured part of a joint slice's CPU time.
const SHARE_NOISE: f64 = 0.03;
/// Noise (uniform, ±) on the cores a server uses alone, around the one CPU it has.
const CORES_NOISE: f64 = 0.02;

/// What a simulated run of one pair of cells is drawn from: its design and the variance parts a
/// run of the study showed, as log ratios (0.015 is about 1.5%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// Blocks in the run.
    pub blocks: u32,
    /// Server launches the blocks are spread over, as evenly as they divide (the first launches
    /// take the remainder).
    pub launches: u32,
    /// Standard deviation of a solo pair's log ratio about its launch's level.
    pub block_sd: f64,
    /// Standard deviation of a launch's offset of the log ratio; the solo and joint slices of one
    /// launch share it, since both run on the servers that launch started.
    pub launch_sd: f64,
    /// Standard deviation of a joint pair's log ratio about its launch's level: smaller than
    /// `block_sd`, because the cells meet the machine's slow stretches in the same second.
    pub joint_block_sd: f64,
    /// Probability that a block's solo slices meet a slow episode of the machine.
    pub episode_rate: f64,
    /// Extra shift (either sign, equally likely) of the solo log ratio in a block with an
    /// episode: two unlike servers answer a slow second differently, and solo slices do not meet
    /// it at the same time. The joint slices share the second, so it cancels there.
    pub episode_effect: f64,
    /// The true solo log ratio, ln(cell / reference): what a printed interval ought to hold.
    pub true_log_ratio: f64,
    /// Log bias of the joint pairs against the solo ratio: a server that cannot use its share of
    /// the joint slice answers less there than its solo slice says. 0 for servers that can.
    pub joint_bias: f64,
    /// By what fraction the cell's measured part of the joint slice's CPU time falls short of
    /// 1 / `cells`: the trace a server that cannot use its share leaves for the rule to read.
    pub share_deficit: f64,
    /// Cells sharing each joint slice; under 2 the run had no joint slices (the trial schedule,
    /// or a lab that cannot share the CPUs evenly) and the solo slices carry every ratio.
    pub cells: u32,
    /// The two cells are different servers (`pairing::one_server` false): the rule never lets
    /// their joint slices carry the ratio, whatever their shares.
    pub unlike: bool,
}

impl Setting {
    /// A run of `blocks` blocks in `launches` launches with the given solo block and launch parts,
    /// joint slices of three cells a third as noisy as the solo ones, no episodes, no bias, and
    /// no true difference.
    pub fn new(blocks: u32, launches: u32, block_sd: f64, launch_sd: f64) -> Setting {
        Setting {
            blocks,
            launches,
            block_sd,
            launch_sd,
            joint_block_sd: block_sd / 3.0,
            episode_rate: 0.0,
            episode_effect: 0.0,
            true_log_ratio: 0.0,
            joint_bias: 0.0,
            share_deficit: 0.0,
            cells: 3,
            unlike: false,
        }
    }

    /// The design in words: "8 blocks in 2 launches".
    pub fn design(&self) -> String {
        format!("{} blocks in {} launches", self.blocks, self.launches)
    }

    /// The launch each block runs in: blocks spread as evenly as they divide, the first launches
    /// one more where they do not.
    fn launch_of_blocks(&self) -> Vec<u32> {
        let launches = self.launches.clamp(1, self.blocks.max(1));
        let (each, extra) = (self.blocks / launches, self.blocks % launches);
        let long = extra * (each + 1);
        (0..self.blocks).map(|b| if b < long { b / (each + 1) } else { extra + (b - long) / each }).collect()
    }
}

/// One simulated run of a pair of cells: what its blocks measured, what the rule read, which
/// pairs it chose and the interval the report would print.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedRun {
    /// The solo slices' pair of each block.
    pub solo: Vec<Pair>,
    /// The joint slices' pair of each block (none without joint slices).
    pub joint: Vec<Pair>,
    /// The cell's CPU use in each block, as the rule reads it.
    pub cell_use: Vec<CpuUse>,
    /// The reference's CPU use in each block.
    pub reference_use: Vec<CpuUse>,
    /// The pairs the rule chose and why.
    pub choice: PairChoice,
    /// The paired ratio of the chosen pairs: what the report prints.
    pub ratio: Option<PairedRatio>,
}

/// Draws one run of `setting` and puts it through the product's rule and interval.
pub fn simulate_run(setting: &Setting, rng: &mut SplitMix64) -> SimulatedRun {
    let launch_of = setting.launch_of_blocks();
    let offsets: Vec<f64> = (0..setting.launches.max(1)).map(|_| setting.launch_sd * standard_normal(rng)).collect();
    let has_joint = setting.cells >= 2;
    let equal = if has_joint { 1.0 / f64::from(setting.cells) } else { 0.0 };
    let (mut solo, mut joint) = (Vec::new(), Vec::new());
    let (mut cell_use, mut reference_use) = (Vec::new(), Vec::new());
    for &launch in &launch_of {
        let level = setting.true_log_ratio + offsets[launch as usize];
        let episode = if uniform(rng) < setting.episode_rate { sign(rng) * setting.episode_effect } else { 0.0 };
        solo.push(Pair { launch, log_ratio: level + setting.block_sd * standard_normal(rng) + episode });
        let used = |deficit: f64, rng: &mut SplitMix64| CpuUse {
            solo_cores: 1.0 + CORES_NOISE * (2.0 * uniform(rng) - 1.0),
            joint_share: has_joint.then(|| equal * (1.0 - deficit) * (1.0 + SHARE_NOISE * (2.0 * uniform(rng) - 1.0))),
            cells: if has_joint { setting.cells } else { 0 },
        };
        cell_use.push(used(setting.share_deficit, rng));
        reference_use.push(used(0.0, rng));
        if has_joint {
            let log_ratio = level + setting.joint_bias + setting.joint_block_sd * standard_normal(rng);
            joint.push(Pair { launch, log_ratio });
        }
    }
    let rule = if setting.unlike { Err(SoloBecause::UnlikeServers) } else { joint_rule(&cell_use, &reference_use, Metric::RequestsPerSec) };
    let choice = choose_pairs(solo.clone(), joint.clone(), rule);
    let ratio = paired_ratio(&choice.pairs);
    SimulatedRun { solo, joint, cell_use, reference_use, choice, ratio }
}

/// A uniform draw in [0, 1).
fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// +1 or -1, equally likely.
fn sign(rng: &mut SplitMix64) -> f64 {
    if rng.next_u64() & 1 == 0 {
        1.0
    } else {
        -1.0
    }
}

/// How the printed intervals of many simulated runs of one setting fared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// Runs simulated.
    pub repeats: u32,
    /// Runs whose printed interval held the true solo ratio.
    pub covered: u32,
    /// Runs whose printed interval excluded 1.0: a difference the report would call found.
    pub excluded_one: u32,
    /// Median of the intervals' relative half-widths (a fraction; the "±x%" a report states).
    pub median_half_width: f64,
}

impl Coverage {
    /// The share of runs whose interval held the truth (NaN without a run).
    pub fn rate(&self) -> f64 {
        f64::from(self.covered) / f64::from(self.repeats)
    }

    /// The share of runs whose interval excluded 1.0 (NaN without a run).
    pub fn excluded_rate(&self) -> f64 {
        f64::from(self.excluded_one) / f64::from(self.repeats)
    }

    /// The exact (Clopper-Pearson) binomial interval of the coverage at `confidence`: the
    /// simulation's own uncertainty, so a shortfall is told from the luck of the draws.
    pub fn clopper_pearson(&self, confidence: f64) -> (f64, f64) {
        let (x, n) = (f64::from(self.covered), f64::from(self.repeats));
        let alpha = 1.0 - confidence;
        // Beta quantiles are the exact bounds: P(X >= x | p_low) = alpha/2 and
        // P(X <= x | p_high) = alpha/2. At x = 0 or x = n the bound on that side is the end of [0, 1].
        let quantile = |a: f64, b: f64, p: f64| Beta::new(a, b).map_or(f64::NAN, |d| d.inverse_cdf(p));
        let low = if self.covered == 0 { 0.0 } else { quantile(x, n - x + 1.0, alpha / 2.0) };
        let high = if self.covered >= self.repeats { 1.0 } else { quantile(x + 1.0, n - x, 1.0 - alpha / 2.0) };
        (low, high)
    }
}

/// The coverage of `repeats` simulated runs of `setting`, drawn from `seed`. A run that printed
/// no interval counts as not covered. "Covered" means the printed interval holds the true solo
/// ratio: a joint bias that reaches the interval is an error, not a second truth.
pub fn coverage(setting: &Setting, repeats: u32, seed: u64) -> Coverage {
    let mut rng = SplitMix64(seed);
    let truth = setting.true_log_ratio.exp();
    let (mut covered, mut excluded_one) = (0, 0);
    let mut widths = Vec::with_capacity(repeats as usize);
    for _ in 0..repeats {
        let Some(r) = simulate_run(setting, &mut rng).ratio else { continue };
        covered += u32::from(r.low <= truth && truth <= r.high);
        excluded_one += u32::from(!r.within_noise());
        widths.push(r.relative_half_width());
    }
    widths.sort_by(f64::total_cmp);
    let median_half_width = match widths.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => widths[n / 2],
        n => (widths[n / 2 - 1] + widths[n / 2]) / 2.0,
    };
    Coverage { repeats, covered, excluded_one, median_half_width }
}

/// Solo block-to-block spread of the default study's pairs of unlike servers.
const BLOCK_SD: f64 = 0.015;

/// The settings coverage is measured on: the default study's design and designs like the seed
/// runs', each with launches as steady as blocks or up to twice as varied, with joint slices
/// carrying the ratio, with solo slices only, and with solo slices that meet slow episodes; a
/// server that cannot use its share; and a pair of unlike servers whose joint slices are much
/// tighter than their solo ones and off their solo ratio (as measured here: 6% to 16%), which the
/// rule keeps on their solo slices.
pub fn grid() -> Vec<(String, Setting)> {
    let default_launches = Allocation::choose(8, None, 2.0, 1.25).launches;
    let designs = [(8, default_launches), (6, 3), (12, 4), (20, 5)];
    let mut rows = Vec::new();
    for (blocks, launches) in designs {
        for times in [0.0, 0.5, 1.0, 2.0] {
            let base = Setting { episode_rate: 0.1, episode_effect: 0.05, ..Setting::new(blocks, launches, BLOCK_SD, times * BLOCK_SD) };
            let tag = format!("{blocks}/{launches} launch {times}x");
            rows.push((format!("{tag} joint"), base));
            rows.push((format!("{tag} solo"), Setting { cells: 1, episode_rate: 0.0, episode_effect: 0.0, ..base }));
            rows.push((format!("{tag} solo+episodes"), Setting { cells: 1, ..base }));
        }
    }
    let default = Setting::new(8, default_launches, BLOCK_SD, 2.0 * BLOCK_SD);
    rows.push(("cannot use its share".into(), Setting { joint_bias: 0.02, share_deficit: 0.3, ..default }));
    rows.push((
        "cannot use its share+episodes".into(),
        Setting { joint_bias: 0.02, share_deficit: 0.3, episode_rate: 0.1, episode_effect: 0.05, ..default },
    ));
    rows.push((
        "unlike pair, tight joint 6% off".into(),
        Setting {
            block_sd: 0.04,
            joint_block_sd: 0.008,
            joint_bias: 0.06,
            episode_rate: 0.2,
            episode_effect: 0.05,
            unlike: true,
            ..default
        },
    ));
    rows
}

/// One line per setting of `rows`: its name, design, coverage of `repeats` runs (drawn from
/// `seed`) with its Clopper-Pearson 95% bounds, the median half-width and the share of intervals
/// that excluded 1.
pub fn table(rows: &[(String, Setting)], repeats: u32, seed: u64) -> String {
    let name_width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(7);
    let mut out = format!(
        "{:<name_width$}  {:<24}  {:>8}  {:>15}  {:>8}  {:>9}\n",
        "setting", "design", "coverage", "95% bounds", "±median", "excl. 1"
    );
    for (name, setting) in rows {
        let c = coverage(setting, repeats, seed);
        let (low, high) = c.clopper_pearson(PAIRED_CONFIDENCE);
        out += &format!(
            "{name:<name_width$}  {:<24}  {:>7.1}%  {:>6.1}%–{:>6.1}%  {:>7.2}%  {:>8.1}%\n",
            setting.design(),
            100.0 * c.rate(),
            100.0 * low,
            100.0 * high,
            100.0 * c.median_half_width,
            100.0 * c.excluded_rate()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statistics::pairing::PairSource;

    const REPEATS: u32 = 2000;

    fn default_design(launch_sd: f64) -> Setting {
        Setting::new(8, Allocation::choose(8, None, 2.0, 1.25).launches, BLOCK_SD, launch_sd)
    }

    fn assert_covers(setting: &Setting, seed: u64) -> Coverage {
        let c = coverage(setting, REPEATS, seed);
        let (low, _) = c.clopper_pearson(0.95);
        assert!(c.rate() >= 0.93 && low >= 0.92, "coverage {:.4} (95% bounds from {low:.4}) of {setting:?}", c.rate());
        c
    }

    #[test]
    fn the_default_design_covers_where_launches_vary_twice_as_much_as_blocks() {
        assert_covers(&default_design(2.0 * BLOCK_SD), 11);
    }

    #[test]
    fn the_default_design_covers_with_steady_launches_and_with_launches_as_varied_as_blocks() {
        assert_covers(&default_design(0.0), 12);
        assert_covers(&default_design(BLOCK_SD), 13);
    }

    #[test]
    fn a_server_that_cannot_use_its_share_sends_the_ratio_to_the_solo_slices_and_it_still_covers() {
        let setting = Setting { joint_bias: 0.03, share_deficit: 0.3, ..default_design(BLOCK_SD) };
        let mut rng = SplitMix64(14);
        let solo = (0..200).filter(|_| simulate_run(&setting, &mut rng).choice.source == PairSource::Solo).count();
        assert_eq!(solo, 200, "the rule let a biased joint slice carry the ratio");
        assert_covers(&setting, 15);
    }

    #[test]
    fn unlike_servers_whose_joint_ratio_is_off_pair_on_their_solo_slices_and_cover() {
        // Joint slices five times as tight as the solo ones but 6% off the solo ratio, as two
        // different servers loaded at once were here: read, they would cover almost never.
        let setting = Setting { block_sd: 0.03, joint_block_sd: 0.006, joint_bias: 0.06, unlike: true, ..default_design(BLOCK_SD) };
        let mut rng = SplitMix64(17);
        assert!((0..200).all(|_| simulate_run(&setting, &mut rng).choice.source == PairSource::Solo));
        assert_covers(&setting, 18);
        let trusted = coverage(&Setting { unlike: false, ..setting }, REPEATS, 19);
        assert!(trusted.rate() < 0.5, "the joint slices of unlike servers would have covered {:.3}", trusted.rate());
    }

    #[test]
    fn a_planted_five_percent_difference_is_found() {
        let setting = Setting { true_log_ratio: 0.95f64.ln(), ..Setting::new(12, 4, BLOCK_SD, BLOCK_SD) };
        let c = coverage(&setting, REPEATS, 16);
        assert!(c.excluded_rate() >= 0.8, "found in {:.3} of runs", c.excluded_rate());
    }

    #[test]
    fn blocks_spread_evenly_over_launches_the_first_taking_the_remainder() {
        assert_eq!(Setting::new(10, 4, BLOCK_SD, 0.0).launch_of_blocks(), [0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
        assert_eq!(Setting::new(3, 5, BLOCK_SD, 0.0).launch_of_blocks(), [0, 1, 2]);
    }

    #[test]
    fn clopper_pearson_matches_the_exact_binomial_interval() {
        let of = |covered| Coverage { repeats: 30, covered, excluded_one: 0, median_half_width: 0.0 };
        let (low, high) = of(27).clopper_pearson(0.95);
        assert!((low - 0.735).abs() < 0.005 && (high - 0.979).abs() < 0.005, "({low}, {high})");
        let (low, high) = of(30).clopper_pearson(0.95);
        assert_eq!(high, 1.0);
        assert!((low - 0.884).abs() < 0.005, "{low}");
        assert_eq!(of(0).clopper_pearson(0.95).0, 0.0);
    }
}
