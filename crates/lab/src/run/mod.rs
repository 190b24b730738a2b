//! A run: its cells planned from a selection, and the lifecycle that verifies and measures them.

mod blocks;
mod calibrate;
pub mod cells;
pub mod estimate;
pub mod events;
pub mod execute;
mod measure;
pub mod plan;
pub mod rounds;
pub mod runner;
pub mod settings;
pub mod slo;
mod start;
pub mod verification;
mod verify_cell;
pub mod what_ran;

pub use estimate::{study_estimates, StudyEstimate};
pub use events::Event;
pub use execute::{execute, Executed};
pub use plan::{plan_run, Overrides, RunPlan, RunRequest, Selection};
pub use runner::{Lab, LabDirs, RunOutcome};
pub use settings::{LoadSettings, DEFAULT_POOL_SIZE};
pub use verification::{plan_verification, verify, Verified, VerifyFilter, VerifyPlan, VerifyRequest};
