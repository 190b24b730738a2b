//! How a block schedule's blocks are spread over server launches: the one plan the schedule,
//! its time estimate and the noise outlook all read.

use bakeoff_model::schedule::Schedule;
use std::time::Duration;

/// Each slice opens its connections and lets them settle this long before it measures.
pub(crate) const SLICE_WARMUP: Duration = Duration::from_millis(250);

/// How the run's blocks are spread over launches: enough launches to sample start-to-start
/// variation (three from six blocks on), exactly the run's blocks shared among them as evenly as
/// they divide (7 blocks: 3, 2, 2). At once, a launch costs one warm-up for all cells together
/// and the blocks' ratios are tight, so the launches carry most of a ratio's variance between two
/// runs: there, two blocks a launch (up to eight launches), so `compare`'s interval over the runs'
/// launch means has the degrees of freedom to find a 5% change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaunchPlan {
    pub launches: u32,
    pub blocks: u32,
}

impl LaunchPlan {
    pub(crate) fn for_blocks(blocks: u32, launches: Option<u32>, schedule: Schedule) -> LaunchPlan {
        let launches = launches.unwrap_or(match (blocks, schedule) {
            (0 | 1, _) => 1,
            (2..=5, _) => 2,
            (_, Schedule::AtOnce) => (blocks / 2).clamp(3, 8),
            _ => 3,
        });
        let blocks = blocks.max(1);
        LaunchPlan { launches: launches.clamp(1, blocks), blocks }
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
    const B: Schedule = Schedule::Blocks;

    #[test]
    fn blocks_spread_over_launches() {
        let per_launch = |p: LaunchPlan| (0..p.launches).map(|i| p.blocks_in(i)).collect::<Vec<_>>();
        assert_eq!(per_launch(LaunchPlan::for_blocks(1, None, B)), [1]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(3, None, B)), [2, 1]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(6, None, B)), [2, 2, 2]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(10, None, B)), [4, 3, 3]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(20, Some(1), B)), [20]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(2, Some(5), B)), [1, 1], "never a launch without a block");
        assert_eq!(LaunchPlan::for_blocks(10, None, B).extra_blocks(), 4);
        let at_once = |n| per_launch(LaunchPlan::for_blocks(n, None, Schedule::AtOnce));
        assert_eq!(at_once(10), [2, 2, 2, 2, 2], "at once: two blocks a launch");
        assert_eq!(at_once(6), [2, 2, 2]);
        assert_eq!(at_once(4), [2, 2]);
        assert_eq!(at_once(40).len(), 8, "at most eight launches");
        assert_eq!(LaunchPlan::for_blocks(10, Some(2), Schedule::AtOnce).launches, 2, "--launches wins");
    }
}
