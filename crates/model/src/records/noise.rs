//! The machine's noise during one trial: CPU stolen by the hypervisor and CPU used by processes
//! that are neither the server nor the load generator, on the server's CPUs and on the client's.

use serde::{Deserialize, Serialize};

/// Noise on one set of CPUs over a trial, each as percent of one core averaged over the trial.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuSetNoise {
    /// The CPUs watched.
    pub cpus: Vec<usize>,
    /// Time the hypervisor ran something else while these CPUs wanted to run.
    pub steal_percent: f64,
    /// User + system time on these CPUs not charged to the measured process tree (server side) or
    /// to the lab's own process (client side).
    pub other_percent: f64,
}

/// The busiest process outside the measurement during the trial.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OtherProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command name (`comm`).
    pub name: String,
    /// Percent of one core averaged over the trial.
    pub cpu_percent: f64,
}

/// What else the machine did during one trial (from /proc/stat per CPU and `/proc/<pid>/stat`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TrialNoise {
    /// The wall time watched, seconds.
    pub wall_s: f64,
    /// Noise on the server's CPUs.
    pub server: CpuSetNoise,
    /// Noise on the load generator's CPUs.
    pub client: CpuSetNoise,
    /// The process outside the measurement that used the most CPU, if any did.
    pub busiest_other: Option<OtherProcess>,
    /// Client hosts (and a services host) on other machines, each as its agent measured it over
    /// the load (every CPU of the host, the load generator excluded); this machine's client CPUs
    /// are in `client`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_hosts: Vec<HostNoise>,
    /// The CPU packages' energy over the measurement, joules, from the machine's RAPL counters:
    /// every package's, so the load generator's and anything else on them count too. None where
    /// the machine exposes no counters (most virtual machines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
}

/// The noise on one client host of its own over a load.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostNoise {
    /// The host as placed (`user@host:port`).
    pub host: String,
    /// Its CPUs' steal and other processes' CPU, percent of one core.
    pub noise: CpuSetNoise,
}

impl TrialNoise {
    /// Other processes' CPU on server and client CPUs together (client hosts included), percent of
    /// one core.
    pub fn other_percent(&self) -> f64 {
        self.server.other_percent + self.client.other_percent + self.client_hosts.iter().map(|h| h.noise.other_percent).sum::<f64>()
    }

    /// CPU stolen on server and client CPUs together (client hosts included), percent of one core.
    pub fn steal_percent(&self) -> f64 {
        self.server.steal_percent + self.client.steal_percent + self.client_hosts.iter().map(|h| h.noise.steal_percent).sum::<f64>()
    }
}
