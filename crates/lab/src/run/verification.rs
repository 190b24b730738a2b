//! `verify` over a selection: every chosen variant of every chosen stack checked in turn, each
//! report stored as it completes, so an interrupted verification keeps what it checked. The entry
//! point a front end calls (`plan_verification`, then `verify`), as `bakeoff run` calls `plan_run`
//! and `execute`.

use crate::error::LabError;
use crate::run::execute::setup_stacks;
use crate::run::workspace::{new_run, Workspace};
use crate::run::{Event, Lab};
use crate::run::{LoadSettings, ScenarioFile};
use crate::stacks::catalog::{self, Catalog};
use crate::stacks::manifest::{Stack, Variant};
use bakeoff_model::records::results::{ResultSink, RunInfo, Verdict, VerifyReport};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::RunStatus;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Everything a verification is asked.
#[derive(Debug, Clone, Default)]
pub struct VerifyRequest {
    /// The project folder (stacks/, services/).
    pub root: PathBuf,
    /// Stack names, languages or `all`; empty means every stack.
    pub stacks: Vec<String>,
    /// Which variants and scenarios of those stacks are checked.
    pub filter: VerifyFilter,
    /// A MongoDB URL to use instead of starting the bundled document store.
    pub docstore: Option<String>,
    /// Scenario files (`--scenario FILE`): verified as `file:NAME` on the stacks that declare it.
    pub scenario_files: Vec<ScenarioFile>,
}

/// A verification ready to run: the stacks found and what to check of them.
pub struct VerifyPlan {
    root: PathBuf,
    catalog: Catalog,
    names: Vec<String>,
    filter: VerifyFilter,
    docstore: Option<String>,
    scenario_files: Vec<ScenarioFile>,
    /// Manifests that did not load (other stacks are still verified).
    pub problems: Vec<LabError>,
}

/// Finds the stacks. Selecting among them waits for `verify`, so a front end can show the
/// manifests' problems first: a stack whose manifest did not load is otherwise just "unknown".
pub fn plan_verification(req: VerifyRequest) -> VerifyPlan {
    let mut catalog = catalog::discover(&req.root.join("stacks"));
    let problems = std::mem::take(&mut catalog.problems);
    let names = if req.stacks.is_empty() { vec!["all".to_string()] } else { req.stacks };
    let mut filter = req.filter;
    filter.files.extend(req.scenario_files.iter().map(|f| f.scenario()));
    VerifyPlan { root: req.root, catalog, names, filter, docstore: req.docstore, scenario_files: req.scenario_files, problems }
}

/// What a verification did: its provenance (the id to read it back by) and every report.
pub struct Verified {
    /// The verification's provenance, with the id to read it back by.
    pub run: RunInfo,
    /// One report per stack variant checked.
    pub reports: Vec<VerifyReport>,
    /// Ctrl-C or SIGTERM stopped it: the variant being checked then has no report, and the
    /// variants after it were not checked.
    pub interrupted: bool,
}

impl Verified {
    /// How many stack variants failed a check.
    pub fn failures(&self) -> usize {
        self.reports.iter().filter(|r| r.verdict() == Verdict::Fail).count()
    }
}

