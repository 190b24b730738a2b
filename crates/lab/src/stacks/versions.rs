//! A stack's `setup.versions`: run after a successful setup, its `name version` lines kept beside the
//! setup stamp (`<root>/.bakeoff-cache/setup/<stack>.versions`), read back for a run's "what ran".

use crate::error::LabError;
use crate::stacks::manifest::Stack;
use crate::stacks::setup::{build_env, cache_dir};
use bakeoff_model::records::profile::Component;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A versions command reads lock files and asks the runtime: it must not take long.
const TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn path(project_root: &Path, stack_name: &str) -> PathBuf {
    cache_dir(project_root).join(format!("{}.versions", stack_name.replace('/', "-")))
}

/// Runs the stack's versions command when the setup just ran (`fresh`) or nothing is recorded yet,
/// and keeps its output. A stack without one has nothing to record.
pub(crate) fn record(stack: &Stack, project_root: &Path, fresh: bool) -> Result<(), LabError> {
    let Some(command) = stack.setup.as_ref().and_then(|s| s.versions.as_deref()) else { return Ok(()) };
    let file = path(project_root, &stack.name);
    if !fresh && file.exists() {
        return Ok(());
    }
    let output = run(stack, command)?;
    std::fs::create_dir_all(cache_dir(project_root)).ok();
    std::fs::write(&file, output).map_err(|e| LabError::Input {
        what: file.display().to_string(),
        problem: e.to_string(),
        hint: "check that the project folder is writable".into(),
    })
}

/// What the last setup recorded (empty when the stack has no versions command or never set up).
pub(crate) fn read(project_root: &Path, stack_name: &str) -> Vec<Component> {
    std::fs::read_to_string(path(project_root, stack_name)).map(|t| Component::parse_lines(&t)).unwrap_or_default()
}

fn run(stack: &Stack, command: &str) -> Result<String, LabError> {
    let failed = |status: String, stderr: String| LabError::Input {
        what: format!("{}: setup.versions `{command}`", stack.name),
        problem: format!("{status}\n{}", stderr.trim_end()),
        hint: "make it print `name version` lines from lock files, installed packages or the runtime (offline, in seconds)".into(),
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .envs(build_env(&stack.name))
        .current_dir(&stack.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(e.to_string(), String::new()))?;
    let deadline = Instant::now() + TIMEOUT;
    while child.try_wait().map_err(|e| failed(e.to_string(), String::new()))?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(format!("a timeout after {TIMEOUT:?} (it must read lock files, not build)"), String::new()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().map_err(|e| failed(e.to_string(), String::new()))?;
    if !out.status.success() {
        return Err(failed(out.status.to_string(), String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
