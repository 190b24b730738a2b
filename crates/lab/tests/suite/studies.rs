//! Every shipped study file parses, names stacks, scenarios, scenario files and variants the real
//! catalogue has, and every claim and article figure refers to a cell the study measures (its soak cells included): on a
//! machine with one server CPU and on one with four, where "all" workers differ.

use bakeoff_lab::run::cells::{add_soak, plan_with_files};
use bakeoff_lab::stacks::catalog::discover;
use bakeoff_model::records::results::CellKey;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::{CellRef, StepRef, Study};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn studies() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join("studies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
}

/// Why a step a cell names cannot exist in this study's schedule, if it cannot.
fn step_problem(study: &Study, step: &Option<StepRef>) -> Option<String> {
    match step {
        None => None,
        Some(StepRef::Label(l)) if l == "max" => (!study.max_throughput).then(|| "step `max` without max_throughput".into()),
        Some(StepRef::Label(l)) => {
            let ladder = study.conn_ladder.clone().unwrap_or_default();
            let ok = l.strip_suffix(" connections").and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| ladder.contains(&n));
            (!ok).then(|| format!("step `{l}` is not a step of conn_ladder {ladder:?}"))
        }
        Some(StepRef::Index(0)) => None,
        Some(StepRef::Index(i)) => {
            let many = study.ramp.is_some() || study.conn_ladder.as_ref().is_some_and(|l| l.len() > *i);
            (!many).then(|| format!("step {i} of a schedule without that many steps"))
        }
    }
}

fn measured(r: &CellRef, keys: &[CellKey], cpus: u32) -> bool {
    keys.iter().any(|k| r.matches_key(k, cpus))
}

#[test]
fn every_study_names_real_stacks_and_refers_to_measured_cells() {
    let catalog = discover(&root().join("stacks"));
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems.iter().map(|p| p.to_string()).collect::<Vec<_>>());
    let paths = studies();
    assert!(paths.len() >= 6, "the quick study and five seed studies: {paths:?}");
    for path in paths {
        let name = path.display().to_string();
        let study = Study::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let stacks = catalog.select(&study.stacks).unwrap_or_else(|e| panic!("{name}: {e}"));
        let scenarios: Vec<Scenario> = study.scenarios.clone();
        let files: Vec<Scenario> = study
            .scenario_files
            .iter()
            .map(|p| bakeoff_model::workload::Workload::load(&root().join(p)).unwrap_or_else(|e| panic!("{name}: {e}")))
            .map(|w| Scenario::File(bakeoff_model::scenario::FileScenario::named(&w.name)))
            .collect();
        for v in &study.variants {
            assert!(stacks.iter().any(|s| s.variants.iter().any(|x| &x.name == v)), "{name}: no stack of the study has variant `{v}`");
        }
        let variants = (!study.variants.is_empty()).then_some(study.variants.as_slice());
        for cpus in [1, 4] {
            let counts = study.worker_counts(cpus);
            let chosen = (!scenarios.is_empty()).then_some(scenarios.as_slice());
            let mut cells = plan_with_files(&stacks, chosen, variants, &counts, &files).unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(soak) = &study.soak {
                let lowest = counts.default.iter().copied().min().unwrap_or(1);
                add_soak(&mut cells, &stacks, soak, soak.workers(cpus, lowest)).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(cells.iter().filter(|c| c.soak.is_some()).count() == soak.cells.len(), "{name}: every soak cell is planned");
            }
            let keys: Vec<CellKey> = cells.iter().map(|c| c.key()).collect();
            // Every testable claim and every article figure names a cell (and step) measured here.
            let refers_to_measured = |r: &CellRef, whose: String| {
                let cell = r.describe();
                assert!(measured(r, &keys, cpus), "{name}: {whose} names {cell}, which the study does not measure ({cpus} server CPUs)");
                assert_eq!(step_problem(&study, &r.step), None, "{name}: {whose}");
            };
            for claim in study.claims.iter().filter(|c| c.testable) {
                for r in claim.check.cells() {
                    refers_to_measured(&r, format!("claim `{}`", claim.statement));
                }
            }
            for table in study.article.iter().flat_map(|a| &a.tables) {
                for r in table.figures().unwrap().into_iter().filter_map(|f| f.cell) {
                    refers_to_measured(&r, format!("table `{}`", table.title));
                }
            }
        }
    }
}

#[test]
fn the_seed_studies_carry_their_article_and_its_findings() {
    for seed in ["seed-000-rest", "seed-001-greeting", "seed-002-orm", "seed-003-docstore", "seed-004-proxies"] {
        let study = Study::load(&root().join("studies").join(format!("{seed}.toml"))).unwrap();
        let article = study.article.as_ref().unwrap_or_else(|| panic!("{seed} has no [article]"));
        assert!(!article.tables.is_empty() && !article.notes.is_empty(), "{seed}: the article's figures and the differences of this setup");
        assert!(study.claims.iter().filter(|c| c.testable).count() >= 5, "{seed}: its findings as testable claims");
    }
}