/// Selects the stacks, sets them up (cached), and verifies every variant the filter keeps as a run
/// of its own (study `verify`); each report is stored and handed to `each` as it completes. Stops
/// before the next variant when `cancel` is set.
pub fn verify(
    plan: VerifyPlan,
    sink: &mut dyn ResultSink,
    events: &mut dyn FnMut(Event<'_>),
    cancel: &AtomicBool,
    each: &mut dyn FnMut(&VerifyReport),
) -> anyhow::Result<Verified> {
    let stacks = plan.catalog.select(&plan.names)?;
    plan.filter.check(&stacks)?;
    setup_stacks(stacks.iter().copied(), &plan.root, false, cancel, events);
    let run = new_run(&plan.root, "verify", serde_json::json!({"command": "verify"}));
    let ws = Workspace::create(&run.id, false)?;
    sink.begin_run(&run)?;
    let settings = LoadSettings { scenario_files: plan.scenario_files, ..LoadSettings::default() };
    let mut lab = ws.lab(&plan.root, plan.docstore, settings, sink, events, cancel);
    let reports = lab.verify_selection(&run.id, &stacks, &plan.filter, each)?;
    let interrupted = cancel.load(Ordering::Relaxed);
    lab.sink.finish_run(&run.id, if interrupted { &RunStatus::Interrupted } else { &RunStatus::Complete })?;
    drop(lab);
    let verified = Verified { run, reports, interrupted };
    ws.finish(verified.failures() > 0, events);
    Ok(verified)
}

/// Which variants and scenarios of the selected stacks are checked; empty means all.
#[derive(Debug, Clone, Default)]
pub struct VerifyFilter {
    /// Variants by name.
    pub variants: Vec<String>,
    /// Scenarios.
    pub scenarios: Vec<Scenario>,
    /// The `file:NAME` scenarios whose files were given: only these of a variant's files are checked.
    pub files: Vec<Scenario>,
}

impl VerifyFilter {
    /// Refuses a filter that names a variant none of `stacks` has, or keeps nothing to check, with
    /// the variants and scenarios there are: "0 of 0 pass" would read as a success.
    pub(crate) fn check(&self, stacks: &[&Stack]) -> Result<(), LabError> {
        let names = |f: &dyn Fn(&Variant) -> Vec<String>| {
            let mut all: Vec<String> = stacks.iter().flat_map(|s| s.variants.iter().flat_map(f)).collect();
            all.sort();
            all.dedup();
            all.join(", ")
        };
        if let Some(unknown) = self.variants.iter().find(|v| !stacks.iter().any(|s| s.variants.iter().any(|x| &x.name == *v))) {
            return Err(LabError::Selection(format!(
                "no selected stack has a variant `{unknown}`; they have: {}",
                names(&|v| vec![v.name.clone()])
            )));
        }
        if stacks.iter().all(|s| s.variants.iter().all(|v| self.scenarios_of(v).is_empty())) {
            let scenarios = names(&|v| v.scenarios.iter().map(|s| s.to_string()).collect());
            return Err(LabError::Selection(format!(
                "nothing to verify: the selected variants implement none of the scenarios asked for; they implement: {scenarios}"
            )));
        }
        Ok(())
    }

    /// The scenarios of `variant` this filter keeps (none when the variant itself is filtered out).
    /// A `file:NAME` scenario is kept only when its file was given (`bakeoff verify --scenario
    /// FILE`): a stack's declaration alone does not say where the file is.
    pub(crate) fn scenarios_of(&self, variant: &Variant) -> Vec<Scenario> {
        if !self.variants.is_empty() && !self.variants.contains(&variant.name) {
            return Vec::new();
        }
        let given = |s: &Scenario| !matches!(s, Scenario::File(_)) || self.files.contains(s);
        let kept = |s: &Scenario| given(s) && (self.scenarios.is_empty() || self.scenarios.contains(s));
        variant.scenarios.iter().copied().filter(kept).collect()
    }
}

impl Lab<'_> {
    /// Verifies every variant of `stacks` the filter keeps, one at a time with one worker; each
    /// report is recorded under `run_id` and handed to `each` as it completes. A cancel stops the
    /// variant being checked at its next check, and its incomplete report is dropped: contracts
    /// left unchecked must not read as passed.
    pub(crate) fn verify_selection(
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
                if chosen.is_empty() || self.bench.cancel.load(Ordering::Relaxed) {
                    continue;
                }
                let report = self.bench.verify_variant(stack, variant, &chosen, 1);
                if self.bench.cancel.load(Ordering::Relaxed) {
                    break;
                }
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
            reproduces: None,
            protocol: Default::default(),
        }
    }

    #[test]
    fn an_empty_filter_keeps_every_scenario_and_a_named_variant_only_itself() {
        let all = VerifyFilter::default();
        assert_eq!(all.scenarios_of(&variant("default")), [Scenario::Hello, Scenario::Json, Scenario::Products]);
        let some = VerifyFilter {
            variants: vec!["postgres".into()],
            scenarios: vec![Scenario::Products, Scenario::Loop],
            ..VerifyFilter::default()
        };
        assert!(some.scenarios_of(&variant("default")).is_empty());
        assert_eq!(some.scenarios_of(&variant("postgres")), [Scenario::Products], "loop is not among the variant's scenarios");
        let shop = Scenario::File(bakeoff_model::scenario::FileScenario::named("shop"));
        let declares = Variant { scenarios: vec![Scenario::Hello, shop], ..variant("default") };
        assert_eq!(all.scenarios_of(&declares), [Scenario::Hello], "no file is given to verification");
        let with_file = VerifyFilter { files: vec![shop], ..VerifyFilter::default() };
        assert_eq!(with_file.scenarios_of(&declares), [Scenario::Hello, shop], "the shop's file is given");
    }

    #[test]
    fn an_unknown_stack_is_refused_before_anything_is_set_up_or_stored() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let everything = plan_verification(VerifyRequest { root: root.clone(), ..VerifyRequest::default() });
        assert_eq!(everything.names, ["all"], "no names verifies every stack");
        let typo = plan_verification(VerifyRequest { root, stacks: vec!["go/nosuch".into()], ..VerifyRequest::default() });
        let mut sink = bakeoff_model::records::results::MemorySink::default();
        let outcome = verify(typo, &mut sink, &mut |_| panic!("no event before the selection"), &AtomicBool::new(false), &mut |_| {});
        let err = outcome.err().expect("an unknown stack is an error");
        assert!(err.to_string().contains("no stack named `go/nosuch`"), "{err}");
        assert!(sink.runs.is_empty(), "no run begun");
    }

    #[test]
    fn a_variant_no_stack_has_or_a_scenario_none_implements_is_refused_naming_what_there_is() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let catalog = catalog::discover(&root.join("stacks"));
        let stacks = catalog.select(&["go/fasthttp".to_string()]).unwrap();
        let typo = VerifyFilter { variants: vec!["default".into()], ..VerifyFilter::default() };
        let e = typo.check(&stacks).unwrap_err().to_string();
        assert!(e.contains("no selected stack has a variant `default`") && e.contains("sqlite"), "{e}");
        let none = VerifyFilter { scenarios: vec![Scenario::Proxy], ..VerifyFilter::default() };
        let e = none.check(&stacks).unwrap_err().to_string();
        assert!(e.contains("nothing to verify") && e.contains("hello"), "{e}");
        assert!(VerifyFilter::default().check(&stacks).is_ok());
    }
}
