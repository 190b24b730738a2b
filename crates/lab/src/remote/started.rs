//! What a server or services host's agent runs for the controller: the servers and services it
//! starts (each in its own process group, pinned, logged, as the lab starts one locally), the CPU
//! time and quiet of their trees, their stops, and the stack setups it runs in its workspace.
//! Every server still running when the session ends is stopped with it, so a lost controller
//! leaves nothing behind on the host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use super::protocol::{RemoteLaunch, ServiceLaunch, TreeState};
use crate::machine::process::{Launch, ServerProcess};
use crate::machine::sampler;
use crate::services::{ServiceContext, Services, StartedService};

/// Where under the agent's home each running server's marker is kept, a file each, so that what an
/// agent killed outright (SIGKILL, no chance to stop its servers) left running is found by the
/// next agent on the host and stopped.
const REGISTRY: &str = ".cache/bakeoff/agent-servers";
/// How long a stopped server's group has to exit on SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// The servers an agent started, by pid, and the run folders it made; the servers are stopped
/// when dropped (the folders stay, with the servers' logs, until discarded).
#[derive(Default)]
pub(crate) struct Started {
    servers: BTreeMap<u32, ServerProcess>,
    runs: Vec<PathBuf>,
}

impl Started {
    /// Starts `launch` (its copies made first, a free port chosen when it asks for one); its pid
    /// and that port, or why it could not start.
    pub(crate) fn start(&mut self, launch: &RemoteLaunch) -> Result<(u32, Option<u16>), String> {
        let dir = Path::new(&launch.dir);
        if !dir.is_dir() {
            return Err(format!("{} is not a folder on this host", dir.display()));
        }
        let log = PathBuf::from(&launch.log);
        if let Some(folder) = log.parent() {
            std::fs::create_dir_all(folder).map_err(|e| format!("cannot make {}: {e}", folder.display()))?;
        }
        for [from, to] in &launch.copies {
            std::fs::copy(from, to).map_err(|e| format!("cannot copy {from} to {to}: {e}"))?;
        }
        // This host's build caches (a Rust stack's target folder), as its setup used them.
        let mut env = crate::stacks::setup::build_env(&launch.name);
        env.extend(launch.env.clone());
        let port = launch.port_var.as_ref().map(|var| {
            let port = crate::machine::process::free_port();
            env.insert(var.clone(), port.to_string());
            port
        });
        let server = ServerProcess::start(Launch {
            name: &launch.name,
            command: &launch.command,
            dir,
            env: &env,
            cpus: &launch.cpus,
            log,
            netns: None,
        })
        .map_err(|e| e.to_string())?;
        Ok((self.keep(server, &launch.name), port))
    }

    /// Starts a backing service for one of this session's run folders, reached at `service.ip`
    /// by the controller (whose address the ssh session names) and by the addresses it trusts;
    /// it is then a started server of this session like any other.
    pub(crate) fn start_service(&mut self, service: &ServiceLaunch) -> Result<StartedService, String> {
        let run = PathBuf::from(&service.run_folder);
        if !self.runs.contains(&run) {
            return Err(format!("{} is not a run folder of this session", run.display()));
        }
        let mut trust = service.trust.clone();
        trust.extend(ssh_client());
        let ctx = ServiceContext {
            project_root: Path::new(&service.root),
            run_dir: &run,
            data_dir: &run.join("data"),
            cpus: &service.cpus,
            external_docstore: None,
            netns: None,
            ip: service.ip,
            trust: &trust,
        };
        let (process, started) = Services::start_one(service.kind, &ctx).map_err(|e| e.to_string())?;
        self.keep(process, service.kind.id());
        Ok(started)
    }

    /// The live-data probe's change to a cell's SQLite file, which must be under a run folder of
    /// this session.
    pub(crate) fn set_product_text(&self, path: &str, key: &str, change: (i64, &str, &str)) -> Result<(), String> {
        let file = Path::new(path);
        let inside = !path.contains("..") && self.runs.iter().any(|r| file.starts_with(r));
        if !inside {
            return Err(format!("{path} is not in a run folder of this session"));
        }
        crate::services::postgres::set_product_text(file, key, change)
    }

    /// Keeps `server` until it is stopped or the session ends, its marker registered so that a
    /// later agent stops it should this one be killed outright; its pid.
    fn keep(&mut self, server: ServerProcess, name: &str) -> u32 {
        let pid = server.pid();
        if let Some(registry) = registry() {
            let _ = std::fs::create_dir_all(&registry).and_then(|()| std::fs::write(registry.join(server.marker()), name.as_bytes()));
        }
        self.servers.insert(pid, server);
        pid
    }

