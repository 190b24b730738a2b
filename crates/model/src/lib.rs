//! bakeoff's model: the types a run produces (trials, verifications, ceilings, warnings), what a study
//! asks (selection, load, claims), the summaries and verdicts derived from them, and the sink results
//! are handed to. The lab writes them; the store keeps them; the reports read them. No I/O but a
//! study file read and the clock.

#![warn(missing_docs)]

pub mod comparison;
pub mod coverage;
pub mod design;
pub mod duration;
pub mod error;
pub mod finding;
pub mod goal;
pub mod growth;
pub mod joint;
pub mod lab_warning;
pub mod metric;
pub mod noise;
pub mod paired;
pub mod pairing;
pub mod peers;
pub mod place;
pub mod profile;
pub mod results;
pub mod rng;
pub mod robust;
pub mod run_data;
pub mod scenario;
pub mod schedule;
pub mod slo;
pub mod spread;
pub mod status;
pub mod study;
pub mod summary;
pub mod time;
pub mod timeline;
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
pub use status::RunStatus;
pub use time::now_rfc3339;
