//! How a paired run spreads its blocks over server launches (Kalibera and Jones: replicate at the
//! level that carries the variance, and count what each level costs). A paired interval is
//! Student's t over the launches' estimates, so a launch buys a degree of freedom and cancels its
//! share of the start-to-start variance, and a block only cancels block noise: the allocation
//! that gives the narrowest interval per unit of time is chosen from the variance's two parts and
//! what a launch (start, warm-up, stop) and a block (its slices) cost.

use crate::statistics::paired::Components;
use serde::{Deserialize, Serialize};

/// What is assumed of the launches before anything is measured: they vary as much as blocks do
/// (the default study's pairs of unlike servers showed launch to launch twice block to block).
pub const PRIOR: Components = Components { block_sd: 0.01, launch_sd: 0.01, block_df: 0 };

/// The blocks of a run spread over launches, with the figures it was chosen on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Allocation {
    /// Server launches.
    pub launches: u32,
    /// Blocks over all launches.
    pub blocks: u32,
    /// The variance's parts it was chosen for.
    pub components: Components,
    /// Whether those parts were measured (a run of the same study) or `PRIOR`.
    pub measured: bool,
    /// Seconds a launch of one cell costs (start, warm-up, stop) against a block's slice.
    pub launch_cost_s: f64,
    /// Seconds one block's slice of one cell costs.
    pub block_cost_s: f64,
}

impl Allocation {
    /// The launches (two at least, where two blocks allow it) of `blocks` blocks whose expected
    /// half-width times the square root of their time is least.
    pub fn choose(blocks: u32, measured: Option<Components>, launch_cost_s: f64, block_cost_s: f64) -> Allocation {
        let components = measured.unwrap_or(PRIOR);
        let blocks = blocks.max(1);
        let cost = |l: u32| f64::from(l) * launch_cost_s.max(0.0) + f64::from(blocks) * block_cost_s.max(1e-3);
        let merit = |l: u32| components.expected_half_width(l, f64::from(blocks) / f64::from(l)) * cost(l).sqrt();
        let launches = if blocks < 2 { 1 } else { (2..=blocks).min_by(|&a, &b| merit(a).total_cmp(&merit(b))).unwrap_or(2) };
        Allocation { launches, blocks, components, measured: measured.is_some(), launch_cost_s, block_cost_s }
    }

    /// Why this many launches, in a line: "8 launches of 1 block: launch-to-launch 3.1%, block to
    /// block 1.5% (measured), a launch costs 2.0 s a cell, a block 1.2 s".
    pub fn why(&self) -> String {
        let per = f64::from(self.blocks) / f64::from(self.launches.max(1));
        let per = if (per - per.round()).abs() < 1e-9 { format!("{per:.0}") } else { format!("{per:.1}") };
        let from = if self.measured { "measured in the last run of this study" } else { "assumed, no run of this study yet" };
        let c = self.components;
        let parts = if self.measured && c.block_df == 0 {
            format!("±{:.1}% from one launch of one block to the next", 100.0 * c.launch_sd)
        } else {
            format!("launch to launch {:.1}%, block to block {:.1}%", 100.0 * c.launch_sd, 100.0 * c.block_sd)
        };
        format!(
            "{} launches of {per} block(s): {parts} ({from}); a launch costs {:.1} s a cell, a block {:.1} s",
            self.launches, self.launch_cost_s, self.block_cost_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_starts_vary_and_cost_little_every_block_gets_a_launch_of_its_own() {
        let a = Allocation::choose(8, Some(Components { block_sd: 0.015, launch_sd: 0.03, block_df: 0 }), 2.0, 1.25);
        assert_eq!(a.launches, 8, "{a:?}");
    }

    #[test]
    fn a_long_warm_up_buys_fewer_launches() {
        // A JIT's 30 s warm-up against 1 s slices, launches as steady as blocks.
        let steady = Components { block_sd: 0.02, launch_sd: 0.002, block_df: 0 };
        let a = Allocation::choose(12, Some(steady), 31.0, 1.25);
        assert!((2..=6).contains(&a.launches), "{a:?}");
        // The same warm-up where launches carry the variance: more of them.
        let varying = Allocation::choose(12, Some(Components { block_sd: 0.02, launch_sd: 0.04, block_df: 0 }), 31.0, 1.25);
        assert!(varying.launches > a.launches, "{varying:?} vs {a:?}");
    }

    #[test]
    fn one_block_is_one_launch_and_two_blocks_are_two() {
        assert_eq!(Allocation::choose(1, None, 2.0, 1.0).launches, 1);
        assert_eq!(Allocation::choose(2, None, 200.0, 1.0).launches, 2, "an interval over launches needs two");
        assert!(Allocation::choose(8, None, 2.0, 1.25).why().contains("assumed"));
        let one_a_launch = Components { block_sd: 0.0, launch_sd: 0.08, block_df: 0 };
        assert!(Allocation::choose(6, Some(one_a_launch), 2.0, 1.25).why().contains("±8.0% from one launch of one block to the next"));
    }
}