    /// Makes run `run`'s folder in this host's temporary folder, its fixtures unpacked into `data`.
    pub(crate) fn run_folder(&mut self, run: &str, data_tar_b64: &str) -> Result<String, String> {
        if run.is_empty() || !run.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(format!("`{run}` is not a run id (letters, digits and dashes)"));
        }
        let path = std::env::temp_dir().join(format!("bakeoff-{run}-host"));
        std::fs::create_dir_all(path.join("data")).map_err(|e| format!("cannot make {}: {e}", path.display()))?;
        super::workspace::unpack_into(&path.join("data"), data_tar_b64)?;
        self.runs.push(path.clone());
        Ok(path.display().to_string())
    }

    /// Removes a run folder this session made; any other path is refused.
    pub(crate) fn discard(&mut self, path: &str) -> Result<(), String> {
        let at =
            self.runs.iter().position(|r| r.as_os_str() == path).ok_or_else(|| format!("{path} is not a run folder of this session"))?;
        let folder = self.runs.remove(at);
        std::fs::remove_dir_all(&folder).map_err(|e| format!("cannot remove {}: {e}", folder.display()))
    }

    /// The CPU time of server `pid`'s tree and whether it exited.
    pub(crate) fn tree(&mut self, pid: u32) -> Result<TreeState, String> {
        let server = self.servers.get_mut(&pid).ok_or_else(|| not_started(pid))?;
        let exited = server.exited().map(|s| s.to_string());
        let log_tail = exited.as_ref().map(|_| crate::machine::process::log_tail(&server.log, 20));
        Ok(TreeState { cpu_s: sampler::tree_cpu_seconds(pid), exited, log_tail })
    }

    /// The precise CPU reading of server `pid`'s tree.
    pub(crate) fn cpu(&mut self, pid: u32) -> Result<crate::machine::cpu_meter::CpuReading, String> {
        self.servers.get(&pid).ok_or_else(|| not_started(pid))?;
        Ok(crate::machine::cpu_meter::CpuReading::of_tree(pid))
    }

    /// The addresses listening on `port` in server `pid`'s network namespace.
    pub(crate) fn listening(&mut self, pid: u32, port: u16) -> Result<Vec<std::net::IpAddr>, String> {
        self.servers.get(&pid).ok_or_else(|| not_started(pid))?;
        Ok(crate::contract::verify::listening_addresses(port, Some(pid)))
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
        let left = server.stop(STOP_GRACE).iter().map(ToString::to_string).collect();
        unregister(&server);
        Ok(left)
    }
}

impl Drop for Started {
    /// The session ended: every server still running stops, and leaves the registry.
    fn drop(&mut self) {
        for (_, mut server) in std::mem::take(&mut self.servers) {
            server.stop(STOP_GRACE);
            unregister(&server);
        }
    }
}

fn registry() -> Option<PathBuf> {
    super::workspace::agent_home().ok().map(|home| home.join(REGISTRY))
}

fn unregister(server: &ServerProcess) {
    if let Some(registry) = registry() {
        let _ = std::fs::remove_file(registry.join(server.marker()));
    }
}

/// Stops what servers started by agents that no longer run (killed outright, their host's session
/// cut) left on this host, found by their markers; what was stopped, a line each.
pub(crate) fn reap_orphans() -> Vec<String> {
    let Some(registry) = registry() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&registry) else { return Vec::new() };
    let mut reaped = Vec::new();
    for entry in entries.flatten() {
        let marker = entry.file_name().to_string_lossy().into_owned();
        // `name-AGENTPID-N`: the agent that started it.
        let agent = marker.rsplit('-').nth(1).and_then(|p| p.parse::<u32>().ok());
        if agent.is_some_and(is_agent) {
            continue;
        }
        let left = crate::machine::leftovers::find(&marker, None);
        crate::machine::leftovers::kill_all(&left);
        reaped.extend(left.iter().map(|l| format!("{l} of {marker}")));
        let _ = std::fs::remove_file(entry.path());
    }
    reaped
}

/// Whether `pid` is a running bakeoff process (an agent still serving its session).
fn is_agent(pid: u32) -> bool {
    crate::machine::leftovers::alive(pid)
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a.ends_with(b"bakeoff") || a == b"agent"))
}

/// The controller's address as this host sees it: the first field of the ssh session's
/// `SSH_CLIENT` (none outside ssh: an agent in a namespace of the controller's machine).
fn ssh_client() -> Option<std::net::IpAddr> {
    std::env::var("SSH_CLIENT").ok()?.split_whitespace().next()?.parse().ok()
}

fn not_started(pid: u32) -> String {
    format!("no server with pid {pid} was started in this session")
}

