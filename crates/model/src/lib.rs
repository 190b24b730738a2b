//! bakeoff's model: the types a run produces (trials, verifications, ceilings, warnings), what a study
//! asks (selection, load, claims), the summaries and verdicts derived from them, and the sink results
//! are handed to. The lab writes them; the store keeps them; the reports read them. No I/O but a
//! study file read and the clock.
//!
//! The folders: `records/` holds what a run produces and the store keeps (results, findings,
//! warnings, metrics, what ran); `statistics/` the arithmetic over them (robust and paired
//! intervals, the block pairing and design, their coverage simulator, summaries, two runs
//! compared); `plan/` what a run aims for and where it runs (goal, schedule, placement);
//! `workload/` the scenario-file language; `study/` study files and their claims; `slo/` capacity
//! and latency under load.

#![warn(missing_docs)]

pub mod duration;
pub mod error;
pub mod peers;
pub mod plan;
pub mod protocol;
pub mod records;
pub mod rng;
pub mod scenario;
pub mod slo;
pub mod statistics;
pub mod study;
pub mod time;
pub mod workload;

pub use error::{InputError, SinkError};

/// Serde through the type's text form (`Display` and `FromStr` with a `String` error), so the
/// store, JSON and study files all spell a value the way it prints. Pair with
/// `#[serde(into = "String", try_from = "String")]` on the type.
#[macro_export]
macro_rules! serde_as_text {
    ($t:ty) => {
        impl From<$t> for String {
            fn from(value: $t) -> String {
                value.to_string()
            }
        }

        impl TryFrom<String> for $t {
            type Error = String;
            fn try_from(text: String) -> Result<Self, String> {
                text.parse()
            }
        }
    };
}
pub use records::status::RunStatus;
pub use time::now_rfc3339;
