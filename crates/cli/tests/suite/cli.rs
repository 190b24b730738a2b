//! The `bakeoff` binary as a user runs it: settings merged as defaults < study < flags and recorded
//! in the store, an ad-hoc run recording its own stacks, and clear errors for bad flags and study
//! files. The runs measure a real stack (go/fasthttp, set up by `bakeoff setup`) for one second.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(args).env("BAKEOFF_ROOT", root()).output().expect("the bakeoff binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `args` into a fresh results file and returns the stored run as the JSON report shows it.
fn run_and_read(db: &Path, args: &[&str]) -> serde_json::Value {
    let db_arg = db.display().to_string();
    let mut all = vec!["run", "--db", &db_arg, "--no-ceiling"];
    all.extend_from_slice(args);
    let out = bakeoff(&all);
    assert!(out.status.success(), "bakeoff {all:?} failed:\n{}", stderr(&out));
    // The HTML report is written beside the results file, in the test's own folder.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let html = stdout.lines().find_map(|l| l.strip_prefix("HTML report: ")).expect("the run names its HTML report");
    assert_eq!(Path::new(html.trim()).parent(), db.parent(), "{stdout}");
    let report = bakeoff(&["report", "--db", &db_arg, "--format", "json"]);
    assert!(report.status.success(), "{}", stderr(&report));
    serde_json::from_slice(&report.stdout).expect("the JSON report parses")
}

/// defaults < study < flags: the study sets duration and connections, a flag overrides connections,
/// the default timeout stays; all of it is what the run records.
#[test]
fn settings_merge_defaults_then_study_then_flags_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("merge.toml");
    std::fs::write(
        &study,
        "name = \"merge\"\nstacks = [\"go/fasthttp\"]\nscenarios = [\"hello\"]\ntrials = 1\nduration = \"1s\"\nwarmup = \"0s\"\nconnections = 8\n",
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let json = run_and_read(&db, &["--study", study.to_str().unwrap(), "--connections", "4"]);
    let load = &json["run"]["settings"]["load"];
    assert_eq!((load["duration"].as_f64(), load["warmup"].as_f64()), (Some(1.0), Some(0.0)), "from the study: {load}");
    assert_eq!(load["connections"], 4, "the flag wins over the study's 8: {load}");
    assert_eq!((load["timeout"].as_f64(), load["trials"].as_u64()), (Some(10.0), Some(1)), "default timeout, study trials");
    assert_eq!(json["run"]["study"], "merge");
    let cells = json["cells"].as_array().unwrap();
    assert_eq!((cells.len(), cells[0]["stack"].as_str(), cells[0]["scenario"].as_str()), (1, Some("go/fasthttp"), Some("hello")));
}

/// Flags alone make an ad-hoc run: it records its own stack list and inherits nothing of the
/// default study (stacks, variants, claims).
#[test]
fn an_adhoc_run_records_its_own_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let json =
        run_and_read(&db, &["--stacks", "go/fasthttp", "--scenarios", "hello", "--trials", "1", "--duration", "1s", "--warmup", "0s"]);
    let study = &json["run"]["settings"]["study"];
    assert_eq!(json["run"]["study"], "adhoc");
    assert_eq!(study["stacks"], serde_json::json!(["go/fasthttp"]), "{study}");
    assert_eq!(study["variants"], serde_json::json!([]), "no variant filter from the default study: {study}");
    assert_eq!(study["claims"], serde_json::json!([]));
}

