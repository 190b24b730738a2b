//! How a block schedule's blocks are spread over server launches: the one plan the schedule,
//! its time estimate and the noise outlook all read.

use crate::run::LoadSettings;
use bakeoff_model::statistics::design::Allocation;
use std::time::Duration;

/// Each slice opens its connections and lets them settle this long before it measures.
pub(crate) const SLICE_WARMUP: Duration = Duration::from_millis(250);

/// How the run's blocks are spread over launches: as `bakeoff_model::statistics::design::Allocation` chooses
/// from the variance's parts (measured by the last run of the study, else its prior) and what a
/// launch and a block cost here, or as many launches as `--launches` says; exactly the run's
/// blocks shared among them as evenly as they divide (7 blocks in 3: 3, 2, 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LaunchPlan {
    pub launches: u32,
    pub blocks: u32,
    /// The allocation the launches were chosen by; None when the run set them.
    pub allocation: Option<Allocation>,
}

/// Starting one server, waiting until it is ready and quiet, and stopping it: measured 0.8 s a
/// trial for Go, Rust and Node.js in seed 001's runs; a JVM's start hides in its longer warm-up.
pub(crate) const START_STOP: Duration = Duration::from_secs(1);

impl LaunchPlan {
    /// The launches of `blocks` blocks under `s`: its `launches` where set, else the allocation
    /// for a launch's cost (a cell's warm-up, start and stop) against a block's (a cell's settled
    /// slice).
    pub(crate) fn for_blocks(blocks: u32, s: &LoadSettings) -> LaunchPlan {
        let blocks = blocks.max(1);
        if let Some(launches) = s.launches {
            return LaunchPlan { launches: launches.clamp(1, blocks), blocks, allocation: None };
        }
        let launch_cost = (s.warmup + START_STOP).as_secs_f64();
        let block_cost = (s.duration + SLICE_WARMUP).as_secs_f64();
        let allocation = Allocation::choose(blocks, s.components, launch_cost, block_cost);
        LaunchPlan { launches: allocation.launches, blocks, allocation: Some(allocation) }
    }

    /// Blocks of launch `i` (0-based): the first launches take the remainder.
    pub(crate) fn blocks_in(&self, i: u32) -> u32 {
        self.blocks / self.launches + u32::from(i < self.blocks % self.launches)
    }

    /// Blocks of a launch added for precision: as many as the largest planned launch.
    pub(crate) fn extra_blocks(&self) -> u32 {
        self.blocks.div_ceil(self.launches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(launches: Option<u32>) -> LoadSettings {
        LoadSettings { launches, duration: Duration::from_secs(1), warmup: Duration::from_secs(1), ..LoadSettings::default() }
    }

    #[test]
    fn blocks_spread_over_launches() {
        let per_launch = |p: LaunchPlan| (0..p.launches).map(|i| p.blocks_in(i)).collect::<Vec<_>>();
        assert_eq!(per_launch(LaunchPlan::for_blocks(1, &settings(None))), [1]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(10, &settings(Some(3)))), [4, 3, 3]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(20, &settings(Some(1)))), [20]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(2, &settings(Some(5)))), [1, 1], "never a launch without a block");
        assert_eq!(LaunchPlan::for_blocks(10, &settings(Some(3))).extra_blocks(), 4);
    }

    #[test]
    fn cheap_starts_give_every_block_a_launch_and_a_long_warm_up_fewer() {
        let cheap = LaunchPlan::for_blocks(8, &settings(None));
        assert_eq!((cheap.launches, cheap.extra_blocks()), (8, 1), "{cheap:?}");
        let jit = LaunchPlan::for_blocks(8, &LoadSettings { warmup: Duration::from_secs(30), ..settings(None) });
        assert!((2..8).contains(&jit.launches), "{jit:?}");
    }
}
