//! A server process the lab started: its own process group, pinned CPUs, output to a log file, a
//! bounded readiness wait (listening, and for HTTP an answer) that notices an early exit at once,
//! and a stop that reaps the whole group.

use crate::error::LabError;
use crate::machine::cgroup::CpuGroup;
use crate::machine::leftovers::{self, Leftover};
use bakeoff_load::CpuSet;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A server the lab started and owns: stopped, with its whole process group, on `stop` or drop.
pub struct ServerProcess {
    pub(crate) name: String,
    pub(crate) child: Child,
    pub(crate) log: PathBuf,
    exited: Option<ExitStatus>,
    /// `MARKER_VAR`'s value in this server's environment (and so in its children's).
    marker: String,
    /// The group was stopped (its pid may be reused: never signal it again).
    stopped: bool,
    /// Declared after `child` so it is dropped (removed) after the process was stopped.
    cpu_group: Option<CpuGroup>,
}

/// How to start a server.
pub struct Launch<'a> {
    /// Its name in messages, in its marker and in its cgroup's name.
    pub name: &'a str,
    /// The command, run as `sh -c command`.
    pub command: &'a str,
    /// Its working directory.
    pub dir: &'a Path,
    /// Environment added to the lab's own.
    pub env: &'a BTreeMap<String, String>,
    /// The CPUs it and its children are held on (empty: not pinned).
    pub cpus: &'a [usize],
    /// The file its standard output and error go to.
    pub log: PathBuf,
    /// The network namespace it starts in (`ip netns` name), or this process's own.
    pub netns: Option<&'a str>,
}

impl ServerProcess {
    /// Starts `sh -c command` in its own process group, pinned to `cpus` (inherited by children).
    pub fn start(launch: Launch<'_>) -> Result<ServerProcess, LabError> {
        let log_error = |e: std::io::Error| LabError::Input {
            what: launch.log.display().to_string(),
            problem: format!("cannot create the log: {e}"),
            hint: "check that the run directory is writable".into(),
        };
        let log = std::fs::File::create(&launch.log).map_err(log_error)?;
        let log_err = log.try_clone().map_err(log_error)?;
        let marker = leftovers::new_marker(launch.name);
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(launch.command)
            .current_dir(launch.dir)
            .envs(launch.env)
            .env(leftovers::MARKER_VAR, &marker)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .process_group(0);
        let cpus = CpuSet::new(launch.cpus).map_err(|e| LabError::NotReady {
            stack: launch.name.to_string(),
            reason: format!("cannot pin to CPUs {:?}: {e}", launch.cpus),
            log: launch.log.clone(),
            log_tail: String::new(),
        })?;
        let netns = match launch.netns {
            Some(name) => Some(open_netns(name).map_err(|reason| LabError::NotReady {
                stack: launch.name.to_string(),
                reason,
                log: launch.log.clone(),
                log_tail: String::new(),
            })?),
            None => None,
        };
        // Made before the spawn, so the child joins it before exec and every process it forks at
        // start-up (a prefork master's workers, a front proxy) is inside from its first instant.
        let cpu_group = CpuGroup::prepare(&group_name(launch.name), launch.cpus);
        let joining = cpu_group.as_ref().map(CpuGroup::joining);
        // SAFETY: the set, the namespace's descriptor and the groups' files were made before fork;
        // the closure makes write, setns and sched_setaffinity calls only, all async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(joining) = &joining {
                    joining.join_current();
                }
                if let Some(fd) = &netns {
                    use std::os::fd::AsRawFd;
                    if libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                cpus.apply_to_current()
            });
        }
        let child = cmd.spawn().map_err(|e| LabError::NotReady {
            stack: launch.name.to_string(),
            reason: format!("cannot run `sh -c {}`: {e}", launch.command),
            log: launch.log.clone(),
            log_tail: String::new(),
        })?;
        // A group the child could not join (a refused write) is joined from here, or given up.
        let cpu_group = cpu_group.filter(|g| g.holds(child.id()) || g.admit(child.id()));
        Ok(ServerProcess { name: launch.name.to_string(), child, log: launch.log, exited: None, marker, stopped: false, cpu_group })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The marker its processes carry in their environment ([`leftovers::MARKER_VAR`]).
    pub(crate) fn marker(&self) -> &str {
        &self.marker
    }

    /// The exit status if the process has exited (reaping it).
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().ok().flatten();
        }
        self.exited
    }

    /// Waits until `addr` accepts a connection, the process exits, or `timeout` passes.
    pub fn wait_ready(&mut self, addr: SocketAddr, timeout: Duration) -> Result<Duration, LabError> {
        super::ready::wait_ready(self, addr, timeout)
    }

    /// Waits until an HTTP request for `path` on `addr` gets a status line back (any status), the
    /// process exits, or `timeout` passes (see `machine::ready`).
    pub fn wait_answering(&mut self, addr: SocketAddr, path: &str, timeout: Duration) -> Result<Duration, LabError> {
        super::ready::wait_answering(self, addr, path, timeout)
    }

    /// After the first answer, waits at most `limit` for the whole process tree to go quiet (under
    /// a tenth of a core over a quarter second), so that work still going on at start-up is over
    /// before the warm-up: a prefork server's other workers importing the application (the first
    /// answer proves only one), a JVM compiling its start-up code. Returns None when it got quiet,
    /// else the tree's CPU use (in cores) over the last window: a server that is busy while idle
    /// (a background thread) is measured anyway, and the caller says so.
    pub(crate) fn wait_quiet(&mut self, limit: Duration) -> Option<f64> {
        let leader = self.pid();
        crate::machine::sampler::wait_tree_quiet(leader, Duration::from_millis(250), limit, || self.exited().is_some())
    }

    /// SIGTERM to the group, then SIGKILL after `grace`; reaps the leader; then kills whatever of
    /// the server still runs outside its group (found by cgroup and marker) and returns it: a
    /// stack that leaves a process behind broke the contract. Safe to call twice.
    pub fn stop(&mut self, grace: Duration) -> Vec<Leftover> {
        if !self.stopped {
            self.stop_group(grace);
            self.stopped = true;
        }
        let left = leftovers::find(&self.marker, self.cpu_group.as_ref());
        leftovers::kill_all(&left);
        left
    }

    fn stop_group(&mut self, grace: Duration) {
        let pgid = self.child.id() as i32;
        signal_group(pgid, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if self.exited().is_some() && !group_alive(pgid) {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        signal_group(pgid, libc::SIGKILL);
        let _ = self.child.wait();
        // Children of the group that the leader did not reap are re-parented; give them a moment.
        let deadline = Instant::now() + Duration::from_secs(2);
        while group_alive(pgid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.stopped {
            self.stop(Duration::from_secs(3));
        }
    }
}

impl super::ready::Starting for ServerProcess {
    fn exit(&mut self) -> Option<String> {
        self.exited().map(|s| s.to_string())
    }

    fn not_ready(&self, reason: String) -> LabError {
        LabError::NotReady { stack: self.name.clone(), reason, log: self.log.clone(), log_tail: log_tail(&self.log, 20) }
    }

    /// Why nothing listened on `addr`, as far as the process tree's own sockets tell: it listens on
    /// other ports (it ignores $PORT), or on none at all (it is slow, or serves something else).
    fn elsewhere(&self, addr: SocketAddr) -> String {
        let others: Vec<String> = crate::machine::sockets::listeners_of(&crate::machine::sampler::group_members(self.pid()))
            .iter()
            .filter(|a| a.port() != addr.port())
            .map(ToString::to_string)
            .collect();
        if others.is_empty() {
            " and it listens on no port at all (raise start.ready_timeout if it is just slow)".into()
        } else {
            format!(
                "; it listens on {} instead: it ignores $PORT (PORT={} in its environment); bind $HOST:$PORT",
                others.join(", "),
                addr.port()
            )
        }
    }
}

/// A cgroup name no other server of this or another lab process has: name, lab pid, a counter.
fn group_name(name: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{}-{n}", name.replace('/', "-"), std::process::id())
}

fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) on a process group we created; a stale group yields ESRCH, which is fine.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// Whether any process is still in the group (zombies count as gone).
pub fn group_alive(pgid: i32) -> bool {
    crate::machine::sampler::group_members(pgid as u32).iter().any(|&pid| !is_zombie(pid))
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

/// The last `lines` lines of a log file.
pub(crate) fn log_tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = std::fs::File::open(path) else { return String::from("(no log)") };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 * 1024)));
    let mut buf = String::new();
    let mut bytes = Vec::new();
    let _ = f.read_to_end(&mut bytes);
    buf.push_str(&String::from_utf8_lossy(&bytes));
    let all: Vec<&str> = buf.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A free TCP port on 127.0.0.1 (bound and released; the window for a race is small and a taken
/// port shows as a clear readiness error).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(0)
}

