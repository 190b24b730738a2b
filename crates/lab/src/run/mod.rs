//! A run: its cells planned from a selection, and the lifecycle that verifies and measures them.

pub(crate) mod cell;
pub(crate) mod events;
pub(crate) mod execute;
pub(crate) mod planning;
pub mod roles;
pub(crate) mod runner;
pub(crate) mod schedule;
pub(crate) mod verification;
pub(crate) mod what_ran;
mod workspace;

pub use bakeoff_model::plan::schedule::Lengthening;
pub use cell::bench::CellBench;
pub use cell::dirs::LabDirs;
pub use events::Event;
pub use execute::{execute, setup_stacks, Executed};
pub use planning::cells;
pub use planning::estimate::{study_estimates, StudyEstimate};
pub use planning::plan::{plan_run, Overrides, RunPlan, RunRequest, Selection};
pub use planning::settings::{LoadSettings, ScenarioFile, DEFAULT_POOL_SIZE};
pub use runner::Lab;
pub use schedule::noise_probe;
pub use schedule::outcome::RunOutcome;
pub use verification::{plan_verification, verify, Verified, VerifyFilter, VerifyPlan, VerifyRequest};
