//! Setting up stacks and service programs: Debian packages, then the setup commands, cached by a hash
//! of the declared input files and the commands, so a setup reruns only when its inputs change.

use crate::error::LabError;
use crate::machine::process::log_tail;
use crate::stacks::manifest::Stack;
use crate::stacks::setup_outputs::{self, OUTPUT_FOLDERS};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a setup did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupOutcome {
    /// Its inputs and commands had not changed since the last setup: nothing ran.
    Cached,
    /// It ran, taking this long.
    Done(Duration),
    /// There is nothing to set up: no packages and no commands.
    Nothing,
    /// Its packages were installed and its build outputs copied from another checkout's setup of
    /// the same inputs on this machine (`setup_outputs.rs`): no command ran.
    Restored,
}

impl SetupOutcome {
    /// The stack folder has new outputs (built or restored): what they hold is to be recorded.
    pub fn has_new_outputs(&self) -> bool {
        matches!(self, SetupOutcome::Done(_) | SetupOutcome::Restored)
    }
}

/// Where a setup is, as it goes: for a front end to show while a build takes minutes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupProgress<'a> {
    /// Debian packages the stack needs are being checked and installed.
    InstallingPackages,
    /// The setup's command `index` (from 1) of `count` is running.
    Running {
        /// Its number, from 1.
        index: usize,
        /// How many commands the setup has.
        count: usize,
        /// The command as the manifest writes it.
        command: &'a str,
    },
    /// A line the running command printed (its build tool's own progress: resolving, compiling).
    Output(&'a str),
}

/// One buildable thing: a stack or a service program.
pub struct SetupJob<'a> {
    pub(crate) name: &'a str,
    pub(crate) dir: &'a Path,
    pub(crate) apt: &'a [String],
    pub(crate) commands: &'a [String],
    pub(crate) inputs: &'a [String],
    pub(crate) timeout: Duration,
}

