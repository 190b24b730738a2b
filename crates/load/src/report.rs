//! Report types: what a run measured, serde-stable (see `SCHEMA_VERSION` and docs/load-generator.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::warnings::Warning;

/// Bumped on any incompatible change of the JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    pub schema_version: u32,
    pub plan: PlanSummary,
    pub steps: Vec<StepReport>,
    /// All warnings: the run-wide ones (client saturation) and every step's.
    pub warnings: Vec<Warning>,
    pub client: ClientUsage,
}

/// The plan as run, for the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub urls: Vec<String>,
    pub method: String,
    pub connections: u32,
    pub threads: u32,
    /// How requests were released; serialized "closed", "rate" or "ramp".
    pub schedule: ScheduleKind,
    pub rate: Option<f64>,
    pub duration_s: Option<f64>,
    pub requests: Option<u64>,
    pub warmup_s: f64,
    pub timeout_s: f64,
    pub pipeline: u32,
    pub close: bool,
    pub requests_per_conn: Option<u64>,
    pub expect_status: Option<u16>,
    pub expect_length: Option<u64>,
    /// Hex of the expected FNV-1a 64 body hash.
    pub expect_body_hash: Option<String>,
    pub pin_cpus: Vec<usize>,
    /// True if the run was cancelled before its planned end.
    pub cancelled: bool,
}

/// The kind of schedule a plan ran, as the report records it (the plan's `Schedule` without its rates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// As fast as the connections allow.
    Closed,
    /// One constant arrival rate.
    Rate,
    /// A ladder of constant rates.
    Ramp,
}

impl ScheduleKind {
    /// The serialized name: "closed", "rate" or "ramp".
    pub fn name(self) -> &'static str {
        match self {
            ScheduleKind::Closed => "closed",
            ScheduleKind::Rate => "rate",
            ScheduleKind::Ramp => "ramp",
        }
    }

    /// An open model: requests leave on a schedule, so latency counts from their intended send time.
    pub fn is_open(self) -> bool {
        self != ScheduleKind::Closed
    }
}

impl std::fmt::Display for ScheduleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    pub label: String,
    pub connections: u32,
    pub target_rate: Option<f64>,
    /// Measured seconds (warmup excluded).
    pub duration_s: f64,
    /// Completed responses (any status) in the measured window.
    pub requests: u64,
    /// Bytes read from the sockets in the measured window.
    pub bytes: u64,
    pub requests_per_sec: f64,
    pub bytes_per_sec: f64,
    /// From intended send time for open schedules (coordinated-omission
    /// corrected); equal to service time for closed ones.
    pub latency: LatencyStats,
    /// From actual send time; open schedules only.
    pub service_time: Option<LatencyStats>,
    pub errors: ErrorCounts,
    pub timeline: Vec<TimelinePoint>,
    /// base64 of the V2-deflate serialized `latency` histogram (microseconds).
    pub histogram: String,
    /// Open schedules: the longest the client itself was late releasing a request.
    pub max_schedule_lag_ms: Option<f64>,
    pub warnings: Vec<Warning>,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub min_us: f64,
    pub mean_us: f64,
    pub stddev_us: f64,
    pub p50_us: f64,
    pub p75_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p9999_us: f64,
    pub max_us: f64,
    /// Mean of the samples between p1 and p99.
    pub tm99_us: f64,
    /// Mean of the samples between p0.1 and p99.9.
    pub tm999_us: f64,
    pub count: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorCounts {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
    pub malformed: u64,
    /// Responses whose status failed the check, by status code.
    pub status: BTreeMap<u16, u64>,
    pub body_mismatch: u64,
    /// Requests still waiting for their response when the step ended on a client thread that had
    /// no response for [`crate::warnings::STALL_S`], sent at least that long before: a server that
    /// hangs, not one that is merely busy or slow.
    #[serde(default)]
    pub unanswered: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.transport() + self.status.values().sum::<u64>() + self.body_mismatch
    }

    /// Requests that got no (parseable) response at all.
    pub fn transport(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout + self.malformed + self.unanswered
    }

    pub fn merge(&mut self, o: &ErrorCounts) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.malformed += o.malformed;
        for (k, v) in &o.status {
            *self.status.entry(*k).or_default() += v;
        }
        self.body_mismatch += o.body_mismatch;
        self.unanswered += o.unanswered;
    }

    pub(crate) fn add(&mut self, kind: ErrorKind, n: u64) {
        match kind {
            ErrorKind::Connect => self.connect += n,
            ErrorKind::Read => self.read += n,
            ErrorKind::Write => self.write += n,
            ErrorKind::Timeout => self.timeout += n,
            ErrorKind::Malformed => self.malformed += n,
            ErrorKind::Status(s) => *self.status.entry(s).or_default() += n,
            ErrorKind::BodyMismatch => self.body_mismatch += n,
            ErrorKind::Unanswered => self.unanswered += n,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// Kinds of per-request failure, as counted in [`ErrorCounts`].
pub enum ErrorKind {
    Connect,
    Read,
    Write,
    Timeout,
    Malformed,
    Status(u16),
    BodyMismatch,
    Unanswered,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the start of the measured window (0-based).
    pub second: u32,
    pub requests: u64,
    pub errors: u64,
    pub p50_us: f64,
    pub p99_us: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientUsage {
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// CPU time over wall time, in percent of one core (200 = two busy cores).
    pub cpu_percent: f64,
    pub max_rss_bytes: u64,
    pub threads: u32,
}

impl LoadReport {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }
}
