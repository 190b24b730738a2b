//! How a block schedule's blocks are spread over server launches: the one plan the schedule,
//! its time estimate and the noise outlook all read.

/// How the run's blocks are spread over launches: enough launches to sample start-to-start
/// variation (three from six blocks on), exactly the run's blocks shared among them as evenly as
/// they divide (7 blocks: 3, 2, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaunchPlan {
    pub launches: u32,
    pub blocks: u32,
}

impl LaunchPlan {
    pub(crate) fn for_blocks(blocks: u32, launches: Option<u32>) -> LaunchPlan {
        let launches = launches.unwrap_or(match blocks {
            0 | 1 => 1,
            2..=5 => 2,
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

    #[test]
    fn blocks_spread_over_launches() {
        let per_launch = |p: LaunchPlan| (0..p.launches).map(|i| p.blocks_in(i)).collect::<Vec<_>>();
        assert_eq!(per_launch(LaunchPlan::for_blocks(1, None)), [1]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(3, None)), [2, 1]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(6, None)), [2, 2, 2]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(10, None)), [4, 3, 3]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(20, Some(1))), [20]);
        assert_eq!(per_launch(LaunchPlan::for_blocks(2, Some(5))), [1, 1], "never a launch without a block");
        assert_eq!(LaunchPlan::for_blocks(10, None).extra_blocks(), 4);
    }
}