/// Sets up `stacks` (names under `root`'s stacks/, cached there as `bakeoff setup` caches them);
/// the names of those that failed, each with why, and the versions each set up recorded.
pub(crate) fn setup(root: &Path, stacks: &[String], cancel: &AtomicBool) -> Result<(Vec<String>, BTreeMap<String, String>), String> {
    let catalog = crate::stacks::catalog::discover(&root.join("stacks"));
    let chosen = catalog.select(stacks).map_err(|e| e.to_string())?;
    let (mut failed, mut versions) = (Vec::new(), BTreeMap::new());
    for stack in chosen {
        let Some(job) = crate::stacks::setup::SetupJob::for_stack(stack) else { continue };
        let outcome = crate::stacks::setup::run_with_progress(&job, root, false, cancel, &mut |_| {});
        let done = outcome.map(|o| o.has_new_outputs());
        match done.and_then(|done| crate::stacks::versions::record(stack, root, done)) {
            Err(e) => failed.push(format!("{}: {e}", stack.name)),
            Ok(()) => {
                let text = std::fs::read_to_string(crate::stacks::versions::path(root, &stack.name)).unwrap_or_default();
                versions.insert(stack.name.clone(), text);
            }
        }
    }
    Ok((failed, versions))
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
            copies: Vec::new(),
            port_var: None,
        }
    }

    #[test]
    fn a_started_server_is_measured_stopped_and_gone_and_the_rest_stop_when_dropped() {
        let dir = std::env::temp_dir().join(format!("bakeoff-started-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut started = Started::default();
        // Busy for about 0.3 s of CPU, then idle.
        let (busy, _) = started.start(&launch("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exec sleep 30", &dir)).unwrap();
        let (idle, _) = started.start(&launch("exec sleep 30", &dir)).unwrap();
        assert_eq!(started.quiet(busy, Duration::from_millis(200), Duration::from_secs(20)).unwrap(), None, "it goes quiet");
        let state = started.tree(busy).unwrap();
        assert!(state.cpu_s > 0.05 && state.exited.is_none(), "{state:?}");
        assert_eq!(started.stop(busy).unwrap(), Vec::<String>::new());
        assert!(!crate::machine::process::group_alive(busy as i32), "stopped with its group");
        assert!(started.tree(busy).unwrap_err().contains("no server with pid"), "a stopped server is forgotten");
        assert!(started.start(&launch("true", &dir.join("missing"))).unwrap_err().contains("is not a folder"));
        assert!(dir.join("logs/server.log").exists(), "the log's folder is made");
        drop(started);
        assert!(!crate::machine::process::group_alive(idle as i32), "the session's end stops what still runs");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_folder_holds_the_fixtures_and_a_start_gets_its_copy_a_port_and_its_log_end() {
        let fixtures = std::env::temp_dir().join(format!("bakeoff-started-fixtures-{}", std::process::id()));
        std::fs::create_dir_all(&fixtures).unwrap();
        std::fs::write(fixtures.join("products.sqlite"), "rows").unwrap();
        let tar = crate::remote::workspace::pack_folder(&fixtures).unwrap();
        let mut started = Started::default();
        let run = format!("test-{}", std::process::id());
        let folder =
            PathBuf::from(started.run_folder(&run, &base64::Engine::encode(&base64::engine::general_purpose::STANDARD, tar)).unwrap());
        assert_eq!(std::fs::read_to_string(folder.join("data/products.sqlite")).unwrap(), "rows", "the fixtures are unpacked");
        assert!(started.run_folder("../etc", "").unwrap_err().contains("not a run id"));
        let cell = folder.join("cells/001");
        std::fs::create_dir_all(&cell).unwrap();
        let mut l = launch("echo \"port $PORT\"; cat products.sqlite; exit 3", &cell);
        l.copies = vec![[folder.join("data/products.sqlite").display().to_string(), cell.join("products.sqlite").display().to_string()]];
        l.port_var = Some("PORT".into());
        let (pid, port) = started.start(&l).unwrap();
        let port = port.expect("a port was chosen");
        assert!(port > 0);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let state = loop {
            let state = started.tree(pid).unwrap();
            if state.exited.is_some() || std::time::Instant::now() > deadline {
                break state;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let tail = state.log_tail.expect("an exited server says what its log ends with");
        assert!(tail.contains(&format!("port {port}")) && tail.contains("rows"), "its port and its own copy: {tail}");
        // The live-data probe's change, in a file of the run folder only.
        let db = folder.join("data/p.sqlite");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE product (id INTEGER, name TEXT); INSERT INTO product VALUES (3, 'old');").unwrap();
        started.set_product_text(&db.display().to_string(), "id", (3, "name", "new")).unwrap();
        let name: String = conn.query_row("SELECT name FROM product WHERE id = 3", [], |r| r.get(0)).unwrap();
        assert_eq!(name, "new");
        assert!(started.set_product_text(&db.display().to_string(), "id", (3, "name; DROP", "x")).unwrap_err().contains("column names"));
        assert!(started.set_product_text("/tmp/x.sqlite", "id", (3, "name", "x")).unwrap_err().contains("not in a run folder"));
        assert!(started.discard("/tmp").unwrap_err().contains("not a run folder"), "only its own folders");
        started.discard(&folder.display().to_string()).unwrap();
        assert!(!folder.exists(), "the run folder is gone");
        std::fs::remove_dir_all(&fixtures).unwrap();
    }
}
