//! Planning the cells of a run: stack x scenario x variant x workers, from a selection, with a
//! clear message when the selection names something no selected stack implements.

use crate::error::LabError;
use crate::stacks::manifest::{Stack, Variant};
use bakeoff_model::results::CellKey;
use bakeoff_model::scenario::Scenario;

pub use bakeoff_model::study::WorkerCounts;

#[derive(Debug, Clone)]
pub struct Cell<'a> {
    pub stack: &'a Stack,
    pub scenario: Scenario,
    pub variant: &'a Variant,
    pub workers: u32,
}

impl Cell<'_> {
    pub fn key(&self) -> CellKey {
        CellKey { stack: self.stack.name.clone(), scenario: self.scenario, variant: self.variant.name.clone(), workers: self.workers }
    }
}

/// Every cell of `stacks` for the chosen scenarios (all a stack implements when `None`) and variants.
pub fn plan<'a>(
    stacks: &[&'a Stack],
    scenarios: Option<&[Scenario]>,
    variants: Option<&[String]>,
    workers: &WorkerCounts,
) -> Result<Vec<Cell<'a>>, LabError> {
    let mut cells = Vec::new();
    for &stack in stacks {
        for &scenario in &stack.scenarios {
            if scenarios.map(|s| !s.contains(&scenario)).unwrap_or(false) {
                continue;
            }
            for variant in stack.variants_for(scenario) {
                if variants.map(|v| !v.contains(&variant.name)).unwrap_or(false) {
                    continue;
                }
                for &w in workers.for_stack(&stack.name) {
                    cells.push(Cell { stack, scenario, variant, workers: w });
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
