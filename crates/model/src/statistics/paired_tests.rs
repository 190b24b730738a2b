//! Tests of the paired statistics against values from their textbook definitions.

use super::*;

#[test]
fn signed_rank_distribution_matches_its_known_critical_values() {
    // Two-sided 5% critical values of the signed-rank statistic (Wilcoxon's table): n=10 -> 8,
    // n=20 -> 52, n=30 -> 137.
    for (n, critical) in [(10usize, 8usize), (20, 52), (30, 137)] {
        let cdf = signed_rank_cdf(n);
        assert!(cdf[critical] <= 0.025 && cdf[critical + 1] > 0.025, "n={n}: P(T<={critical})={}", cdf[critical]);
    }
    // The distribution sums to one and is symmetric.
    let cdf = signed_rank_cdf(7);
    assert!((cdf.last().unwrap() - 1.0).abs() < 1e-12);
    assert!((cdf[0] - 1.0 / 128.0).abs() < 1e-15);
}

#[test]
fn hodges_lehmann_is_the_median_of_walsh_averages() {
    // Walsh averages of [1, 2, 10]: 1, 1.5, 2, 5.5, 6, 10 -> median (2 + 5.5) / 2.
    assert_eq!(hodges_lehmann(&[1.0, 2.0, 10.0]), Some(3.75));
    assert_eq!(hodges_lehmann(&[]), None);
    // One wild value moves it far less than the mean.
    let hl = hodges_lehmann(&[0.0, 0.01, -0.01, 0.02, -0.02, 0.0, 5.0]).unwrap();
    assert!(hl.abs() < 0.02, "{hl}");
}

#[test]
fn the_interval_of_ten_values_cuts_eight_walsh_averages_from_each_end() {
    let values: Vec<f64> = (1..=10).map(|i| i as f64).collect();
    let walsh = walsh_averages(&values);
    let (low, high, coverage) = signed_rank_interval(&values, 0.95);
    assert_eq!((low, high), (walsh[8], walsh[46]));
    assert!((0.95..0.96).contains(&coverage), "{coverage}");
}

#[test]
fn too_few_blocks_give_the_range_and_say_what_it_covers() {
    let (low, high, coverage) = signed_rank_interval(&[0.1, 0.3, 0.2], 0.95);
    assert_eq!((low, high), (0.1, 0.3));
    assert!((coverage - 0.75).abs() < 1e-12, "1 - 2/8: {coverage}");
}

#[test]
fn the_normal_approximation_joins_the_exact_interval_smoothly() {
    // At n = 60 the exact cut and the normal one differ by at most a couple of ranks.
    let n = 60usize;
    let m = n * (n + 1) / 2;
    let cdf = signed_rank_cdf(n);
    let exact = cdf.iter().take_while(|&&p| p <= 0.025).count() - 1;
    let nf = n as f64;
    let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    let normal = (m as f64 / 2.0 - normal_quantile(0.975) * sd).floor() as usize;
    assert!(exact.abs_diff(normal) <= 2, "exact {exact}, normal {normal}");
}

#[test]
fn normal_quantiles_match_the_table() {
    for (p, z) in [(0.975, 1.959_963_985), (0.5, 0.0), (0.9, 1.281_551_566), (0.001, -3.090_232_306)] {
        assert!((normal_quantile(p) - z).abs() < 1e-8, "{p}: {}", normal_quantile(p));
    }
}

/// Two identical cells that share a slow stretch: the ratio is 1 and the interval holds it.
#[test]
fn a_shared_slow_stretch_cancels_in_the_paired_ratio() {
    let machine = [100.0, 98.0, 70.0, 99.0, 101.0, 69.0, 100.0, 102.0, 97.0, 100.0];
    let noise = [1.01, 0.99, 1.0, 1.005, 0.995, 1.0, 1.01, 0.99, 1.0, 1.0];
    let pairs: Vec<Pair> = machine.iter().zip(noise).filter_map(|(m, e)| Pair::of(0, m * e, *m)).collect();
    let r = paired_ratio(&pairs).unwrap();
    assert!(r.within_noise(), "{r:?}");
    assert!(r.relative_half_width() < 0.01, "the 30% slow blocks are gone from the pairs: {r:?}");
    assert_eq!((r.blocks, r.launches), (10, 1));
}

#[test]
fn a_five_percent_slower_cell_is_found_slower() {
    let pairs: Vec<Pair> = (0..12).filter_map(|i| Pair::of(i / 4, 95.0 + (i % 3) as f64 * 0.5, 100.0 + (i % 2) as f64 * 0.4)).collect();
    let r = paired_ratio(&pairs).unwrap();
    assert!(r.high < 1.0 && !r.within_noise(), "{r:?}");
    assert!((r.ratio - 0.955).abs() < 0.01, "{r:?}");
    assert_eq!(r.launches, 3);
}

