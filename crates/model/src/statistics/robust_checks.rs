//! robust.rs's hand-written statistics held to reference values: statrs for the binomial, normal and
//! Student's t distributions, and counting every rank order for the exact Mann-Whitney distribution.

use super::*;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

#[test]
fn the_binomial_cdf_is_statrs_binomial_of_one_half() {
    for n in 1..=80usize {
        let reference = Binomial::new(0.5, n as u64).unwrap();
        for k in 0..=n {
            let (ours, theirs) = (binomial_half_cdf(n, k), reference.cdf(k as u64));
            assert!((ours - theirs).abs() < 1e-12, "P(X <= {k}), n = {n}: {ours} vs statrs {theirs}");
        }
    }
}

/// The interval's k is the largest with coverage 1 - 2 P(X <= k - 1) >= 95%, computed here from
/// statrs alone; below six values the interval is the range with the range's coverage.
#[test]
fn median_intervals_cover_what_statrs_says_they_cover() {
    for n in 2..=200usize {
        let reference = Binomial::new(0.5, n as u64).unwrap();
        let coverage = |k: usize| 1.0 - 2.0 * reference.cdf(k as u64 - 1);
        let k = (1..=n / 2).rev().find(|&k| coverage(k) >= CONFIDENCE).unwrap_or(1);
        let values: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let m = median_interval(&values).unwrap();
        assert_eq!((m.low, m.high), (k as f64, (n + 1 - k) as f64), "n = {n}");
        assert!((m.confidence - coverage(k)).abs() < 1e-12, "n = {n}: {} vs statrs {}", m.confidence, coverage(k));
        assert_eq!(m.confidence >= CONFIDENCE, n >= MIN_TRIALS_FOR_INTERVAL, "n = {n}");
    }
}

#[test]
fn the_normal_cdf_is_within_its_stated_error_of_statrs() {
    let reference = Normal::new(0.0, 1.0).unwrap();
    for i in -800..=800 {
        let z = f64::from(i) / 100.0;
        let (ours, theirs) = (normal_cdf(z), reference.cdf(z));
        assert!((ours - theirs).abs() < 1.5e-7, "Phi({z}): {ours} vs statrs {theirs}");
    }
}

/// P(U <= u) by brute force: U of every way to choose which n of the n + m ranks are the first
/// sample's (U = pairs with the second sample ranked below the first).
fn counted_u_cdf(n: usize, m: usize) -> Vec<f64> {
    let mut counts = vec![0u64; n * m + 1];
    for mask in 0u32..(1 << (n + m)) {
        if mask.count_ones() as usize != n {
            continue;
        }
        let (mut u, mut second_below) = (0, 0);
        for rank in 0..n + m {
            if mask & (1 << rank) != 0 {
                u += second_below;
            } else {
                second_below += 1;
            }
        }
        counts[u] += 1;
    }
    let total: u64 = counts.iter().sum();
    let mut below = 0;
    counts
        .iter()
        .map(|c| {
            below += c;
            below as f64 / total as f64
        })
        .collect()
}

#[test]
fn the_exact_mann_whitney_distribution_counts_every_rank_order() {
    for n in 1..=7 {
        for m in 1..=7 {
            let (ours, counted) = (exact_u_cdf(n, m), counted_u_cdf(n, m));
            for (u, (a, b)) in ours.iter().zip(&counted).enumerate() {
                assert!((a - b).abs() < 1e-12, "P(U <= {u}), {n} v {m}: {a} vs counted {b}");
            }
        }
    }
}

/// Above 400 pairs the normal approximation stands in for the exact distribution: at the switch
/// the two agree in the lower tail an interval is read from, and give the same k.
#[test]
fn the_normal_approximation_meets_the_exact_distribution_where_it_takes_over() {
    let (exact, normal) = (exact_u_cdf(20, 20), normal_u_cdf(20, 20));
    let tail = exact.iter().zip(&normal).take_while(|(a, _)| **a <= 0.05);
    let worst = tail.map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-3, "largest gap in the 5% tail: {worst}");
    let k = |cdf: &[f64]| (1..=200).rev().find(|&k| 1.0 - 2.0 * cdf[k - 1] >= CONFIDENCE).unwrap();
    assert_eq!(k(&exact), k(&normal));
}

#[test]
fn the_t_quantile_is_statrs_students_t() {
    let exact = |df: f64| StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975);
    for df in 1..=2000 {
        let (ours, theirs) = (t_975(f64::from(df)), exact(f64::from(df)));
        assert!((ours / theirs - 1.0).abs() < 1e-4, "df = {df}: {ours} vs statrs {theirs}");
    }
    // A fractional df below 6 is interpolated: never narrower than the exact quantile, nor a
    // quarter wider.
    for hundredth in 100..600 {
        let df = f64::from(hundredth) / 100.0;
        let (ours, theirs) = (t_975(df), exact(df));
        assert!(ours >= theirs * (1.0 - 1e-9) && ours < theirs * 1.25, "df = {df}: {ours} vs statrs {theirs}");
    }
}
