//! Typed warnings: the client tells when its own numbers should not be trusted. Never silent.

use serde::{Deserialize, Serialize};

/// Why a run's numbers should not be taken at face value, with a message and advice for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The client's threads were (nearly) always on CPU: it, not the server, may be the bottleneck.
    ClientSaturated {
        /// The worker threads' CPU time over wall time, percent of one core.
        cpu_percent: f64,
        /// Worker threads.
        threads: u32,
    },
    /// An open schedule achieved less than 95% of its target rate.
    TargetRateNotReached {
        /// The step's label.
        step: String,
        /// The rate the step aimed for, requests/s.
        target_rps: f64,
        /// The rate it measured, requests/s.
        achieved_rps: f64,
    },
    /// More than 1% of requests failed.
    HighErrorRate {
        /// The step's label.
        step: String,
        /// Failed requests.
        errors: u64,
        /// Responses plus failed requests.
        attempts: u64,
        /// `errors` over `attempts`, percent.
        percent: f64,
    },
    /// The client released requests late: its event loop could not keep up with the schedule.
    ScheduleLag {
        /// The step's label.
        step: String,
        /// The longest a request waited past its intended send time for a free connection's loop.
        max_lag_ms: f64,
    },
    /// A step completed no request at all.
    NoResponses {
        /// The step's label.
        step: String,
    },
    /// Connections that got no response while others did: their requests waited the whole step
    /// and appear in no percentile.
    StarvedConnections {
        /// The step's label.
        step: String,
        /// Connections without a single response.
        starved: u32,
        /// All connections of the step.
        connections: u32,
    },
    /// No response arrived for at least `STALL_S` (1 s) while requests were outstanding, on every
    /// client thread: the server hung (or sent part of a response and stalled). `at_s` is when the
    /// last response before the silence arrived, from the start of the measured window.
    StoppedAnswering {
        /// The step's label.
        step: String,
        /// Seconds into the measured window of the last response before the silence.
        at_s: f64,
        /// How long the silence lasted, seconds.
        silent_s: f64,
    },
    /// A deck's kind was sent more or less often than its share of the deck, by more than
    /// `MIX_POINTS` percentage points: the mix measured is not the mix asked for.
    MixDrift {
        /// The step's label.
        step: String,
        /// The request kind's name.
        request_kind: String,
        /// Its entries over the deck's, percent.
        deck_percent: f64,
        /// Its requests sent over all sent, percent.
        sent_percent: f64,
    },
    /// A protocol layer failed: TLS handshakes or records (a server that does not speak TLS on that
    /// port, a version it refuses, a certificate that does not verify), or HTTP/2 (a server that
    /// does not speak it, refuses it by ALPN, resets streams or breaks the framing). `error` is the
    /// first failure in words.
    ProtocolFailed {
        /// The step's label.
        step: String,
        /// Which layer.
        layer: Layer,
        /// Attempts and requests lost to it.
        failed: u64,
        /// The first failure.
        error: String,
    },
    /// The run was cancelled before its planned end; numbers cover a shorter window.
    Cancelled,
}

/// A protocol layer under HTTP's semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// TLS.
    Tls,
    /// HTTP/2's framing, HPACK and streams.
    Http2,
}

impl Layer {
    /// "TLS" or "HTTP/2".
    pub fn name(self) -> &'static str {
        match self {
            Layer::Tls => "TLS",
            Layer::Http2 => "HTTP/2",
        }
    }
}

/// Thresholds, kept together so the docs can quote them.
pub const SATURATED_FRACTION: f64 = 0.90;
pub const RATE_FRACTION: f64 = 0.95;
pub const ERROR_FRACTION: f64 = 0.01;
pub const LAG_MS: f64 = 50.0;
/// Seconds without a response while requests wait that make a stall (and make a request still
/// waiting at the end of a step `unanswered`).
pub const STALL_S: f64 = 1.0;
/// Percentage points a deck kind's share of the requests sent may differ from its share of the deck.
pub const MIX_POINTS: f64 = 1.0;

