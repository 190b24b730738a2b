//! A full run of one real stack (python/werkzeug-uwsgi under uWSGI) with short durations: setup,
//! verification, measurement with process sampling, stop, and results handed to the sink.

use crate::common;

use bakeoff_lab::stacks::setup::{self, SetupJob};
use bakeoff_model::records::results::{MemorySink, StoreKind, Verdict};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::RunStatus;

#[test]
fn a_real_stack_is_verified_measured_sampled_and_stopped() {
    let root = common::project_root();
    let catalog = bakeoff_lab::stacks::catalog::discover(&root.join("stacks"));
    let stack = catalog.stacks.iter().find(|s| s.name == "python/werkzeug-uwsgi").expect("stack exists");
    setup::run(&SetupJob::for_stack(stack).unwrap(), &root, false).expect("setup");

    let scratch = common::Scratch::new("real-run");
    let mut sink = MemorySink::default();
    let mut events = common::ignore;
    let mut lab = common::lab(&scratch, &mut sink, &mut events);
    lab.bench.settings_mut().trials = 2;
    lab.bench.settings_mut().ceiling = true;
    let scenarios = [Scenario::Hello, Scenario::Products];
    let stacks = [stack];
    let cells = bakeoff_lab::run::cells::plan(
        &stacks,
        Some(&scenarios),
        Some(&["default".to_string(), "sqlite".to_string()]),
        &bakeoff_lab::run::cells::WorkerCounts::same(&[1]),
    )
    .unwrap();
    let run = common::run_info("test-run");
    let outcome = lab.run(&run, &cells).unwrap();
    drop(lab);

    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    assert_eq!(sink.verifications.len(), 1);
    let v = &sink.verifications[0];
    assert_ne!(v.verdict(), Verdict::Fail, "{}", serde_json::to_string_pretty(v).unwrap());
    // Two cells, two trials each, interleaved: hello, products, hello, products.
    let order: Vec<(Scenario, u32)> = sink.trials.iter().map(|t| (t.cell.scenario, t.trial)).collect();
    assert_eq!(order, [(Scenario::Hello, 1), (Scenario::Products, 1), (Scenario::Hello, 2), (Scenario::Products, 2)]);
    for t in &sink.trials {
        let step = &t.load.steps[0];
        assert!(step.requests > 100, "{} measured only {} requests", t.cell.label(), step.requests);
        assert_eq!(step.errors.total(), 0, "{:?}", step.errors);
        assert!(t.samples.len() >= 4, "the process tree is sampled every 250 ms: {}", t.samples.len());
        assert!(t.server.peak_rss_bytes > 1 << 20 && t.server.cpu_s > 0.0, "{:?}", t.server);
        assert!(t.server.cpu_us_per_request > 0.0);
    }
    assert_eq!(sink.finished, [("test-run".to_string(), RunStatus::Complete)]);
    // products on SQLite: the store ceiling of SQLite was measured once, beside the stack.
    assert_eq!(sink.ceilings.len(), 1, "{:?}", sink.ceilings);
    assert_eq!((sink.ceilings[0].store, sink.ceilings[0].scenario), (StoreKind::Sqlite, Scenario::Products));
    assert!(sink.ceilings[0].queries_per_sec > 100.0);
}
