//! A run: its cells planned from a selection, and the lifecycle that verifies and measures them.

mod blocks;
mod calibrate;
pub mod cells;
pub(crate) mod estimate;
pub(crate) mod events;
pub(crate) mod execute;
mod file_db;
mod files;
mod hosted_services;
pub mod hosts;
pub(crate) mod launches;
mod measure;
mod meters;
pub mod noise_probe;
pub(crate) mod plan;
pub(crate) mod rounds;
pub(crate) mod runner;
pub(crate) mod served;
pub(crate) mod settings;
pub(crate) mod slo;
mod start;
mod tally;
mod under_load;
pub(crate) mod verification;
mod verify_cell;
pub(crate) mod what_ran;
mod workspace;

pub use bakeoff_model::schedule::Lengthening;
pub use estimate::{study_estimates, StudyEstimate};
pub use events::Event;
pub use execute::{execute, setup_stacks, Executed};
pub use plan::{plan_run, Overrides, RunPlan, RunRequest, Selection};
pub use runner::{Lab, LabDirs, RunOutcome};
pub use settings::{LoadSettings, ScenarioFile, DEFAULT_POOL_SIZE};
pub use verification::{plan_verification, verify, Verified, VerifyFilter, VerifyPlan, VerifyRequest};
