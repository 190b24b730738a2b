//! A run: its cells planned from a selection, and the lifecycle that verifies and measures them.

pub mod cells;
pub mod estimate;
pub mod execute;
pub mod plan;
pub mod rounds;
pub mod runner;
pub mod slo;
pub mod verification;
pub mod what_ran;

pub use estimate::{study_estimates, StudyEstimate};
pub use execute::{execute, Executed};
pub use plan::{plan_run, Overrides, RunPlan, RunRequest, Selection};
pub use verification::{plan_verification, verify, Verified, VerifyFilter, VerifyPlan, VerifyRequest};