impl Warning {
    /// The serialized `kind` tag: what a report groups repeated warnings by.
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::ClientSaturated { .. } => "client_saturated",
            Warning::TargetRateNotReached { .. } => "target_rate_not_reached",
            Warning::HighErrorRate { .. } => "high_error_rate",
            Warning::ScheduleLag { .. } => "schedule_lag",
            Warning::NoResponses { .. } => "no_responses",
            Warning::StarvedConnections { .. } => "starved_connections",
            Warning::StoppedAnswering { .. } => "stopped_answering",
            Warning::MixDrift { .. } => "mix_drift",
            Warning::ProtocolFailed { .. } => "protocol_failed",
            Warning::Cancelled => "cancelled",
        }
    }

    /// The step a warning belongs to; None for run-wide ones (client saturation, cancellation).
    /// The report's run-wide list repeats every step's warnings, so a step's own are found here.
    pub fn step(&self) -> Option<&str> {
        match self {
            Warning::TargetRateNotReached { step, .. }
            | Warning::HighErrorRate { step, .. }
            | Warning::ScheduleLag { step, .. }
            | Warning::NoResponses { step }
            | Warning::StarvedConnections { step, .. }
            | Warning::StoppedAnswering { step, .. }
            | Warning::MixDrift { step, .. }
            | Warning::ProtocolFailed { step, .. } => Some(step),
            Warning::ClientSaturated { .. } | Warning::Cancelled => None,
        }
    }

    /// How bad this instance is, comparable only within one kind: of several trials' warnings of a
    /// kind, a report shows the one with the highest severity.
    pub fn severity(&self) -> f64 {
        match self {
            Warning::ClientSaturated { cpu_percent, .. } => *cpu_percent,
            Warning::TargetRateNotReached { target_rps, achieved_rps, .. } => target_rps - achieved_rps,
            Warning::HighErrorRate { percent, .. } => *percent,
            Warning::ScheduleLag { max_lag_ms, .. } => *max_lag_ms,
            Warning::StarvedConnections { starved, .. } => f64::from(*starved),
            Warning::StoppedAnswering { silent_s, .. } => *silent_s,
            Warning::MixDrift { deck_percent, sent_percent, .. } => (sent_percent - deck_percent).abs(),
            Warning::ProtocolFailed { failed, .. } => *failed as f64,
            Warning::NoResponses { .. } | Warning::Cancelled => 1.0,
        }
    }

    /// One line for the user saying what happened, with the numbers.
    pub fn message(&self) -> String {
        match self {
            Warning::ClientSaturated { cpu_percent, threads } => {
                format!("client saturated: {cpu_percent:.0}% CPU over {threads} thread(s)")
            }
            Warning::TargetRateNotReached { step, target_rps, achieved_rps } => format!(
                "[{step}] target rate not reached: {achieved_rps:.1} req/s of {target_rps:.1} ({:.1}%)",
                100.0 * achieved_rps / target_rps
            ),
            Warning::HighErrorRate { step, errors, attempts, percent } => {
                format!("[{step}] high error rate: {errors} errors in {attempts} attempts ({percent:.2}%)")
            }
            Warning::ScheduleLag { step, max_lag_ms } => {
                format!("[{step}] client fell behind its schedule by up to {max_lag_ms:.1} ms")
            }
            Warning::NoResponses { step } => format!("[{step}] no response was completed"),
            Warning::StarvedConnections { step, starved, connections } => {
                format!("[{step}] {starved} of {connections} connections got no response: their waits are in no percentile")
            }
            Warning::StoppedAnswering { step, at_s, silent_s } => {
                format!(
                    "[{step}] server stopped answering at t={at_s:.1} s: no response for {silent_s:.1} s while requests were outstanding"
                )
            }
            Warning::MixDrift { step, request_kind, deck_percent, sent_percent } => {
                format!("[{step}] `{request_kind}` was {sent_percent:.1}% of the requests sent, {deck_percent:.1}% of the deck")
            }
            Warning::ProtocolFailed { step, layer, failed, error } => {
                format!("[{step}] {failed} {} failures, the first: {error}", layer.name())
            }
            Warning::Cancelled => "run cancelled before its planned end".to_string(),
        }
    }

    /// What the user can do about it.
    pub fn advice(&self) -> &'static str {
        match self {
            Warning::ClientSaturated { .. } => {
                "the load generator may be the bottleneck: add client threads (-t), pin client and server to separate CPUs, or run the client on another machine"
            }
            Warning::TargetRateNotReached { .. } => {
                "the server (or the connection pool) cannot sustain this rate: add connections (-c), or treat this rate as beyond capacity"
            }
            Warning::HighErrorRate { .. } => {
                "latency and throughput of a failing server are not comparable: check the errors by kind before using these numbers"
            }
            Warning::ScheduleLag { .. } => {
                "requests left the client late, so latency is overstated: add client threads, lower the rate, or reduce machine noise"
            }
            Warning::NoResponses { .. } => "check the URL, the server, and --timeout",
            Warning::StarvedConnections { .. } => {
                "the server serves fewer connections than you opened (e.g. one keep-alive connection per worker process): use as many connections as it has workers, or more workers"
            }
            Warning::StoppedAnswering { .. } => {
                "a hang is a failure, not a slow server: these numbers do not describe a working server; check the server's log"
            }
            Warning::MixDrift { .. } => {
                "a run shorter than a few passes of the deck per client thread sends part of a pass: measure longer, or use a smaller deck"
            }
            Warning::ProtocolFailed { layer: Layer::Tls, .. } => {
                "check that the server speaks TLS on this port (an http:// server answers a TLS hello with plain text), that it accepts --tls-version, and that --cacert holds its certificate or CA"
            }
            Warning::ProtocolFailed { layer: Layer::Http2, .. } => {
                "check that the server speaks HTTP/2 on this port (over TLS by ALPN h2, in cleartext with prior knowledge), and its log for why it reset streams"
            }
            Warning::Cancelled => "rerun to completion for comparable numbers",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kind()` must be the serialized tag (what the JSON report says), for every variant.
    #[test]
    fn kind_is_the_serialized_tag() {
        let step = || "main".to_string();
        let all = [
            Warning::ClientSaturated { cpu_percent: 95.0, threads: 1 },
            Warning::TargetRateNotReached { step: step(), target_rps: 100.0, achieved_rps: 50.0 },
            Warning::HighErrorRate { step: step(), errors: 5, attempts: 100, percent: 5.0 },
            Warning::ScheduleLag { step: step(), max_lag_ms: 80.0 },
            Warning::NoResponses { step: step() },
            Warning::StarvedConnections { step: step(), starved: 3, connections: 4 },
            Warning::StoppedAnswering { step: step(), at_s: 1.4, silent_s: 3.6 },
            Warning::MixDrift { step: step(), request_kind: "item".into(), deck_percent: 60.0, sent_percent: 57.5 },
            Warning::ProtocolFailed { step: step(), layer: Layer::Tls, failed: 3, error: "received corrupt message".into() },
            Warning::Cancelled,
        ];
        for w in &all {
            assert_eq!(serde_json::to_value(w).unwrap()["kind"], w.kind(), "{w:?}");
        }
    }

    #[test]
    fn severity_orders_instances_of_a_kind() {
        let lag = |ms| Warning::ScheduleLag { step: "s".into(), max_lag_ms: ms };
        assert!(lag(90.0).severity() > lag(60.0).severity());
        let rate = |achieved| Warning::TargetRateNotReached { step: "s".into(), target_rps: 1000.0, achieved_rps: achieved };
        assert!(rate(500.0).severity() > rate(900.0).severity(), "further from the target is worse");
    }
}
