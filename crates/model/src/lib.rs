//! bakeoff's model: the types a run produces (trials, verifications, ceilings, warnings), what a study
//! asks (selection, load, claims), the summaries and verdicts derived from them, and the sink results
//! are handed to. The lab writes them; the store keeps them; the reports read them. No I/O but a
//! study file read and the clock.

pub mod comparison;
pub mod duration;
pub mod error;
pub mod goal;
pub mod growth;
pub mod noise;
pub mod peers;
pub mod profile;
pub mod results;
pub mod robust;
pub mod run_data;
pub mod scenario;
pub mod status;
pub mod study;
pub mod summary;
pub mod time;
pub mod timeline;

pub use error::InputError;
pub use status::RunStatus;
pub use time::now_rfc3339;
