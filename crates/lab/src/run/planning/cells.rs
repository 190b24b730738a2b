//! Planning the cells of a run: stack x scenario x variant x workers, from a selection, with a
//! clear message when the selection names something no selected stack implements.

use crate::error::LabError;
use crate::stacks::manifest::{Stack, Variant};
use bakeoff_model::records::results::CellKey;
use bakeoff_model::scenario::Scenario;

pub use bakeoff_model::study::WorkerCounts;

/// One thing measured: a stack's variant on a scenario with a worker count.
#[derive(Debug, Clone)]
pub struct Cell<'a> {
    /// The stack.
    pub stack: &'a Stack,
    /// The scenario its load requests.
    pub scenario: Scenario,
    /// The stack's variant.
    pub variant: &'a Variant,
    /// WORKERS given to the server: the processes or OS threads that run its request handlers.
    pub workers: u32,
    /// The second arm of an A/A measurement (see `CellKey::twin`).
    pub twin: bool,
    /// A soak cell's own measured length and trials, instead of the run's.
    pub soak: Option<SoakPlan>,
    /// A rate ladder of its own, calibrated for this cell (`--ramp auto`), instead of the run's.
    pub ramp: Option<bakeoff_load::Ramp>,
}

/// How a soak cell is measured (the study's `[soak]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoakPlan {
    pub(crate) duration: std::time::Duration,
    pub(crate) trials: u32,
}

impl Cell<'_> {
    /// Whether the cell can share the server CPUs with its scenario's other cells between its
    /// slices (the block schedule): not a soak (its own length), not a per-cell ladder, and no
    /// schedule whose steps need a server of their own (a rate ramp, a concurrency sweep, an SLO
    /// search, a closed maximum after it).
    pub(crate) fn can_pair(&self, s: &crate::run::planning::settings::LoadSettings) -> bool {
        self.soak.is_none() && self.ramp.is_none() && s.allows_blocks()
    }

    /// The cell's identity in results: stack, scenario, variant, workers and A/A arm.
    pub fn key(&self) -> CellKey {
        CellKey {
            stack: self.stack.name.clone(),
            scenario: self.scenario,
            variant: self.variant.name.clone(),
            workers: self.workers,
            twin: self.twin,
        }
    }
}

/// Every cell of `stacks` for the chosen scenarios (all a stack implements when `None`) and
/// variants, with no scenario file: a `file:NAME` scenario a stack declares has no cell.
pub fn plan<'a>(
    stacks: &[&'a Stack],
    scenarios: Option<&[Scenario]>,
    variants: Option<&[String]>,
    workers: &WorkerCounts,
) -> Result<Vec<Cell<'a>>, LabError> {
    plan_with_files(stacks, scenarios, variants, workers, &[])
}

/// [`plan`] for a run given the scenario files of `files` (their `file:NAME` scenarios): a stack's
/// `file:NAME` scenario makes cells only when its file is among them, so a stack may declare a file
/// that most runs are not given.
pub fn plan_with_files<'a>(
    stacks: &[&'a Stack],
    scenarios: Option<&[Scenario]>,
    variants: Option<&[String]>,
    workers: &WorkerCounts,
    files: &[Scenario],
) -> Result<Vec<Cell<'a>>, LabError> {
    let mut cells = Vec::new();
    for &stack in stacks {
        for &scenario in &stack.scenarios {
            if scenarios.map(|s| !s.contains(&scenario)).unwrap_or(false) {
                continue;
            }
            if matches!(scenario, Scenario::File(_)) && !files.contains(&scenario) {
                continue;
            }
            for variant in stack.variants_for(scenario) {
                if variants.map(|v| !v.contains(&variant.name)).unwrap_or(false) {
                    continue;
                }
                for &w in workers.for_stack(&stack.name) {
                    cells.push(Cell { stack, scenario, variant, workers: w, twin: false, soak: None, ramp: None });
                }
            }
        }
    }
    if cells.is_empty() {
        let names: Vec<&str> = stacks.iter().map(|s| s.name.as_str()).collect();
        return Err(LabError::Selection(format!(
            "nothing to run: stacks [{}] implement none of the chosen scenarios/variants",
            names.join(", ")
        )));
    }
    Ok(cells)
}

/// Appends the A/A twin of the planned cell `aa` names (its first worker count when several): it
/// is measured last in every round, the main arm at its usual place, so the two arms are as far
/// apart in each round as any two cells are.
pub(crate) fn add_aa_twin(cells: &mut Vec<Cell<'_>>, aa: &bakeoff_model::plan::goal::AaCell) -> Result<(), LabError> {
    let found = cells
        .iter()
        .find(|c| c.stack.name == aa.stack && c.scenario.id() == aa.scenario && aa.variant.as_ref().is_none_or(|v| *v == c.variant.name));
    let Some(main) = found else {
        return Err(LabError::Selection(format!(
            "the A/A cell `{} {}` is not among the run's cells: select its stack, scenario and variant too",
            aa.stack, aa.scenario
        )));
    };
    let twin = Cell { twin: true, ..main.clone() };
    cells.push(twin);
    Ok(())
}

/// Adds the study's soak cells of the selected stacks to `cells` (a planned cell with the same key
/// becomes the soak cell): each names its stack, variant and scenario; `workers` is the soak's count
/// on this machine. A soak cell of a stack left out of the selection is left out too.
pub fn add_soak<'a>(
    cells: &mut Vec<Cell<'a>>,
    stacks: &[&'a Stack],
    soak: &bakeoff_model::study::Soak,
    workers: u32,
) -> Result<(), LabError> {
    let plan = SoakPlan { duration: soak.length(), trials: soak.trials };
    for r in &soak.cells {
        let Some(&stack) = stacks.iter().find(|s| s.name == r.stack) else { continue };
        let (Some(variant), Some(scenario)) = (r.variant.as_deref().and_then(|v| stack.variant(v)), r.scenario) else {
            return Err(LabError::Selection(format!("the soak cell `{}` names a variant the stack does not have", r.describe())));
        };
        if !variant.scenarios.contains(&scenario) {
            return Err(LabError::Selection(format!("the soak cell `{}`: the variant does not implement {scenario}", r.describe())));
        }
        let cell = Cell { stack, scenario, variant, workers, twin: false, soak: Some(plan), ramp: None };
        cells.retain(|c| c.key() != cell.key());
        cells.push(cell);
    }
    Ok(())
}
