//! An ad-hoc stack: a user's own start command (and optional setup command) made into a [`Stack`]
//! in memory, so it goes through the very lifecycle of a stack folder (setup, own process group
//! and cgroup, pinned CPUs, readiness, verification, trials, cost and leftovers checks). It runs
//! in the folder it was given (the user's current folder), and records that folder's commit. Or a
//! server already running at a loopback URL: verified and measured, never started or stopped.

use crate::error::LabError;
use crate::machine::provenance::git_commit;
use crate::stacks::manifest::{Setup, Stack, StackKind, Unmanaged, Variant};
use bakeoff_model::protocol::WireProtocol;
use bakeoff_model::scenario::Scenario;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The language part of every ad-hoc stack's name (`adhoc/NAME`): no catalogue folder uses it.
pub const ADHOC_LANGUAGE: &str = "adhoc";

/// What serves an ad-hoc stack.
#[derive(Debug, Clone)]
pub enum AdHocServer {
    /// A start command bakeoff runs, with its setup.
    Command {
        /// Run as `sh -c`; `$PORT` and `$WORKERS` come from its environment.
        command: String,
        /// A command run once before (built again when the folder's files change).
        setup: Option<String>,
    },
    /// A server already running.
    Running(Unmanaged),
}

/// What a front end asks for an ad-hoc stack.
#[derive(Debug, Clone)]
pub struct AdHocSpec {
    /// What serves it.
    pub server: AdHocServer,
    /// Its name (the part after `adhoc/`); None derives one from the command.
    pub name: Option<String>,
    /// Its working folder.
    pub dir: PathBuf,
    /// The scenarios it is measured (and verified) for.
    pub scenarios: Vec<Scenario>,
    /// How long it may take to answer after its start.
    pub ready_timeout: Duration,
    /// How its requests travel; a started server reads it as PROTOCOL, with the lab's TLS_CERT and
    /// TLS_KEY.
    pub protocol: WireProtocol,
}

/// How a run records an ad-hoc stack (in its settings): enough to run it again.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AdHocRecord {
    /// `adhoc/NAME`.
    pub stack: String,
    /// The start command as given (None for a running server).
    pub command: Option<String>,
    /// The setup command as given.
    pub setup: Option<String>,
    /// A running server's URL.
    pub url: Option<String>,
    /// A running server's process, as given.
    pub pid: Option<u32>,
    /// The folder it ran in.
    pub cwd: String,
    /// That folder's git commit; None outside a git checkout.
    pub git_commit: Option<String>,
    /// The folder had changes not committed.
    pub modified: bool,
}

impl AdHocSpec {
    /// The stack's full name, `adhoc/NAME`.
    pub fn stack_name(&self) -> String {
        let default = || match &self.server {
            AdHocServer::Command { command, .. } => name_from_command(command),
            AdHocServer::Running(u) => format!("server-{}", u.addr.port()),
        };
        format!("{ADHOC_LANGUAGE}/{}", self.name.clone().unwrap_or_else(default))
    }

    /// The record of what ran (the folder's commit read now).
    pub fn record(&self) -> AdHocRecord {
        let commit = git_commit(&self.dir);
        let modified = commit.as_deref().is_some_and(|c| c.ends_with("-dirty"));
        let (command, setup, running) = match &self.server {
            AdHocServer::Command { command, setup } => (Some(command.clone()), setup.clone(), None),
            AdHocServer::Running(u) => (None, None, Some(*u)),
        };
        AdHocRecord {
            stack: self.stack_name(),
            command,
            setup,
            url: running.map(|u| format!("{}://{}/", self.protocol.scheme(), u.addr)),
            pid: running.and_then(|u| u.pid),
            cwd: self.dir.display().to_string(),
            git_commit: commit.map(|c| c.trim_end_matches("-dirty").to_string()),
            modified,
        }
    }
}