#[test]
fn bad_flags_say_what_to_write() {
    for (flag, value, says) in [
        ("--duration", "forever", "`forever` is not a duration"),
        ("--scenarios", "websocket", "unknown scenario `websocket`"),
        ("--ramp", "1:2", "write START:STEP:STEP_DURATION:MAX[:HOLD]"),
        ("--server-cpus", "99999", "99999"),
        ("--slo", "p99<10", "hint: write it with `<=`, e.g. p99<=10ms"),
        ("--slo", "p101<=1ms", "use p50, p90, p99 or p99.9"),
    ] {
        let out = bakeoff(&["run", flag, value]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        assert!(stderr(&out).contains(says), "{flag} {value}: {}", stderr(&out));
    }
    let out = bakeoff(&["run", "--stacks", "go/nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no stack named `go/nosuch`") && stderr(&out).contains("hint:"), "{}", stderr(&out));
    let out = bakeoff(&["run", "--stacks", "go/fasthttp", "--trials", "0"]);
    assert!(stderr(&out).contains("--trials: 0 is out of range") && stderr(&out).contains("hint:"), "{}", stderr(&out));
}

#[test]
fn bad_study_files_say_where_and_how_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo.toml");
    std::fs::write(&typo, "name = \"t\"\nstacks = [\"go/fasthttp\"]\nconections = 8\n").unwrap();
    let out = bakeoff(&["run", "--study", typo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("typo.toml") && err.contains("unknown field `conections`") && err.contains("hint: compare with studies/quick.toml"),
        "{err}"
    );
    let missing = dir.path().join("missing.toml");
    let err = stderr(&bakeoff(&["run", "--study", missing.to_str().unwrap()]));
    assert!(err.contains("missing.toml: cannot read") && err.contains("hint:"), "{err}");
    let scenario = dir.path().join("scenario.toml");
    std::fs::write(&scenario, "name = \"s\"\nstacks = [\"go/fasthttp\"]\nscenarios = [\"websocket\"]\n").unwrap();
    let err = stderr(&bakeoff(&["run", "--study", scenario.to_str().unwrap()]));
    assert!(err.contains("unknown scenario `websocket`; known: hello, greeting") && err.contains("scenario.toml"), "{err}");
}

/// Stores the synthetic run as `id` with six trials a cell (its three rounds and three more, each
/// within a percent of them), so every cell has a 95% interval; `slow` divides one stack's
/// throughput (and multiplies its CPU per request) by a factor.
fn store_synthetic(db: &Path, id: &str, slow: Option<(&str, f64)>) {
    use bakeoff_model::records::results::ResultSink;
    let mut d = bakeoff_report::synthetic::run_data();
    let extra: Vec<_> = d
        .trials
        .iter()
        .cloned()
        .map(|mut t| {
            t.trial += 3;
            t.load.steps.iter_mut().for_each(|s| s.requests_per_sec *= 1.0 + 0.003 * t.trial as f64);
            t
        })
        .collect();
    d.trials.extend(extra);
    for t in &mut d.trials {
        t.run_id = id.into();
        if let Some((_, factor)) = slow.filter(|(stack, _)| t.cell.stack == *stack) {
            t.load.steps.iter_mut().for_each(|s| s.requests_per_sec /= factor);
            t.server.cpu_us_per_request *= factor;
        }
    }
    d.run.id = id.into();
    let mut store = bakeoff_store::Store::open(db).unwrap();
    store.begin_run(&d.run).unwrap();
    for t in &d.trials {
        store.record_trial(t).unwrap();
    }
    store.finish_run(id, &d.status).unwrap();
}

/// The regression gate: identical runs pass it (exit 0), a run where one stack serves a third less fails
/// it (exit 1) naming that stack and no other, and a run id that does not exist is an error (exit 2).
#[test]
fn compare_gates_on_a_regression_beyond_noise() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    store_synthetic(&db, "a", None);
    store_synthetic(&db, "a-again", None);
    store_synthetic(&db, "b-slow", Some(("python-flask", 1.5)));
    let db_arg = db.display().to_string();
    let compare = |b: &str| bakeoff(&["compare", "a", b, "--db", &db_arg, "--fail-if-slower", "5%"]);

    let same = compare("a-again");
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{text}{}", stderr(&same));
    assert!(text.contains("gate --fail-if-slower 5%: passed") && !text.contains("slower ✗"), "{text}");

    let slow = compare("b-slow");
    let text = String::from_utf8_lossy(&slow.stdout);
    assert_eq!(slow.status.code(), Some(1), "{text}{}", stderr(&slow));
    let gate = text.lines().find(|l| l.starts_with("gate --fail-if-slower 5%: FAILED by ")).unwrap_or_else(|| panic!("{text}"));
    assert!(gate.contains("python-flask") && !gate.contains("rust-actix") && !gate.contains("go-fasthttp"), "{gate}");

    let missing = bakeoff(&["compare", "a", "nosuch", "--db", &db_arg]);
    assert_eq!(missing.status.code(), Some(2));
    let err = stderr(&missing);
    assert!(err.contains("no run \"nosuch\"") && err.contains("hint: `bakeoff runs` lists them"), "{err}");
}

/// A relative `--root` (here `.` from the project folder) finds the same stacks as an absolute one.
#[test]
fn a_relative_root_is_the_same_project() {
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(["studies", "--root", "."]).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.lines().any(|l| l.starts_with("quick ")) && listed.contains("seed-004-proxies"), "{listed}");
}
