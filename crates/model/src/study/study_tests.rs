//! Study files: loading, validation and worker counts.

use super::*;
use crate::error::InputError;

fn load(text: &str) -> Result<Study, InputError> {
    // A file per call: tests run in parallel, and two texts may have the same length.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("bakeoff-study-test-{}-{call}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let study = Study::load(&path);
    std::fs::remove_file(&path).ok();
    study
}

const HEAD: &str = "name = \"t\"\nstacks = [\"rust/actix\", \"python/werkzeug-uwsgi\"]\nworkers = [1]\n";

#[test]
fn stack_workers_replace_the_study_counts_for_that_stack() {
    let study = load(&format!("{HEAD}[stack_workers]\n\"python/werkzeug-uwsgi\" = [64]\n")).unwrap();
    let counts = study.worker_counts(1);
    assert_eq!(counts.for_stack("python/werkzeug-uwsgi"), [64]);
    assert_eq!(counts.for_stack("rust/actix"), [1]);
    let unset = load("name = \"u\"\nstacks = [\"rust/actix\"]\n").unwrap();
    assert_eq!(unset.worker_counts(1).for_stack("rust/actix"), [1], "one worker when the study sets none");
}

#[test]
fn stack_workers_must_name_a_study_stack_and_positive_counts() {
    let unknown = load(&format!("{HEAD}[stack_workers]\n\"go/fasthttp\" = [4]\n")).unwrap_err().to_string();
    assert!(unknown.contains("`stack_workers` names `go/fasthttp`, which the study does not run"), "{unknown}");
    let zero = load(&format!("{HEAD}[stack_workers]\n\"rust/actix\" = [0]\n")).unwrap_err().to_string();
    assert!(zero.contains("worker counts of 1 or more"), "{zero}");
}

#[test]
fn all_workers_are_one_per_server_cpu_without_duplicates() {
    let study = load("name = \"a\"\nstacks = [\"rust/actix\"]\nworkers = [1, \"all\"]\n").unwrap();
    assert_eq!(study.worker_counts(4).for_stack("rust/actix"), [1, 4]);
    assert_eq!(study.worker_counts(1).for_stack("rust/actix"), [1], "on one server CPU \"all\" is 1");
    let bad = load("name = \"a\"\nstacks = [\"rust/actix\"]\nworkers = [\"most\"]\n").unwrap_err().to_string();
    assert!(bad.contains("write a number or \"all\""), "{bad}");
}

#[test]
fn claims_and_figures_must_name_study_stacks_and_scenarios() {
    let claim = |check: &str| format!("{HEAD}scenarios = [\"hello\"]\n[[claims]]\nstatement = \"x\"\ncheck = {check}\n");
    let e =
        load(&claim(r#"{ kind = "faster", faster = "go/fasthttp", slower = "rust/actix", scenario = "hello" }"#)).unwrap_err().to_string();
    assert!(e.contains("names `go/fasthttp`, which the study does not run"), "{e}");
    let e = load(&claim(r#"{ kind = "faster", faster = "rust/actix", slower = "python/werkzeug-uwsgi", scenario = "json" }"#))
        .unwrap_err()
        .to_string();
    assert!(e.contains("scenario `json`, which the study does not measure"), "{e}");
    let untestable = "[[claims]]\nstatement = \"y\"\ntestable = false\nwhy = \"elsewhere\"\ncheck = { kind = \"faster\", faster = \"scala/spray\", slower = \"x\", scenario = \"hello\" }\n";
    assert!(load(&format!("{HEAD}{untestable}")).is_ok(), "an untestable claim may name what the study cannot run");
    let article = format!("{HEAD}[article]\ntitle = \"t\"\nsetup = \"s\"\nreference = \"go/fasthttp\"\n");
    assert!(load(&article).unwrap_err().to_string().contains("reference `go/fasthttp` is not a stack"));
}

#[test]
fn the_shipped_studies_load() {
    let studies = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
    for entry in std::fs::read_dir(&studies).unwrap() {
        let path = entry.unwrap().path();
        Study::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn an_slo_key_is_an_objective_or_says_how_to_write_one() {
    let study = load(&format!("{HEAD}slo = \"p99<=10ms\"\n")).unwrap();
    assert_eq!(study.slo().map(|s| s.to_string()).as_deref(), Some("p99<=10ms"));
    let e = load(&format!("{HEAD}slo = \"p99<10\"\n")).unwrap_err().to_string();
    assert!(e.contains("`slo`: `p99<10`: an objective is an upper bound") && e.contains("hint: write it with `<=`"), "{e}");
    assert_eq!(e.matches("hint:").count(), 1, "one hint: {e}");
}

#[test]
fn latency_under_load_reads_percentages_and_refuses_what_it_cannot_measure() {
    let study = load(&format!("{HEAD}latency_under_load = {{ percent = [25, 50, 75, 90, 100], step = \"1s\" }}\n")).unwrap();
    let u = study.latency_under_load().unwrap();
    assert_eq!((u.fractions, u.step, u.launches), (vec![0.25, 0.5, 0.75, 0.9, 1.0], std::time::Duration::from_secs(1), None));
    let default_step = load(&format!("{HEAD}latency_under_load = {{ percent = [50], launches = 2 }}\n")).unwrap();
    assert_eq!(
        default_step.latency_under_load().map(|u| (u.step, u.launches)),
        Some((crate::slo::SearchBudget::default().step_duration, Some(2)))
    );
    for (bad, says) in [("[50, 25]", "must rise"), ("[0]", "between 0 and 150%"), ("[]", "no fractions")] {
        let e = load(&format!("{HEAD}latency_under_load = {{ percent = {bad} }}\n")).unwrap_err().to_string();
        assert!(e.contains("`latency_under_load`") && e.contains(says) && e.contains("hint"), "{bad}: {e}");
    }
    let typo = load(&format!("{HEAD}latency_under_load = {{ percents = [50] }}\n")).unwrap_err().to_string();
    assert!(typo.contains("percents"), "{typo}");
}

#[test]
fn scenario_files_are_paths_read_as_written_and_default_to_none() {
    let study = load(&format!("{HEAD}scenarios = [\"file:shop\"]\nscenario_files = [\"scenarios/shop.toml\"]\n")).unwrap();
    assert_eq!(study.scenario_files, [std::path::PathBuf::from("scenarios/shop.toml")]);
    assert_eq!(study.scenarios[0].id(), "file:shop");
    assert!(load(HEAD).unwrap().scenario_files.is_empty());
    let text = toml::to_string(&load(HEAD).unwrap()).unwrap();
    assert!(!text.contains("scenario_files"), "left out when empty, as a stored study before them: {text}");
    let wrong = load(&format!("{HEAD}scenario_files = \"scenarios/shop.toml\"\n")).unwrap_err().to_string();
    assert!(wrong.contains("scenario_files"), "{wrong}");
}
