//! Control of the machine the lab runs on: server processes and their groups, CPU placement
//! (cgroup cpusets, affinity), process-tree sampling, listening sockets, a precise process-tree CPU meter, the
//! energy counters and the machine's description.

pub(crate) mod cgroup;
pub(crate) mod cpu_meter;
pub mod doctor;
pub(crate) mod energy;
pub mod leftovers;
pub(crate) mod noise;
pub mod process;
pub mod provenance;
pub(crate) mod quiet;
pub(crate) mod ready;
pub(crate) mod sampler;
pub mod sockets;
