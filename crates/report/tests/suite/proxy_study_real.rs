//! The proxy study on real servers: nginx, the baseline and two proxies (Go io.Copy, Python
//! asyncio) under a short rate ramp, then the overhead table's arithmetic checked against the
//! histograms the load generator recorded.

use bakeoff_lab::run::{Lab, LoadSettings};
use bakeoff_model::records::results::{MemorySink, RunInfo};
use bakeoff_model::scenario::Scenario;
use bakeoff_report::overhead::Stat;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

static NEVER: AtomicBool = AtomicBool::new(false);

fn at(h: &hdrhistogram::Histogram<u64>, stat: Stat) -> f64 {
    match stat.quantile() {
        Some(q) => h.value_at_quantile(q) as f64,
        None => h.max() as f64,
    }
}

#[test]
fn overhead_over_the_baseline_equals_the_recorded_histograms_difference() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let catalog = bakeoff_lab::stacks::catalog::discover(&root.join("stacks"));
    let stacks: Vec<_> = ["c/baseline", "go/iocopy", "python/asyncio"]
        .iter()
        .map(|n| catalog.stacks.iter().find(|s| s.name == *n).unwrap_or_else(|| panic!("{n}")))
        .collect();
    for s in &stacks {
        if let Some(job) = bakeoff_lab::stacks::setup::SetupJob::for_stack(s) {
            bakeoff_lab::stacks::setup::run(&job, &root, false).unwrap();
        }
    }
    let scratch = std::env::temp_dir().join(format!("bakeoff-test-proxy-{}", std::process::id()));
    let data = scratch.join("data");
    bakeoff_lab::contract::fixtures::write_all(&data).unwrap();
    let settings = LoadSettings {
        duration: Duration::from_secs(1),
        warmup: Duration::from_millis(300),
        connections: 8,
        ramp: Some("400:400:1s:800".parse().unwrap()),
        max_throughput: true,
        ceiling: false,
        requests_per_conn: Some(50),
        timeout: Duration::from_secs(5),
        trials: 1,
        schedule: bakeoff_model::plan::schedule::Schedule::Trials,
        ..Default::default()
    };
    let mut sink = MemorySink::default();
    let mut events = |_: bakeoff_lab::run::Event<'_>| {};
    let dirs = bakeoff_lab::run::LabDirs { project_root: root.clone(), run_dir: scratch.clone(), data_dir: data };
    let mut lab = Lab::new(dirs, settings, &mut sink, &mut events, &NEVER);
    let variants = ["default".to_string(), "asyncio".to_string()];
    let cells = bakeoff_lab::run::cells::plan(
        &stacks,
        Some(&[Scenario::Proxy]),
        Some(&variants),
        &bakeoff_lab::run::cells::WorkerCounts::same(&[1]),
    )
    .unwrap();
    assert_eq!(cells.len(), 3);
    let run = RunInfo::starting_now("proxy-test", "test", bakeoff_lab::machine::provenance::machine_info(), serde_json::json!({}));
    let outcome = lab.run(&run, &cells).unwrap();
    drop(lab);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    assert!(outcome.verifications.iter().all(|v| v.verdict() != bakeoff_model::records::results::Verdict::Fail));

    // Two ramp steps and the closed-model "max" step per cell.
    for t in &sink.trials {
        let labels: Vec<Option<f64>> = t.load.steps.iter().map(|s| s.target_rate).collect();
        assert_eq!(labels, [Some(400.0), Some(800.0), None], "{}", t.cell.label());
        assert!(
            t.load.steps.iter().all(|s| s.requests > 0 && s.errors.total() == 0),
            "{:?}",
            t.load.steps.iter().map(|s| &s.errors).collect::<Vec<_>>()
        );
    }
    let summaries = bakeoff_model::statistics::summary::summarize(&sink.trials);
    let view = bakeoff_report::proxy::proxy_view(&sink.trials, &summaries, &serde_json::json!({})).expect("a proxy view");
    assert_eq!(view.overheads.len(), 4, "two proxies x two rates");
    assert_eq!(view.max.len(), 3, "a maximum for the baseline and each proxy");
    let trial_of = |stack: &str| sink.trials.iter().find(|t| t.cell.stack == stack).unwrap();
    let baseline = trial_of("c/baseline");
    for row in &view.overheads {
        let proxy = trial_of(&row.cell.stack);
        let hp = bakeoff_load::decode_histogram(&proxy.load.steps[row.step].histogram).unwrap();
        let hb = bakeoff_load::decode_histogram(&baseline.load.steps[row.step].histogram).unwrap();
        for o in &row.overheads {
            let (p, b) = (at(&hp, o.stat), at(&hb, o.stat));
            assert_eq!((o.proxy_us, o.baseline_us), (p, b), "{} {} at {}", row.cell.stack, o.stat.label(), row.target_rate);
            assert_eq!(o.delta_us, p - b);
            assert!((o.delta_percent - 100.0 * (p - b) / b).abs() < 1e-9);
        }
    }
}