/// The namespace `name` as `ip netns` made it (`/run/netns/NAME`), opened for `setns`.
fn open_netns(name: &str) -> Result<std::fs::File, String> {
    let path = std::path::Path::new("/run/netns").join(name);
    std::fs::File::open(&path).map_err(|e| format!("cannot enter network namespace {name} ({}): {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The race this guards against: a shell that forks at once left its children outside the
    /// share group when the group was joined after the spawn, and in cgroup v1 each such process
    /// weighs as much as a whole peer server.
    #[test]
    fn every_process_a_server_forks_at_start_is_in_its_groups() {
        let scratch = std::env::temp_dir().join(format!("bakeoff-process-test-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let env = BTreeMap::new();
        let launch = Launch {
            name: "forking",
            command: "sleep 30 & sleep 30 & sleep 30 & wait",
            dir: &scratch,
            env: &env,
            cpus: &[0],
            log: scratch.join("forking.log"),
            netns: None,
        };
        let mut server = ServerProcess::start(launch).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut members = crate::machine::sampler::group_members(server.pid());
        while members.len() < 4 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            members = crate::machine::sampler::group_members(server.pid());
        }
        assert_eq!(members.len(), 4, "the shell and its three children: {members:?}");
        if let Some(group) = &server.cpu_group {
            for pid in &members {
                assert!(group.holds(*pid), "{pid} of {members:?} is outside the cpuset group");
                assert_eq!(group.shares_with(*pid), group.has_share_group(), "{pid} of {members:?} is outside the share group");
            }
        }
        assert!(server.stop(Duration::from_secs(2)).is_empty());
        let _ = std::fs::remove_dir_all(&scratch);
    }
}
