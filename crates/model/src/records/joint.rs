//! What one cell answered in its block's joint slice: the scenario's cells loaded at the same
//! time, each server on an equal share of the server CPUs.

use crate::records::metric::Metric;
use serde::{Deserialize, Serialize};

/// What one cell answered in its block's joint slice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JointSlice {
    /// Cells loaded together in it, this one included.
    pub cells: u32,
    /// Completed responses per second.
    pub requests_per_sec: f64,
    /// Response bytes read per second, MiB.
    pub mib_per_sec: f64,
    /// Server CPU microseconds per completed response.
    pub cpu_us_per_request: f64,
    /// This server's part of the CPU time all the slice's servers used: 1/cells where each
    /// used its equal share. None in records from before it was kept.
    #[serde(default)]
    pub cpu_share: Option<f64>,
    /// The server CPUs the slice's servers shared.
    #[serde(default)]
    pub server_cpus: Option<u32>,
}

impl JointSlice {
    /// Its value of `metric`, for the metrics a shared slice measures as well as a solo one
    /// (throughput and CPU per request); None for latency and the others, which the peers'
    /// load would change.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::RequestsPerSec => Some(self.requests_per_sec),
            Metric::MibPerSec => Some(self.mib_per_sec),
            Metric::CpuUsPerRequest => Some(self.cpu_us_per_request),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_throughput_and_cpu_per_request_are_read_from_a_joint_slice() {
        let j = JointSlice {
            cells: 3,
            requests_per_sec: 1000.0,
            mib_per_sec: 2.0,
            cpu_us_per_request: 400.0,
            cpu_share: None,
            server_cpus: None,
        };
        assert_eq!(j.value(Metric::RequestsPerSec), Some(1000.0));
        assert_eq!(j.value(Metric::CpuUsPerRequest), Some(400.0));
        assert_eq!(j.value(Metric::P99Us), None, "a peer's load changes latency");
    }
}
