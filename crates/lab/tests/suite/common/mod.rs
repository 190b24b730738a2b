//! Helpers shared by the lab's integration tests: the project root, a scratch run directory with
//! fixtures, the test stacks of tests/fixtures, services started for a test, and a Lab wired to an
//! in-memory sink.

#![allow(dead_code)]

use bakeoff_lab::run::cells::Cell;
use bakeoff_lab::run::{Event, Lab, LabDirs, LoadSettings};
use bakeoff_lab::services::{ServiceContext, Services};
use bakeoff_lab::stacks::manifest::Stack;
use bakeoff_model::records::results::{Check, MemorySink, RunInfo, TrialRecord};
use bakeoff_model::scenario::{Scenario, ServiceKind};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The test stack `tests/fixtures/<name>`, loaded and validated.
pub fn fixture_stack(name: &str) -> Stack {
    bakeoff_lab::stacks::catalog::load_dir(&project_root().join("tests/fixtures").join(name)).unwrap()
}

/// The burn fixture with its default variant spinning `us` µs of CPU per request.
pub fn burn_stack(us: u32) -> Stack {
    let mut burn = fixture_stack("burn-stack");
    burn.variants[0].env.insert("BURN_US".into(), us.to_string());
    burn
}

pub struct Scratch {
    pub dir: PathBuf,
    pub data: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("bakeoff-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let data = dir.join("data");
        bakeoff_lab::contract::fixtures::write_all(&data).unwrap();
        Scratch { dir, data }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The services of `kinds`, started in `scratch` on `cpus` (stopped when dropped).
pub fn services(kinds: &[ServiceKind], scratch: &Scratch, cpus: &[usize]) -> Services {
    let root = project_root();
    let ctx = ServiceContext {
        project_root: &root,
        run_dir: &scratch.dir,
        data_dir: &scratch.data,
        cpus,
        external_docstore: None,
        netns: None,
        ip: [127, 0, 0, 1].into(),
        trust: &[],
    };
    let mut services = Services::default();
    services.ensure(kinds, &ctx).unwrap();
    services
}

pub fn quick_settings() -> LoadSettings {
    LoadSettings {
        duration: Duration::from_secs(2),
        warmup: Duration::from_millis(500),
        connections: 8,
        ceiling: false,
        timeout: Duration::from_secs(5),
        trials: 1,
        schedule: bakeoff_model::plan::schedule::Schedule::Trials,
        ..Default::default()
    }
}

pub static NEVER: AtomicBool = AtomicBool::new(false);

pub fn lab<'a>(scratch: &Scratch, sink: &'a mut MemorySink, events: &'a mut dyn FnMut(Event<'_>)) -> Lab<'a> {
    let dirs = LabDirs { project_root: project_root(), run_dir: scratch.dir.clone(), data_dir: scratch.data.clone() };
    Lab::new(dirs, quick_settings(), sink, events, &NEVER)
}

pub fn ignore(_: Event<'_>) {}

/// A plain cell of `stack`'s `variant`: one worker, no twin, soak or ramp.
pub fn cell<'a>(stack: &'a Stack, variant: &str, scenario: Scenario) -> Cell<'a> {
    let variant = stack.variant(variant).unwrap_or_else(|| panic!("{}: no variant {variant}", stack.name));
    Cell { stack, scenario, variant, workers: 1, twin: false, soak: None, ramp: None }
}

/// The first trial of `stack`'s `variant` on `scenario`, in a lab of the quick settings that
/// `settings` changes, and the CPU-cost checks run again after it (none without a judged pair).
pub fn measure_rechecked(
    stack: &Stack,
    variant: &str,
    scenario: Scenario,
    settings: impl FnOnce(&mut LoadSettings),
) -> (TrialRecord, Vec<Check>) {
    let scratch = Scratch::new(&format!("measure-{}-{variant}", stack.name.replace('/', "-")));
    let mut sink = MemorySink::default();
    let mut rechecked = Vec::new();
    let mut events = |e: Event<'_>| {
        if let Event::CostRechecked { checks, .. } = e {
            rechecked.extend_from_slice(checks);
        }
    };
    let mut lab = lab(&scratch, &mut sink, &mut events);
    settings(lab.bench.settings_mut());
    let trial = lab.bench.measure(&cell(stack, variant, scenario), 1).unwrap();
    drop(lab);
    (trial, rechecked)
}

/// A run record for a test run named `id`, on this machine.
pub fn run_info(id: &str) -> RunInfo {
    RunInfo::starting_now(id, "test", bakeoff_lab::machine::provenance::machine_info(), serde_json::json!({}))
}