/// Builds the stack, checking what a manifest's parser would (a command, a usable name, a folder).
pub fn ephemeral(spec: &AdHocSpec) -> Result<Stack, LabError> {
    let input = |problem: String, hint: &str| LabError::Input { what: "--cmd".into(), problem, hint: hint.into() };
    let (command, setup, unmanaged) = match &spec.server {
        AdHocServer::Command { command, setup } => (command.clone(), setup.clone(), None),
        AdHocServer::Running(u) => (format!("(already running at {}://{}/)", spec.protocol.scheme(), u.addr), None, Some(*u)),
    };
    if unmanaged.is_none() && command.trim().is_empty() {
        return Err(input(
            "the start command is empty".into(),
            "give the command that starts your server, e.g. --cmd './server --port $PORT'",
        ));
    }
    let name = spec.stack_name();
    let short = &name[ADHOC_LANGUAGE.len() + 1..];
    if short.is_empty() || !short.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') {
        return Err(LabError::Input {
            what: "--name".into(),
            problem: format!("`{short}` is not a usable stack name"),
            hint: "use letters, digits, `-`, `_` and `.` only, e.g. --name my-api".into(),
        });
    }
    if !spec.dir.is_dir() {
        return Err(input(format!("the folder {} does not exist", spec.dir.display()), "run bakeoff bench from your server's folder"));
    }
    let record = spec.record();
    let setup = setup.map(|s| Setup {
        commands: vec![s],
        // The whole folder: any change to it builds again (build outputs are skipped).
        inputs: vec![".".into()],
        timeout: Duration::from_secs(1200),
        versions: None,
    });
    let commit = match (&record.git_commit, record.modified) {
        (Some(c), true) => format!(" at {} (modified)", &c[..c.len().min(12)]),
        (Some(c), false) => format!(" at {}", &c[..c.len().min(12)]),
        (None, _) => String::new(),
    };
    Ok(Stack {
        name,
        dir: spec.dir.clone(),
        language: ADHOC_LANGUAGE.into(),
        runtime: if unmanaged.is_some() { "unmanaged server".into() } else { "as the command starts it".into() },
        framework: "ad hoc".into(),
        server: command.clone(),
        description: format!("`{command}` in {}{commit}", spec.dir.display()),
        seed: None,
        kind: StackKind::Http,
        scenarios: spec.scenarios.clone(),
        services: vec![],
        toolchain: vec![],
        apt: vec![],
        setup,
        start_command: command,
        ready_timeout: spec.ready_timeout,
        warmup: None,
        variants: vec![Variant {
            name: "default".into(),
            database: None,
            env: BTreeMap::new(),
            scenarios: spec.scenarios.clone(),
            services: vec![],
            reproduces: None,
            protocol: spec.protocol,
        }],
        products_probe: None,
        profile: None,
        unmanaged,
    })
}

/// A name from the command: its program's file name (`python3 app.py` gives `app`, `./bin/server`
/// gives `server`), the last word before any flag that looks like a file, else the first word.
pub fn name_from_command(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().filter(|w| !w.contains('=') && !w.starts_with('-') && !w.starts_with('$')).collect();
    let skip = ["exec", "env", "sh", "python", "python3", "node", "java", "go", "run", "cargo", "uv", "npx"];
    let word = words.iter().find(|w| !skip.contains(w)).or(words.first()).copied().unwrap_or("server");
    let file = Path::new(word).file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let clean: String = file.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let clean = clean.trim_matches('-').to_lowercase();
    if clean.is_empty() {
        "server".into()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(command: &str) -> AdHocSpec {
        AdHocSpec {
            server: AdHocServer::Command { command: command.into(), setup: None },
            name: None,
            dir: std::env::temp_dir(),
            scenarios: vec![Scenario::Hello],
            ready_timeout: Duration::from_secs(5),
            protocol: WireProtocol::H1,
        }
    }

    #[test]
    fn names_come_from_the_program_and_skip_interpreters_and_settings() {
        assert_eq!(name_from_command("python3 app.py --port $PORT"), "app");
        assert_eq!(name_from_command("GOMAXPROCS=$WORKERS exec ./bin/my_server"), "my_server");
        assert_eq!(name_from_command("node server.mjs"), "server");
        assert_eq!(name_from_command("$X"), "server");
    }

    #[test]
    fn an_empty_command_or_a_bad_name_is_refused_with_a_hint() {
        let e = ephemeral(&spec(" ")).unwrap_err().to_string();
        assert!(e.contains("empty") && e.contains("hint"), "{e}");
        let mut s = spec("./srv $PORT");
        s.name = Some("a b".into());
        assert!(ephemeral(&s).unwrap_err().to_string().contains("--name"));
        let stack = ephemeral(&spec("./srv --port $PORT")).unwrap();
        assert_eq!(
            (stack.name.as_str(), stack.kind, stack.scenarios.as_slice()),
            ("adhoc/srv", StackKind::Http, [Scenario::Hello].as_slice())
        );
    }
}
