//! Control of the machine the lab runs on: server processes and their groups, CPU placement
//! (cgroup cpusets, affinity), process-tree sampling, a precise process-tree CPU meter and the
//! machine's description.

pub mod cgroup;
pub(crate) mod cpu_meter;
pub mod leftovers;
pub mod machine;
pub mod noise;
pub mod process;
pub mod quiet;
pub(crate) mod sampler;
