//! The metrics a cell reports: one list, with the name every output prints and its column heading.
//! What a metric reads from a trial is `Metric::of`, beside the summaries that read it (summary.rs).

use serde::{Deserialize, Serialize};

/// Every metric a cell reports. The list, names and units live here once; all outputs read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Completed responses per second.
    RequestsPerSec,
    /// Response bytes read per second, MiB.
    MibPerSec,
    /// Median latency, µs (corrected for open schedules).
    P50Us,
    /// 90th percentile latency, µs.
    P90Us,
    /// 99th percentile latency, µs.
    P99Us,
    /// 99.9th percentile latency, µs.
    P999Us,
    /// 99.99th percentile latency, µs.
    P9999Us,
    /// Slowest response, µs.
    MaxUs,
    /// Mean latency, µs.
    MeanUs,
    /// Mean latency between p0.1 and p99.9 (trimmed), µs.
    Tm999Us,
    /// Standard deviation of latency, µs.
    StddevUs,
    /// Failed requests, percent of attempts.
    ErrorPercent,
    /// Server process tree CPU, percent of one core.
    ServerCpuPercent,
    /// Server CPU microseconds per completed response.
    CpuUsPerRequest,
    /// Peak resident memory of the server tree, MiB.
    PeakRssMib,
    /// Mean resident memory of the server tree, MiB.
    MeanRssMib,
    /// Peak proportional set size of the server tree (shared pages split), MiB.
    PeakPssMib,
    /// Mean proportional set size of the server tree, MiB.
    MeanPssMib,
    /// Load generator CPU, percent of one core.
    ClientCpuPercent,
    /// Other processes' CPU on the server's CPUs, percent of one core.
    OtherCpuServerPercent,
    /// Other processes' CPU on the client's CPUs, percent of one core.
    OtherCpuClientPercent,
    /// CPU stolen by the hypervisor on the server's and client's CPUs, percent of one core.
    StealPercent,
}

impl Metric {
    /// Every metric, in the order tables list them.
    pub const ALL: [Metric; 22] = [
        Metric::RequestsPerSec,
        Metric::MibPerSec,
        Metric::P50Us,
        Metric::P90Us,
        Metric::P99Us,
        Metric::P999Us,
        Metric::P9999Us,
        Metric::MaxUs,
        Metric::MeanUs,
        Metric::Tm999Us,
        Metric::StddevUs,
        Metric::ErrorPercent,
        Metric::ServerCpuPercent,
        Metric::CpuUsPerRequest,
        Metric::PeakRssMib,
        Metric::MeanRssMib,
        Metric::PeakPssMib,
        Metric::MeanPssMib,
        Metric::ClientCpuPercent,
        Metric::OtherCpuServerPercent,
        Metric::OtherCpuClientPercent,
        Metric::StealPercent,
    ];

    /// The metric's one name: its serde name (what a claim's `metric` takes), printed as is by CSV
    /// and JSON. A test holds the two equal.
    pub fn id(self) -> &'static str {
        match self {
            Metric::RequestsPerSec => "requests_per_sec",
            Metric::MibPerSec => "mib_per_sec",
            Metric::P50Us => "p50_us",
            Metric::P90Us => "p90_us",
            Metric::P99Us => "p99_us",
            Metric::P999Us => "p999_us",
            Metric::P9999Us => "p9999_us",
            Metric::MaxUs => "max_us",
            Metric::MeanUs => "mean_us",
            Metric::Tm999Us => "tm999_us",
            Metric::StddevUs => "stddev_us",
            Metric::ErrorPercent => "error_percent",
            Metric::ServerCpuPercent => "server_cpu_percent",
            Metric::CpuUsPerRequest => "cpu_us_per_request",
            Metric::PeakRssMib => "peak_rss_mib",
            Metric::MeanRssMib => "mean_rss_mib",
            Metric::PeakPssMib => "peak_pss_mib",
            Metric::MeanPssMib => "mean_pss_mib",
            Metric::ClientCpuPercent => "client_cpu_percent",
            Metric::OtherCpuServerPercent => "other_cpu_server_percent",
            Metric::OtherCpuClientPercent => "other_cpu_client_percent",
            Metric::StealPercent => "steal_percent",
        }
    }

    /// Short column heading for tables.
    pub fn heading(self) -> &'static str {
        match self {
            Metric::RequestsPerSec => "req/s",
            Metric::MibPerSec => "MiB/s",
            Metric::P50Us => "p50",
            Metric::P90Us => "p90",
            Metric::P99Us => "p99",
            Metric::P999Us => "p99.9",
            Metric::P9999Us => "p99.99",
            Metric::MaxUs => "max",
            Metric::MeanUs => "mean",
            Metric::Tm999Us => "tm99.9",
            Metric::StddevUs => "stddev",
            Metric::ErrorPercent => "errors %",
            Metric::ServerCpuPercent => "server CPU %",
            Metric::CpuUsPerRequest => "CPU us/req",
            Metric::PeakRssMib => "peak RSS MiB",
            Metric::MeanRssMib => "mean RSS MiB",
            Metric::PeakPssMib => "peak PSS MiB",
            Metric::MeanPssMib => "mean PSS MiB",
            Metric::ClientCpuPercent => "client CPU %",
            Metric::OtherCpuServerPercent => "other CPU % (server CPUs)",
            Metric::OtherCpuClientPercent => "other CPU % (client CPUs)",
            Metric::StealPercent => "steal %",
        }
    }

    /// True for throughput, where more is better; every other metric is a cost.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::RequestsPerSec | Metric::MibPerSec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_ids_are_unique() {
        let mut ids: Vec<_> = Metric::ALL.iter().map(|m| m.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), Metric::ALL.len());
    }

    /// One name per metric: `id()` (printed by CSV and JSON) is the serde name a claim accepts.
    #[test]
    fn metric_id_is_the_serde_name() {
        for m in Metric::ALL {
            assert_eq!(serde_json::to_value(m).unwrap(), m.id(), "{m:?}");
            assert_eq!(serde_json::from_value::<Metric>(m.id().into()).unwrap(), m);
        }
    }
}
