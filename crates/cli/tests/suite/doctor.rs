//! `bakeoff doctor` and the first lines of a run as a user sees them: every section of the quick
//! facts, within the time it promises, and a run's progress off a terminal as plain lines without
//! control characters.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn bakeoff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bakeoff")).args(args).env("BAKEOFF_ROOT", root()).output().expect("the bakeoff binary runs")
}

#[test]
fn doctor_quick_names_every_fact_and_what_to_change() {
    let started = Instant::now();
    let out = bakeoff(&["doctor", "--quick"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for section in
        ["machine ", "split ", "governor ", "boost ", "steal ", "others ", "cgroups ", "netns ", "io_uring ", "noise ", "advice "]
    {
        assert!(text.lines().any(|l| l.starts_with(section)), "no `{section}` line:\n{text}");
    }
    assert!(text.contains("skipped (--quick)"), "{text}");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(text.starts_with(&format!("machine   {cores} cores")), "{text}");
    assert!(started.elapsed() < Duration::from_secs(15), "the quick facts take a few seconds: {:?}", started.elapsed());
}

/// A run with its output piped (as in CI): the machine's facts first, then plain lines only.
#[test]
fn a_piped_run_starts_with_the_machine_and_prints_no_control_characters() {
    let setup = bakeoff(&["setup", "go/fasthttp"]);
    assert!(setup.status.success(), "{}", String::from_utf8_lossy(&setup.stderr));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let args = ["run", "--db", db.to_str().unwrap(), "--no-ceiling", "--stacks", "go/fasthttp", "--scenarios", "hello"];
    let out = bakeoff(&[&args[..], &["--trials", "2", "--duration", "1s", "--warmup", "0s"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.starts_with("machine: "), "the machine's facts come first:\n{err}");
    assert!(err.contains("planned: 2 trials"), "{err}");
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "control characters off a terminal:\n{err:?}");
}
