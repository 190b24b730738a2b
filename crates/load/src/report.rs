//! Report types: what a run measured, serde-stable (see `SCHEMA_VERSION` and docs/load-generator.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::warnings::Warning;

/// Bumped on any incompatible change of the JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything one run measured: the plan as run, each step, the warnings and the client's own cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The plan as run.
    pub plan: PlanSummary,
    /// One report per step, in the order they ran.
    pub steps: Vec<StepReport>,
    /// All warnings: the run-wide ones (client saturation) and every step's.
    pub warnings: Vec<Warning>,
    /// What the load generator itself used: CPU, memory, threads.
    pub client: ClientUsage,
}

/// The plan as run, for the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// Every URL, in round-robin order.
    pub urls: Vec<String>,
    /// The request method, upper case.
    pub method: String,
    /// Connections of a plain run (a ladder's steps say their own).
    pub connections: u32,
    /// Worker threads.
    pub threads: u32,
    /// How requests were released; serialized "closed", "rate" or "ramp".
    pub schedule: ScheduleKind,
    /// Requests per second of a constant-rate run.
    pub rate: Option<f64>,
    /// Seconds per step of a timed run.
    pub duration_s: Option<f64>,
    /// Total requests of a request-count run (`-n`).
    pub requests: Option<u64>,
    /// Unmeasured lead-in before the first step, seconds.
    pub warmup_s: f64,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
    /// Requests in flight per connection.
    pub pipeline: u32,
    /// One request per connection (`Connection: close`).
    pub close: bool,
    /// Requests before a connection is replaced, if limited.
    pub requests_per_conn: Option<u64>,
    /// How an `https://` plan spoke TLS; absent for plain HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<crate::tls::settings::TlsSettings>,
    /// "h1" or "h2".
    #[serde(default)]
    pub protocol: crate::target::Protocol,
    /// HTTP/2 streams per connection asked for; absent over HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
    /// The one status that counts as success, if checked.
    pub expect_status: Option<u16>,
    /// The expected decoded body length, if checked.
    pub expect_length: Option<u64>,
    /// Hex of the expected FNV-1a 64 body hash.
    pub expect_body_hash: Option<String>,
    /// CPUs the worker threads were pinned to, in order (empty: not pinned).
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

/// What one step measured in its measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// `main`, `rate 1000/s` or `64 connections`.
    pub label: String,
    /// Connections of this step.
    pub connections: u32,
    /// The arrival rate this step aimed for (open schedules).
    pub target_rate: Option<f64>,
    /// Measured seconds (warmup excluded).
    pub duration_s: f64,
    /// Completed responses (any status) in the measured window.
    pub requests: u64,
    /// Bytes read from the sockets in the measured window.
    pub bytes: u64,
    /// `requests` over `duration_s`.
    pub requests_per_sec: f64,
    /// `bytes` over `duration_s`.
    pub bytes_per_sec: f64,
    /// From intended send time for open schedules (coordinated-omission
    /// corrected); equal to service time for closed ones.
    pub latency: LatencyStats,
    /// From actual send time; open schedules only.
    pub service_time: Option<LatencyStats>,
    /// Failed requests by kind.
    pub errors: ErrorCounts,
    /// One point per measured second.
    pub timeline: Vec<TimelinePoint>,
    /// base64 of the V2-deflate serialized `latency` histogram (microseconds).
    pub histogram: String,
    /// Open schedules: the longest the client itself was late releasing a request.
    pub max_schedule_lag_ms: Option<f64>,
    /// What makes this step's numbers doubtful, if anything.
    pub warnings: Vec<Warning>,
    /// With a request deck: the results of each kind, in the deck's order of kind names. The
    /// step's own figures above are all kinds together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<KindReport>,
    /// The step's logins (warm-up included), when the deck has a login: they are not requests
    /// of the deck, so they are counted here and in none of the figures above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logins: Option<LoginCounts>,
    /// Over TLS: the step's handshakes and what they negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsReport>,
    /// Over HTTP/2: streams, the server's SETTINGS, resets and GOAWAYs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2: Option<H2Report>,
}

/// A step's HTTP/2 connections: what was asked and allowed, and what the server said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct H2Report {
    /// Streams per connection the plan asked for (`--streams`).
    pub streams_asked: u32,
    /// Streams a connection could have open: the ask within the server's MAX_CONCURRENT_STREAMS
    /// (the fewest any connection was allowed); absent if no connection settled.
    pub streams: Option<u32>,
    /// The server's SETTINGS (the first connection's), absent if none arrived.
    pub server_settings: Option<H2Settings>,
    /// The client's receive window, per stream and per connection, bytes.
    pub client_window: u32,
    /// Streams the server reset (RST_STREAM), each also an error of kind `reset`.
    pub resets: u64,
    /// GOAWAY frames received.
    pub goaways: u64,
    /// The first protocol failure, in words (a server that does not speak HTTP/2 on the port, a
    /// frame it should not have sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

