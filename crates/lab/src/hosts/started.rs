//! What a server host's agent runs for the controller: the servers it starts (each in its own process
//! group, pinned, logged, as the lab starts one locally), the CPU time and quiet of their trees, their
//! stops, and the stack setups it runs in its workspace. Every server still running when the session
//! ends is stopped with it, so a lost controller leaves nothing behind on the host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::host::process::{Launch, ServerProcess};
use crate::host::sampler;

/// How long a stopped server's group has to exit on SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// A server to start on the agent's host, as the controller describes it. Paths are the host's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteLaunch {
    /// Its name in messages and in its marker.
    pub name: String,
    /// The command, run as `sh -c command`.
    pub command: String,
    /// Its working directory (a stack folder of the host's workspace).
    pub dir: String,
    /// Environment added to the agent's own.
    pub env: BTreeMap<String, String>,
    /// The CPUs it is held on (empty: not pinned).
    pub cpus: Vec<usize>,
    /// The file its output goes to; its folder is made.
    pub log: String,
}

/// The state of a started server's tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeState {
    /// CPU seconds its tree has used so far (user and system).
    pub cpu_s: f64,
    /// How the server exited, when it has.
    pub exited: Option<String>,
}

/// The servers an agent started, by pid; all stopped when dropped.
#[derive(Default)]
pub(crate) struct Started {
    servers: BTreeMap<u32, ServerProcess>,
}

impl Started {
    /// Starts `launch`; its pid, or why it could not start (with the log's end).
    pub(crate) fn start(&mut self, launch: &RemoteLaunch) -> Result<u32, String> {
        let dir = Path::new(&launch.dir);
        if !dir.is_dir() {
            return Err(format!("{} is not a folder on this host", dir.display()));
        }
        let log = PathBuf::from(&launch.log);
        if let Some(folder) = log.parent() {
            std::fs::create_dir_all(folder).map_err(|e| format!("cannot make {}: {e}", folder.display()))?;
        }
        let server = ServerProcess::start(Launch {
            name: &launch.name,
            command: &launch.command,
            dir,
            env: &launch.env,
            cpus: &launch.cpus,
            log,
            netns: None,
        })
        .map_err(|e| e.to_string())?;
        let pid = server.pid();
        self.servers.insert(pid, server);
        Ok(pid)
    }

    /// The CPU time of server `pid`'s tree and whether it exited.
    pub(crate) fn tree(&mut self, pid: u32) -> Result<TreeState, String> {
        let server = self.servers.get_mut(&pid).ok_or_else(|| not_started(pid))?;
        let exited = server.exited().map(|s| s.to_string());
        Ok(TreeState { cpu_s: sampler::tree_cpu_seconds(pid), exited })
    }

    /// Waits at most `limit` for server `pid`'s tree to use under a tenth of a core over `window`;
    /// None when it did, else the cores it used over the last window.
    pub(crate) fn quiet(&mut self, pid: u32, window: Duration, limit: Duration) -> Result<Option<f64>, String> {
        let server = self.servers.get_mut(&pid).ok_or_else(|| not_started(pid))?;
        Ok(sampler::wait_tree_quiet(pid, window, limit, || server.exited().is_some()))
    }

    /// Stops server `pid` with its whole group; what of it was still running outside the group
    /// (killed now: the stack broke the contract).
    pub(crate) fn stop(&mut self, pid: u32) -> Result<Vec<String>, String> {
        let mut server = self.servers.remove(&pid).ok_or_else(|| not_started(pid))?;
        Ok(server.stop(STOP_GRACE).iter().map(ToString::to_string).collect())
    }
}

fn not_started(pid: u32) -> String {
    format!("no server with pid {pid} was started in this session")
}

/// Sets up `stacks` (names under `root`'s stacks/, cached there as `bakeoff setup` caches them);
/// the names of those that failed, each with why.
pub(crate) fn setup(root: &Path, stacks: &[String], cancel: &AtomicBool) -> Result<Vec<String>, String> {
    let catalog = crate::stacks::catalog::discover(&root.join("stacks"));
    let chosen = catalog.select(stacks).map_err(|e| e.to_string())?;
    let mut failed = Vec::new();
    for stack in chosen {
        let Some(job) = crate::stacks::setup::SetupJob::for_stack(stack) else { continue };
        let outcome = crate::stacks::setup::run_with_progress(&job, root, false, cancel, &mut |_| {});
        let done = outcome.map(|o| matches!(o, crate::stacks::setup::SetupOutcome::Done(_)));
        if let Err(e) = done.and_then(|done| crate::stacks::versions::record(stack, root, done)) {
            failed.push(format!("{}: {e}", stack.name));
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(command: &str, dir: &Path) -> RemoteLaunch {
        RemoteLaunch {
            name: "test/started".into(),
            command: command.into(),
            dir: dir.display().to_string(),
            env: BTreeMap::new(),
            cpus: Vec::new(),
            log: dir.join("logs").join("server.log").display().to_string(),
        }
    }

    #[test]
    fn a_started_server_is_measured_stopped_and_gone_and_the_rest_stop_when_dropped() {
        let dir = std::env::temp_dir().join(format!("bakeoff-started-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut started = Started::default();
        // Busy for about 0.3 s of CPU, then idle.
        let busy = started.start(&launch("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exec sleep 30", &dir)).unwrap();
        let idle = started.start(&launch("exec sleep 30", &dir)).unwrap();
        assert_eq!(started.quiet(busy, Duration::from_millis(200), Duration::from_secs(20)).unwrap(), None, "it goes quiet");
        let state = started.tree(busy).unwrap();
        assert!(state.cpu_s > 0.05 && state.exited.is_none(), "{state:?}");
        assert_eq!(started.stop(busy).unwrap(), Vec::<String>::new());
        assert!(!crate::host::process::group_alive(busy as i32), "stopped with its group");
        assert!(started.tree(busy).unwrap_err().contains("no server with pid"), "a stopped server is forgotten");
        assert!(started.start(&launch("true", &dir.join("missing"))).unwrap_err().contains("is not a folder"));
        assert!(dir.join("logs/server.log").exists(), "the log's folder is made");
        drop(started);
        assert!(!crate::host::process::group_alive(idle as i32), "the session's end stops what still runs");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
