//! bakeoff-load: an HTTP/1.1 and HTTP/2 load generator, plain or over TLS (closed and open schedules, HDR latency with
//! coordinated-omission correction, typed warnings). Knows nothing of stacks, stores or reports.
//!
//! See docs/load-generator.md for the design, the JSON schema and the bench results.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod blocking;
mod checks;
mod conn;
mod deck;
mod duration;
mod error;
mod h2;
mod hdr_log;
mod inflight;
mod parser;
mod plan;
mod report;
mod runner;
mod schedule;
mod stats;
mod target;
mod timer;
mod tls;
mod usage;
mod warnings;
mod worker;

use std::sync::atomic::AtomicBool;

pub use hdrhistogram::Histogram;

pub use checks::Checks;
pub use deck::{Capture, Deck, DeckEntry, DeckRequest, JsonStep, Login, LoginRequest, PlanDeck, PlanLogin, Splice, MAX_KINDS, SHARED_SPAN};
pub use duration::parse_duration;
pub use error::{LoadError, PlanError};
pub use hdr_log::write_hdr_log;
pub use parser::{fnv1a64, Framing, ParseError, ParseSink, Response, ResponseParser};
pub use plan::{LoadPlan, LoadPlanBuilder};
pub use report::{
    ClientUsage, ErrorCounts, H2Report, H2Settings, KindReport, LatencyStats, LoadReport, LoginCounts, PlanSummary, ScheduleKind,
    StepReport, TimelinePoint, TlsReport, SCHEMA_VERSION,
};
pub use runner::{run_observed, ProgressSnapshot, RunOutput, StepDetail};
pub use schedule::{Ramp, Schedule, StepSpec, Stop};
pub use stats::{decode_histogram, encode_histogram, latency_stats, trimmed_mean, DecodeError};
pub use target::{Protocol, Scheme, Target};
pub use tls::{Negotiated, TlsSettings, TlsVersion};
pub use usage::{process_cpu, CpuSet};
pub use warnings::{Layer, Warning, SATURATED_FRACTION};

/// Runs the plan to completion (blocking).
pub fn run(plan: &LoadPlan) -> Result<LoadReport, LoadError> {
    run_with_cancel(plan, &AtomicBool::new(false))
}

/// Runs the plan; setting `cancel` stops it within one housekeeping tick
/// (~10 ms) and returns what was measured, flagged with `Warning::Cancelled`.
pub fn run_with_cancel(plan: &LoadPlan, cancel: &AtomicBool) -> Result<LoadReport, LoadError> {
    run_observed(plan, cancel, None).map(|o| o.report)
}