impl<'a> SetupJob<'a> {
    /// The job of a stack with a `[setup]` table (None without one).
    pub fn for_stack(stack: &'a Stack) -> Option<SetupJob<'a>> {
        let setup = stack.setup.as_ref()?;
        Some(SetupJob {
            name: &stack.name,
            dir: &stack.dir,
            apt: &stack.apt,
            commands: &setup.commands,
            inputs: &setup.inputs,
            timeout: setup.timeout,
        })
    }
}

/// Build caches shared by every checkout on this machine: `$BAKEOFF_CACHE`, else
/// `~/.cache/bakeoff`. A fresh clone (as CI makes) reuses compiled dependencies from here.
pub(crate) fn machine_cache() -> PathBuf {
    std::env::var_os("BAKEOFF_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("bakeoff")))
        .unwrap_or_else(|| std::env::temp_dir().join("bakeoff-cache"))
}

/// Environment every stack's setup and start share: Cargo's target directory lives in the machine
/// cache (per stack), so Rust stacks start from `${CARGO_TARGET_DIR}/release/...` and a new clone
/// recompiles only the stack's own crate.
pub(crate) fn build_env(stack_name: &str) -> BTreeMap<String, String> {
    let target = machine_cache().join("cargo-target").join(stack_name.replace('/', "-"));
    [("CARGO_TARGET_DIR".to_string(), target.display().to_string())].into()
}

/// Where setup stamps and logs live: `<root>/.bakeoff-cache/setup/`.
pub(crate) fn cache_dir(project_root: &Path) -> PathBuf {
    project_root.join(".bakeoff-cache").join("setup")
}

/// Whether `job`'s last setup is current: its stamp matches its inputs, so `run` would do nothing.
pub fn is_current(job: &SetupJob<'_>, project_root: &Path) -> bool {
    let stamp = cache_dir(project_root).join(format!("{}.stamp", job.name.replace('/', "-")));
    std::fs::read_to_string(stamp).is_ok_and(|s| s.trim() == inputs_hash(job))
}

/// Runs `job` unless its stamp matches; `force` ignores the stamp.
pub fn run(job: &SetupJob<'_>, project_root: &Path, force: bool) -> Result<SetupOutcome, LabError> {
    run_with_progress(job, project_root, force, &AtomicBool::new(false), &mut |_| {})
}

/// `run`, with `progress` hearing each phase and every line the commands print, as they print it;
/// setting `cancel` stops the command that runs (its whole process group) and leaves the stamp
/// unwritten, so the next setup runs again.
pub fn run_with_progress(
    job: &SetupJob<'_>,
    project_root: &Path,
    force: bool,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(SetupProgress<'_>),
) -> Result<SetupOutcome, LabError> {
    if job.commands.is_empty() && job.apt.is_empty() {
        return Ok(SetupOutcome::Nothing);
    }
    let cache = cache_dir(project_root);
    std::fs::create_dir_all(&cache).ok();
    let key = job.name.replace('/', "-");
    let stamp = cache.join(format!("{key}.stamp"));
    let log = cache.join(format!("{key}.log"));
    let hash = inputs_hash(job);
    if !force && std::fs::read_to_string(&stamp).map(|s| s.trim() == hash).unwrap_or(false) {
        return Ok(SetupOutcome::Cached);
    }
    let started = Instant::now();
    if !job.apt.is_empty() {
        progress(SetupProgress::InstallingPackages);
    }
    crate::install::apt_install(job.apt).map_err(|e| LabError::Setup {
        stack: job.name.into(),
        command: format!("apt-get install {}", job.apt.join(" ")),
        status: "an error".into(),
        log_tail: e,
        log: log.clone(),
    })?;
    let _ = std::fs::remove_file(&log);
    if !force && !job.commands.is_empty() && setup_outputs::restore(&machine_cache(), job.name, job.dir, &hash) {
        std::fs::write(&stamp, &hash).ok();
        return Ok(SetupOutcome::Restored);
    }
    let before = setup_outputs::Sources::of(job.dir);
    for (i, command) in job.commands.iter().enumerate() {
        progress(SetupProgress::Running { index: i + 1, count: job.commands.len(), command });
        run_command(job, command, &log, cancel, progress)?;
    }
    setup_outputs::keep(&machine_cache(), job.name, job.dir, &hash, &before);
    std::fs::write(&stamp, &hash).ok();
    Ok(SetupOutcome::Done(started.elapsed()))
}

/// Runs one command with its output going both to the log and, line by line, to `progress`.
fn run_command(
    job: &SetupJob<'_>,
    command: &str,
    log: &Path,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(SetupProgress<'_>),
) -> Result<(), LabError> {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let log_error = |e: std::io::Error| LabError::Input {
        what: log.display().to_string(),
        problem: e.to_string(),
        hint: "check that the project folder is writable".into(),
    };
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(log).map_err(log_error)?;
    let _ = writeln!(file, "$ {command}");
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .envs(build_env(job.name))
        .current_dir(job.dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // A group of its own: a timeout or a cancel stops the build's every process (cargo's
        // rustc, npm's node), not only the shell.
        .process_group(0)
        .spawn()
        .map_err(|e| setup_error(job, command, e.to_string(), log))?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let readers: Vec<_> =
        [child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>), child.stderr.take().map(|p| Box::new(p) as _)]
            .into_iter()
            .flatten()
            .map(|pipe| {
                let tx = tx.clone();
                std::thread::spawn(move || forward_lines(pipe, &tx))
            })
            .collect();
    drop(tx);
    let deadline = Instant::now() + job.timeout;
    let status = loop {
        // Lines are logged and shown as they come; the log holds both streams interleaved.
        while let Ok(line) = rx.try_recv() {
            let _ = writeln!(file, "{line}");
            progress(SetupProgress::Output(&line));
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() > deadline || cancel.load(Ordering::Relaxed) => {
                stop_group(&mut child);
                drain(readers, &rx, &mut file, progress);
                let why = if cancel.load(Ordering::Relaxed) {
                    "a stop: Ctrl-C or SIGTERM (the next setup runs it again)".to_string()
                } else {
                    format!("a timeout after {:?} (raise setup.timeout)", job.timeout)
                };
                return Err(setup_error(job, command, why, log));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(setup_error(job, command, e.to_string(), log)),
        }
    };
    drain(readers, &rx, &mut file, progress);
    if status.success() {
        Ok(())
    } else {
        Err(setup_error(job, command, status.to_string(), log))
    }
}

/// Sends each line of `pipe` (split at `\n` or `\r`, so a tool's redrawn progress line counts) until
/// it closes.
fn forward_lines(pipe: Box<dyn std::io::Read + Send>, tx: &std::sync::mpsc::Sender<String>) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(pipe);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                for part in String::from_utf8_lossy(&buf).split(['\r', '\n']).filter(|p| !p.trim().is_empty()) {
                    if tx.send(part.to_string()).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// SIGTERM to the command's process group, SIGKILL after a grace of 3 s, then reaps the shell.
fn stop_group(child: &mut std::process::Child) {
    let group = child.id() as i32;
    // SAFETY: kill(2) on the process group this setup created for its command.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let until = Instant::now() + Duration::from_secs(3);
    while crate::machine::process::group_alive(group) && Instant::now() < until {
        let _ = child.try_wait();
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above; a group already gone yields ESRCH.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
}

/// After the command ended: waits for its pipes to close (bounded: a daemon it left behind may hold
/// them), then logs and reports what is left.
fn drain(
    readers: Vec<std::thread::JoinHandle<()>>,
    rx: &std::sync::mpsc::Receiver<String>,
    file: &mut std::fs::File,
    progress: &mut dyn FnMut(SetupProgress<'_>),
) {
    use std::io::Write;
    let until = Instant::now() + Duration::from_secs(2);
    while readers.iter().any(|r| !r.is_finished()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    while let Ok(line) = rx.try_recv() {
        let _ = writeln!(file, "{line}");
        progress(SetupProgress::Output(&line));
    }
}

fn setup_error(job: &SetupJob<'_>, command: &str, status: String, log: &Path) -> LabError {
    LabError::Setup { stack: job.name.into(), command: command.into(), status, log_tail: log_tail(log, 15), log: log.to_path_buf() }
}

/// SHA-256 over the commands, the apt list and every input file (path and content), in sorted
/// order; build output folders are skipped.
pub(crate) fn inputs_hash(job: &SetupJob<'_>) -> String {
    let mut h = Sha256::new();
    for (k, v) in build_env(job.name) {
        h.update(format!("{k}={v}\0").as_bytes());
    }
    for c in job.commands.iter().chain(job.apt.iter()) {
        h.update(c.as_bytes());
        h.update([0]);
    }
    let mut files = Vec::new();
    for input in job.inputs {
        collect_files(&job.dir.join(input), &mut files);
    }
    files.sort();
    for f in files {
        h.update(f.strip_prefix(job.dir).unwrap_or(&f).to_string_lossy().as_bytes());
        h.update(std::fs::read(&f).unwrap_or_default());
    }
    hex::encode(h.finalize())
}

fn collect_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
    } else if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            let p = e.path();
            let skip = p.file_name().and_then(|n| n.to_str()).map(|n| OUTPUT_FOLDERS.contains(&n)).unwrap_or(false);
            if !skip {
                collect_files(&p, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_runs_once_then_is_cached_until_an_input_changes() {
        let root = std::env::temp_dir().join(format!("bakeoff-setup-{}", std::process::id()));
        let dir = root.join("stack");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("input.txt"), "v1").unwrap();
        let commands = vec!["echo run >> count.txt".to_string()];
        let inputs = vec!["input.txt".to_string()];
        let job = SetupJob { name: "t/s", dir: &dir, apt: &[], commands: &commands, inputs: &inputs, timeout: Duration::from_secs(10) };
        assert!(matches!(run(&job, &root, false).unwrap(), SetupOutcome::Done(_)));
        assert_eq!(run(&job, &root, false).unwrap(), SetupOutcome::Cached);
        std::fs::write(dir.join("input.txt"), "v2").unwrap();
        assert!(matches!(run(&job, &root, false).unwrap(), SetupOutcome::Done(_)));
        assert_eq!(std::fs::read_to_string(dir.join("count.txt")).unwrap().lines().count(), 2);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn phases_and_output_lines_are_heard_as_they_come_and_logged() {
        let root = std::env::temp_dir().join(format!("bakeoff-setup-lines-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        // A redrawn progress line (\r) counts as lines of its own; stderr is heard too.
        let commands = vec!["printf 'Resolving\\n 10%%\\r 50%%\\r'; echo Compiling x >&2".to_string(), "echo done".to_string()];
        let job = SetupJob { name: "t/l", dir: &root, apt: &[], commands: &commands, inputs: &[], timeout: Duration::from_secs(10) };
        let mut heard = Vec::new();
        run_with_progress(&job, &root, false, &AtomicBool::new(false), &mut |p| heard.push(format!("{p:?}"))).unwrap();
        let output: Vec<&String> = heard.iter().filter(|h| h.starts_with("Output")).collect();
        assert!(heard[0].starts_with("Running { index: 1, count: 2"), "{heard:?}");
        assert!(heard.last().unwrap().contains("done"), "{heard:?}");
        assert_eq!(output.len(), 5, "Resolving, 10%, 50%, Compiling x, done: {heard:?}");
        let log = std::fs::read_to_string(cache_dir(&root).join("t-l.log")).unwrap();
        assert!(log.contains("Compiling x") && log.contains("$ echo done"), "{log}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A build that outlives its shell (a daemon, cargo's rustc) is stopped with its whole group,
    /// within the grace, and the stamp is not written.
    #[test]
    fn a_cancel_stops_the_commands_whole_group_and_leaves_no_stamp() {
        let root = std::env::temp_dir().join(format!("bakeoff-setup-cancel-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let commands = vec!["sleep 60 & echo $! > child.pid; echo started; wait".to_string(), "echo never".to_string()];
        let job = SetupJob { name: "t/c", dir: &root, apt: &[], commands: &commands, inputs: &[], timeout: Duration::from_secs(60) };
        let cancel = AtomicBool::new(false);
        let started = Instant::now();
        let mut heard = Vec::new();
        let e = std::thread::scope(|s| {
            s.spawn(|| {
                while !root.join("child.pid").exists() && started.elapsed() < Duration::from_secs(10) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                std::thread::sleep(Duration::from_millis(200));
                cancel.store(true, Ordering::Relaxed);
            });
            run_with_progress(&job, &root, false, &cancel, &mut |p| heard.push(format!("{p:?}"))).unwrap_err().to_string()
        });
        assert!(started.elapsed() < Duration::from_secs(8), "stopped within the grace: {:?}", started.elapsed());
        assert!(e.contains("a stop: Ctrl-C or SIGTERM") && e.contains("t/c"), "{e}");
        assert!(!heard.iter().any(|h| h.contains("never")), "the next command did not run: {heard:?}");
        let child: i32 = std::fs::read_to_string(root.join("child.pid")).unwrap().trim().parse().unwrap();
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(child, 0) } == 0
            && !std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default().contains(") Z");
        assert!(!alive, "the background sleep {child} was stopped with the group");
        assert!(!is_current(&job, &root), "no stamp after a stop");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_failing_command_names_the_command_and_shows_the_log() {
        let root = std::env::temp_dir().join(format!("bakeoff-setup-fail-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let commands = vec!["echo compiling; echo 'error: no such crate' >&2; exit 3".to_string()];
        let job = SetupJob { name: "t/f", dir: &root, apt: &[], commands: &commands, inputs: &[], timeout: Duration::from_secs(10) };
        let e = run(&job, &root, false).unwrap_err().to_string();
        assert!(e.contains("exit status: 3") && e.contains("error: no such crate") && e.contains("t/f"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