impl H2Report {
    /// Several clients' reports of one step as one: counts summed, the fewest streams, the first
    /// settings and failure.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a H2Report>) -> Option<H2Report> {
        parts.into_iter().fold(None, |all: Option<H2Report>, p| {
            Some(match all {
                None => p.clone(),
                Some(mut a) => {
                    a.streams = match (a.streams, p.streams) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    };
                    a.server_settings = a.server_settings.or(p.server_settings);
                    a.resets += p.resets;
                    a.goaways += p.goaways;
                    a.first_error = a.first_error.take().or_else(|| p.first_error.clone());
                    a
                }
            })
        })
    }
}

/// The server's HTTP/2 SETTINGS (RFC 9113 6.5.2), defaults where it sent none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct H2Settings {
    /// SETTINGS_HEADER_TABLE_SIZE.
    pub header_table_size: u32,
    /// SETTINGS_MAX_CONCURRENT_STREAMS, absent if unlimited.
    pub max_concurrent_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub initial_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE.
    pub max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE, absent if unlimited.
    pub max_header_list_size: Option<u32>,
}

/// A step's TLS handshakes, counted and timed apart from its requests (the measured window only),
/// and what the server agreed to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TlsReport {
    /// The version negotiated, "1.2" or "1.3" (absent if no handshake completed).
    pub version: Option<String>,
    /// The cipher suite negotiated, as rustls names it (e.g. `TLS13_AES_128_GCM_SHA256`).
    pub cipher: Option<String>,
    /// The application protocol the server chose by ALPN, if it chose one.
    pub alpn: Option<String>,
    /// Handshakes completed in the measured window.
    pub handshakes: u64,
    /// Of those, the ones that resumed an earlier session.
    pub resumed: u64,
    /// `handshakes` over the step's measured seconds.
    pub handshakes_per_sec: f64,
    /// From the TCP connect's completion to the handshake's, when any completed.
    pub handshake_latency: Option<LatencyStats>,
    /// base64 of the V2-deflate serialized handshake histogram (microseconds), as the step's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_histogram: Option<String>,
    /// The first TLS failure of the step, in rustls's words (its count is `errors.tls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// What one kind of request of a deck measured in a step's measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindReport {
    /// The kind's name, as the deck gave it.
    pub name: String,
    /// Responses completed (successful or not), as the step's `requests`.
    pub requests: u64,
    /// Completed responses per second of the step's measured window.
    pub requests_per_sec: f64,
    /// Latency of this kind's responses, measured as the step's.
    pub latency: LatencyStats,
    /// This kind's failed requests. Failures that belong to no request (a refused connect, a
    /// response nothing asked for) are in the step's errors only.
    pub errors: ErrorCounts,
    /// base64 of the V2-deflate serialized latency histogram (microseconds), as the step's.
    pub histogram: String,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Fastest response.
    pub min_us: f64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Standard deviation.
    pub stddev_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 75th percentile.
    pub p75_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// 99.99th percentile.
    pub p9999_us: f64,
    /// Slowest response.
    pub max_us: f64,
    /// Mean of the samples between p1 and p99.
    pub tm99_us: f64,
    /// Mean of the samples between p0.1 and p99.9.
    pub tm999_us: f64,
    /// Samples (successful responses) behind these figures.
    pub count: u64,
}

/// Failed requests of a step, by kind. A failed request is never a latency sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// Connects refused, reset or timed out (one per attempt).
    pub connect: u64,
    /// Requests lost to a socket read error or a close before their response.
    pub read: u64,
    /// Requests lost to a socket write error.
    pub write: u64,
    /// Requests answered, or still owed, past the timeout.
    pub timeout: u64,
    /// Responses that are not HTTP/1.1 (the connection is dropped).
    pub malformed: u64,
    /// TLS handshakes that failed (one per attempt: a plain server, a refused version or cipher, a
    /// certificate that does not verify) and requests lost to a TLS record error.
    #[serde(default)]
    pub tls: u64,
    /// HTTP/2 streams the server reset (RST_STREAM) or dropped with GOAWAY before answering them.
    #[serde(default)]
    pub reset: u64,
    /// Responses whose status failed the check, by status code.
    #[serde(deserialize_with = "status_keys")]
    pub status: BTreeMap<u16, u64>,
    /// Responses whose body length or hash failed the check.
    pub body_mismatch: u64,
    /// Requests still waiting for their response when the step ended on a client thread that had
    /// no response for `STALL_S` (1 s), sent at least that long before: a server that
    /// hangs, not one that is merely busy or slow.
    #[serde(default)]
    pub unanswered: u64,
    /// Logins that failed (a status other than the expected one, a captured value missing, no
    /// answer in time); the connection retries after a backoff. Not a request of the deck.
    #[serde(default)]
    pub login: u64,
}

