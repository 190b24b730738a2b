//! `verify` over a selection: every chosen variant of every chosen stack checked in turn, each
//! report stored as it completes, so an interrupted verification keeps what it checked.

use crate::run::runner::Lab;
use crate::stacks::manifest::{Stack, Variant};
use bakeoff_model::results::VerifyReport;
use bakeoff_model::scenario::Scenario;
use std::sync::atomic::Ordering;

/// Which variants and scenarios of the selected stacks are checked; empty means all.
#[derive(Debug, Clone, Default)]
pub struct VerifyFilter {
    pub variants: Vec<String>,
    pub scenarios: Vec<Scenario>,
}

impl VerifyFilter {
    /// The scenarios of `variant` this filter keeps (none when the variant itself is filtered out).
    pub fn scenarios_of(&self, variant: &Variant) -> Vec<Scenario> {
        if !self.variants.is_empty() && !self.variants.contains(&variant.name) {
            return Vec::new();
        }
        variant.scenarios.iter().copied().filter(|s| self.scenarios.is_empty() || self.scenarios.contains(s)).collect()
    }
}

impl Lab<'_> {
    /// Verifies every variant of `stacks` the filter keeps, one at a time with one worker; each
    /// report is recorded under `run_id` and handed to `each` as it completes. Stops before the next
    /// variant when the run is cancelled.
    pub fn verify_selection(
        &mut self,
        run_id: &str,
        stacks: &[&Stack],
        filter: &VerifyFilter,
        each: &mut dyn FnMut(&VerifyReport),
    ) -> anyhow::Result<Vec<VerifyReport>> {
        let mut reports = Vec::new();
        for stack in stacks {
            for variant in &stack.variants {
                let chosen = filter.scenarios_of(variant);
                if chosen.is_empty() || self.cancel.load(Ordering::Relaxed) {
                    continue;
                }
                let report = self.verify_variant(stack, variant, &chosen, 1);
                self.sink.record_verification(run_id, &report)?;
                each(&report);
                reports.push(report);
            }
        }
        Ok(reports)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(name: &str) -> Variant {
        Variant {
            name: name.into(),
            database: None,
            env: Default::default(),
            scenarios: vec![Scenario::Hello, Scenario::Json, Scenario::Products],
            services: Vec::new(),
        }
    }

    #[test]
    fn an_empty_filter_keeps_every_scenario_and_a_named_variant_only_itself() {
        let all = VerifyFilter::default();
        assert_eq!(all.scenarios_of(&variant("default")), [Scenario::Hello, Scenario::Json, Scenario::Products]);
        let some = VerifyFilter { variants: vec!["postgres".into()], scenarios: vec![Scenario::Products, Scenario::Loop] };
        assert!(some.scenarios_of(&variant("default")).is_empty());
        assert_eq!(some.scenarios_of(&variant("postgres")), [Scenario::Products], "loop is not among the variant's scenarios");
    }
}
