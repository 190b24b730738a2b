//! What a run's schedules hand back: the verifications, the trials stored, the cells that could
//! not be measured and whether the run was cancelled.

use bakeoff_model::records::results::{CellKey, VerifyReport};

/// The outcome of a run: verifications and how many trials were stored.
pub struct RunOutcome {
    /// One report per stack variant verified.
    pub verifications: Vec<VerifyReport>,
    pub(crate) trials_stored: usize,
    /// Cells that could not be measured, each with what went wrong.
    pub failed_cells: Vec<(CellKey, String)>,
    /// The run was cancelled before it ended.
    pub interrupted: bool,
}