#[test]
fn launches_that_disagree_widen_the_interval_to_students_t_over_their_estimates() {
    // Within each launch the blocks agree closely; the launches sit 6% apart.
    let mut pairs = Vec::new();
    for (launch, level) in [(0u32, 0.0f64), (1, 0.06), (2, -0.03)] {
        for i in 0..8 {
            pairs.push(Pair { launch, log_ratio: level + 0.002 * (i % 3) as f64 });
        }
    }
    let pooled: Vec<f64> = pairs.iter().map(|p| p.log_ratio).collect();
    let (low, high, _) = signed_rank_interval(&pooled, 0.95);
    let r = paired_ratio(&pairs).unwrap();
    assert!(r.high.ln() - r.low.ln() > 3.0 * (high - low), "three launches, not 24 blocks: {r:?} vs ({low}, {high})");
    // By hand: the launches' estimates are 0.002, 0.062, -0.028; their mean 0.012, sd 0.04583,
    // t(2) = 4.3027: half-width 0.1138.
    assert!((r.ratio.ln() - 0.012).abs() < 1e-9, "{r:?}");
    assert!(((r.high.ln() - r.low.ln()) / 2.0 - 0.11385).abs() < 2e-4, "{r:?}");
    assert_eq!((r.basis, r.launches, r.blocks), (IntervalBasis::Launches, 3, 24));
    assert!(r.components.launch_sd > 10.0 * r.components.block_sd, "{:?}", r.components);
}

#[test]
fn one_launch_says_its_interval_cannot_see_starts() {
    let pairs: Vec<Pair> = [0.01, 0.02, 0.0, 0.015, 0.005, 0.01, 0.012, 0.008].iter().map(|&v| Pair { launch: 0, log_ratio: v }).collect();
    let r = paired_ratio(&pairs).unwrap();
    assert_eq!(r.basis, IntervalBasis::OneLaunch);
    assert!(r.confidence >= 0.95 && r.low > 1.0, "{r:?}");
}

#[test]
fn students_t_quantiles_match_the_table() {
    for (df, t) in [(1.0, 12.706_2), (2.0, 4.302_7), (7.0, 2.364_6), (30.0, 2.042_3)] {
        assert!((t_quantile(0.95, df) - t).abs() < 1e-3, "{df}: {}", t_quantile(0.95, df));
    }
    assert!((t_quantile(0.90, 4.0) - 2.131_8).abs() < 1e-3);
}

#[test]
fn components_split_the_variance_between_blocks_and_launches() {
    // Launch levels ±3%, blocks ±1% about them, many of each: the parts come back.
    let mut rng = crate::rng::SplitMix64(11);
    let mut pairs = Vec::new();
    for launch in 0..400u32 {
        let level = 0.03 * crate::rng::standard_normal(&mut rng);
        for _ in 0..4 {
            pairs.push(Pair { launch, log_ratio: level + 0.01 * crate::rng::standard_normal(&mut rng) });
        }
    }
    let c = Components::of(&pairs);
    assert!((c.block_sd - 0.01).abs() < 0.001 && (c.launch_sd - 0.03).abs() < 0.003, "{c:?}");
    // Launches as steady as their blocks imply: no launch part.
    let flat: Vec<Pair> = (0..40).map(|i| Pair { launch: i / 4, log_ratio: 0.01 * crate::rng::standard_normal(&mut rng) }).collect();
    assert!(Components::of(&flat).launch_sd < 0.006, "{:?}", Components::of(&flat));
}

#[test]
fn merit_is_half_width_in_percent_times_root_minutes() {
    let r = PairedRatio {
        ratio: 1.0,
        low: 0.98,
        high: 1.02,
        confidence: 0.95,
        blocks: 20,
        launches: 2,
        basis: IntervalBasis::Launches,
        components: Components::default(),
    };
    assert!((r.merit(4.0) - 4.0).abs() < 1e-9, "{}", r.merit(4.0));
}

#[test]
fn more_launches_narrow_the_expected_interval_faster_than_more_blocks_where_launches_vary() {
    let c = Components { block_sd: 0.015, launch_sd: 0.03, block_df: 0 };
    // 8 blocks: in 3 launches, against one a launch.
    let (three, eight) = (c.expected_half_width(3, 8.0 / 3.0), c.expected_half_width(8, 1.0));
    assert!(three > 2.0 * eight, "{three} vs {eight}");
    // Blocks within three launches cannot go below the launches' own part.
    let floor = 4.3027 * 0.03 / 3f64.sqrt() * (1.0 - 2.0 / 18.0f64).powf(1.5);
    assert!(c.expected_half_width(3, 1e6) >= floor * 0.999, "{}", c.expected_half_width(3, 1e6));
    assert!(c.expected_half_width(0, 1.0).is_infinite());
}