/// Status codes as JSON object keys, which are strings: read back as numbers also where the map is
/// buffered before it is read (inside an internally tagged enum, as a client host's reply is), where
/// serde's own number keys fail.
fn status_keys<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<u16, u64>, D::Error> {
    use serde::de::Error;
    BTreeMap::<String, u64>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| k.parse::<u16>().map(|k| (k, v)).map_err(|_| D::Error::custom(format!("status `{k}` is not a status code"))))
        .collect()
}

impl ErrorCounts {
    /// Every failed request, of any kind.
    pub fn total(&self) -> u64 {
        self.transport() + self.status.values().sum::<u64>() + self.body_mismatch + self.login
    }

    /// Requests that got no (parseable) response at all.
    pub fn transport(&self) -> u64 {
        self.connect + self.tls + self.reset + self.read + self.write + self.timeout + self.malformed + self.unanswered
    }

    /// Adds another thread's or step's counts to these.
    pub fn merge(&mut self, o: &ErrorCounts) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.malformed += o.malformed;
        self.tls += o.tls;
        self.reset += o.reset;
        for (k, v) in &o.status {
            *self.status.entry(*k).or_default() += v;
        }
        self.body_mismatch += o.body_mismatch;
        self.unanswered += o.unanswered;
        self.login += o.login;
    }

    pub(crate) fn add(&mut self, kind: ErrorKind, n: u64) {
        match kind {
            ErrorKind::Connect => self.connect += n,
            ErrorKind::Read => self.read += n,
            ErrorKind::Write => self.write += n,
            ErrorKind::Timeout => self.timeout += n,
            ErrorKind::Malformed => self.malformed += n,
            ErrorKind::Tls => self.tls += n,
            ErrorKind::Reset => self.reset += n,
            ErrorKind::Status(s) => *self.status.entry(s).or_default() += n,
            ErrorKind::BodyMismatch => self.body_mismatch += n,
            ErrorKind::Unanswered => self.unanswered += n,
            ErrorKind::Login => self.login += n,
        }
    }
}

/// Kinds of per-request failure, one per field of [`ErrorCounts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// See [`ErrorCounts::connect`].
    Connect,
    /// See [`ErrorCounts::read`].
    Read,
    /// See [`ErrorCounts::write`].
    Write,
    /// See [`ErrorCounts::timeout`].
    Timeout,
    /// See [`ErrorCounts::malformed`].
    Malformed,
    /// See [`ErrorCounts::tls`].
    Tls,
    /// See [`ErrorCounts::reset`].
    Reset,
    /// A status the check does not accept.
    Status(u16),
    /// See [`ErrorCounts::body_mismatch`].
    BodyMismatch,
    /// See [`ErrorCounts::unanswered`].
    Unanswered,
    /// See [`ErrorCounts::login`].
    Login,
}

/// The logins of a deck with a login, over a whole step (warmup included): one per connection,
/// and one per reconnect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginCounts {
    /// Logins sent.
    pub sent: u64,
    /// Logins that failed (each also an error of kind `login` if in the measured window).
    pub failed: u64,
}

impl LoginCounts {
    /// Adds another thread's counts.
    pub fn merge(&mut self, o: &LoginCounts) {
        self.sent += o.sent;
        self.failed += o.failed;
    }
}

/// One second of a step's measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds since the start of the measured window (0-based).
    pub second: u32,
    /// Responses completed in this second.
    pub requests: u64,
    /// Failed requests in this second.
    pub errors: u64,
    /// Median latency of this second's responses.
    pub p50_us: f64,
    /// 99th percentile latency of this second's responses.
    pub p99_us: f64,
}

/// The load generator's own cost, so a saturated client is seen, not mistaken for a slow server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientUsage {
    /// User CPU seconds of the worker threads.
    pub cpu_user_s: f64,
    /// System CPU seconds of the worker threads.
    pub cpu_system_s: f64,
    /// CPU time over wall time, in percent of one core (200 = two busy cores).
    pub cpu_percent: f64,
    /// Peak resident memory of the process.
    pub max_rss_bytes: u64,
    /// Worker threads.
    pub threads: u32,
}

impl LoadReport {
    /// The report as pretty JSON, the shape docs/load-generator.md describes.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_read_back_inside_an_internally_tagged_enum() {
        // A client host's agent replies in such an enum; its counts of failed statuses must arrive.
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "reply", rename_all = "snake_case")]
        enum Reply {
            Ran { errors: ErrorCounts },
        }
        let mut errors = ErrorCounts::default();
        errors.status.insert(503, 7);
        errors.status.insert(404, 1);
        let line = serde_json::to_string(&Reply::Ran { errors: errors.clone() }).unwrap();
        assert!(line.contains(r#""status":{"404":1,"503":7}"#), "{line}");
        assert_eq!(serde_json::from_str::<Reply>(&line).unwrap(), Reply::Ran { errors });
        let bad =
            r#"{"reply":"ran","errors":{"connect":0,"read":0,"write":0,"timeout":0,"malformed":0,"status":{"x":1},"body_mismatch":0}}"#;
        assert!(serde_json::from_str::<Reply>(bad).unwrap_err().to_string().contains("status `x` is not a status code"));
    }
}
