//! A cell's server wherever the run places it: a process this lab started (on this machine or in a
//! namespace of it), or one the server host's agent started over the run's session to that host,
//! which this file also holds. Either answers its exit and stops with its whole group; the
//! schedules read both through the same meters (`meters`), so placing the server on a host of its
//! own changes no schedule.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use bakeoff_model::records::noise::TrialNoise;
use bakeoff_model::records::results::ProcessSample;

use crate::contract::verify::{Client, ServerTree, Wire};
use crate::error::LabError;
use crate::machine::cpu_meter::CpuReading;
use crate::machine::process::ServerProcess;
use crate::machine::ready::Starting;
use crate::machine::sampler::Sampler;
use crate::remote::servers::RemoteServers;
use crate::remote::session::{HostAccess, Session};
use crate::remote::started::TreeState;
use crate::remote::HostError;
use bakeoff_model::protocol::WireProtocol;

/// The process tree a cell measures: on this machine (a pid of this kernel), or on the server or
/// services host (a pid as that host numbers it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tree {
    /// A pid of this machine ([`crate::run::cell::start::NO_PROCESS`] for none).
    Here(u32),
    /// A server the server host's agent started.
    OnHost(u32),
    /// A service the services host's agent started (a baseline's upstream nginx).
    OnServices(u32),
}

/// The run's server (or services) host: its session, the run's folder there, and why it was
/// lost, once it was.
pub(crate) struct ServerHost {
    servers: RefCell<Option<RemoteServers>>,
    lost: RefCell<Option<String>>,
    /// The agent runs on this machine's kernel: its pids are this machine's.
    pub(crate) this_machine: bool,
    /// The CPUs the host's agent may use: the servers' there when the host is another machine.
    pub(crate) cpus: Vec<usize>,
    /// The run's folder on the host (fixtures in `data`, cells under `cells`), once made.
    pub(crate) run_folder: RefCell<Option<String>>,
    /// The project's folder here, whose files the host's workspace holds.
    pub(crate) project_root: PathBuf,
    /// As placed (`ssh://user@host:port`).
    pub(crate) place: String,
    /// How to reach it again, to stop what a lost session left there.
    access: HostAccess,
    /// What each stack set up there recorded of its versions (`name version` lines), by stack.
    pub(crate) versions: RefCell<std::collections::BTreeMap<String, String>>,
}

impl ServerHost {
    /// Wraps an open session to the server host, reached with `access`.
    pub(crate) fn new(servers: RemoteServers, project_root: PathBuf, access: HostAccess) -> ServerHost {
        let session = servers.session();
        let this_machine = session.on_this_machine();
        let cpus = session.hello().facts.as_ref().map(|f| f.cpuset.clone()).unwrap_or_default();
        let place = session.place().to_string();
        ServerHost {
            place,
            servers: RefCell::new(Some(servers)),
            lost: RefCell::new(None),
            this_machine,
            cpus,
            run_folder: RefCell::new(None),
            project_root,
            access,
            versions: RefCell::default(),
        }
    }

    /// The host as messages name it.
    pub(crate) fn host(&self) -> String {
        self.servers.borrow().as_ref().map(RemoteServers::host).unwrap_or_default()
    }

    /// Calls `f` on the session; a lost session is remembered, and every later call refused with
    /// its cause, so one loss is reported once and nothing waits on a dead host again.
    pub(crate) fn call<T>(&self, f: impl FnOnce(&mut RemoteServers) -> Result<T, HostError>) -> Result<T, String> {
        if let Some(lost) = self.lost.borrow().as_ref() {
            return Err(lost.clone());
        }
        let mut servers = self.servers.borrow_mut();
        let Some(s) = servers.as_mut() else { return Err("the server host's session is closed".into()) };
        let result = f(s);
        drop(servers);
        result.map_err(|e| {
            if matches!(e, HostError::SessionLost { .. }) {
                let lost = format!("{e}; {}", self.reap_after_loss());
                *self.lost.borrow_mut() = Some(lost.clone());
                return lost;
            }
            e.to_string()
        })
    }

    /// After a lost session: a new one, whose agent stops what servers of the lost one still run
    /// there (found by their markers), and says so; then it ends.
    fn reap_after_loss(&self) -> String {
        let place: Result<bakeoff_model::plan::place::Place, _> = self.place.parse();
        let Ok(place) = place else { return "its servers could not be looked for".into() };
        match Session::open(&place, &self.access.options, &self.access.identity) {
            Ok(s) => {
                let reaped = s.hello().reaped.clone();
                s.close();
                match reaped.len() {
                    0 => "a new session found nothing of it left running there".into(),
                    1 => format!("a new session stopped 1 process it left running there: {}", reaped[0]),
                    n => format!("a new session stopped {n} processes it left running there: {}", reaped.join(", ")),
                }
            }
            Err(e) => format!("its servers may still run there: a new session could not stop them ({e})"),
        }
    }

    /// Why the session was lost, once it was.
    pub(crate) fn lost(&self) -> Option<String> {
        self.lost.borrow().clone()
    }

    /// Removes the run's folder on the host (unless `keep`), then ends the session; the agent stops
    /// whatever still runs there.
    pub(crate) fn close(&self, keep: bool) {
        if let (false, Some(folder)) = (keep, self.run_folder.borrow_mut().take()) {
            let _ = self.call(|s| s.discard(&folder));
        }
        if let Some(s) = self.servers.borrow_mut().take() {
            s.close();
        }
    }
}

/// A server the lab started for a cell: stopped with its whole group on `stop` or when dropped.
pub(crate) enum Served {
    /// Started by this process.
    Here(ServerProcess),
    /// Started by the server host's agent.
    OnHost(HostedServer),
}

/// A server the server host's agent started.
pub(crate) struct HostedServer {
    pub(crate) name: String,
    pub(crate) pid: u32,
    pub(crate) host: Rc<ServerHost>,
    /// Its log, on the host.
    pub(crate) log: String,
    exited: Option<String>,
    stopped: bool,
}

impl HostedServer {
    /// The server `pid` the host's agent started as `name`, logging to `log` there.
    pub(crate) fn new(name: &str, pid: u32, host: Rc<ServerHost>, log: String) -> HostedServer {
        HostedServer { name: name.to_string(), pid, host, log, exited: None, stopped: false }
    }

    fn state(&mut self) -> Result<TreeState, String> {
        let pid = self.pid;
        self.host.call(|s| s.tree(pid))
    }
}

impl Served {
    /// The tree to measure.
    pub(crate) fn tree(&self) -> Tree {
        match self {
            Served::Here(p) => Tree::Here(p.pid()),
            Served::OnHost(h) => Tree::OnHost(h.pid),
        }
    }

    /// How it exited, once it has (a lost host counts: its servers went with it).
    pub(crate) fn exited(&mut self) -> Option<String> {
        match self {
            Served::Here(p) => p.exited().map(|s| s.to_string()),
            Served::OnHost(h) => h.exit(),
        }
    }

    /// Where its log is, for messages (on the host, for a server there).
    pub(crate) fn log(&self) -> String {
        match self {
            Served::Here(p) => p.log.display().to_string(),
            Served::OnHost(h) => format!("{} on {}", h.log, h.host.host()),
        }
    }

    /// Stops it with its whole group; what of it still ran outside the group (killed then).
    pub(crate) fn stop(&mut self, grace: Duration) -> Vec<String> {
        match self {
            Served::Here(p) => p.stop(grace).iter().map(ToString::to_string).collect(),
            Served::OnHost(h) => h.stop(),
        }
    }

    /// Waits until it answers HTTP for `path` on `addr`, in `wire`'s protocol; how long that took.
    pub(crate) fn wait_answering(&mut self, addr: SocketAddr, path: &str, wire: &Wire, timeout: Duration) -> Result<Duration, LabError> {
        use crate::machine::ready::{wait_answering, wait_answering_with};
        let starting: &mut dyn Starting = match self {
            Served::Here(p) => p,
            Served::OnHost(h) => h,
        };
        if wire.protocol == WireProtocol::H1 {
            return wait_answering(starting, addr, path, timeout);
        }
        let what = format!("{} (GET {path})", wire.protocol);
        let hint =
            |e: String| format!("{e} (a {} server reads PROTOCOL, and over TLS TLS_CERT and TLS_KEY, from its environment)", wire.protocol);
        let mut answers = || Client::over(addr, wire.clone(), Duration::from_secs(1)).get(path).map(|_| ()).map_err(hint);
        wait_answering_with(starting, addr, &what, timeout, &mut answers)
    }
}

impl HostedServer {
    fn stop(&mut self) -> Vec<String> {
        if std::mem::replace(&mut self.stopped, true) {
            return Vec::new();
        }
        let pid = self.pid;
        self.host.call(|s| s.stop(pid)).unwrap_or_default()
    }
}

impl Drop for HostedServer {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Starting for HostedServer {
    fn exit(&mut self) -> Option<String> {
        if self.exited.is_none() {
            self.exited = match self.state() {
                Ok(state) => state.exited.map(|e| match state.log_tail {
                    Some(tail) if !tail.trim().is_empty() => format!("{e}; its log ends:\n{tail}"),
                    _ => e,
                }),
                Err(lost) => Some(format!("its host was lost ({lost})")),
            };
        }
        self.exited.clone()
    }

    fn not_ready(&self, reason: String) -> LabError {
        LabError::Input {
            what: format!("{} on {}", self.name, self.host.host()),
            problem: format!("the server is not ready: {reason}"),
            hint: format!("its log on the host is {}; `bakeoff verify` of the stack there shows more", self.log),
        }
    }

    fn elsewhere(&self, _addr: SocketAddr) -> String {
        // Its sockets are the host's: the agent does not list them.
        String::new()
    }
}

/// A server's tree on the server host, as the verifier reads it: through the host's agent.
pub(crate) struct TreeOnHost {
    pub(crate) host: Rc<ServerHost>,
    pub(crate) pid: u32,
}

impl ServerTree for TreeOnHost {
    /// An empty reading when the host cannot be read: the cost check then finds no CPU and says so.
    fn cpu(&self) -> CpuReading {
        self.host.call(|s| s.cpu(self.pid)).unwrap_or_default()
    }

    fn listening_on(&self, port: u16) -> Vec<std::net::IpAddr> {
        self.host.call(|s| s.listening(self.pid, port)).unwrap_or_default()
    }
}

/// A cell's SQLite file on the server host, as the live-data probe changes it: through the agent.
pub(crate) struct SqliteOnHost {
    pub(crate) host: Rc<ServerHost>,
    /// Its path there.
    pub(crate) path: String,
    /// The id column.
    pub(crate) key: String,
}

impl crate::contract::verify::LiveData for SqliteOnHost {
    fn set_text(&self, id: i64, field: &str, value: &str) -> Result<(), String> {
        self.host.call(|s| s.set_product_text(&self.path, &self.key, (id, field, value)))
    }
}

/// A measurement's samples of a tree, being taken: here by the lab's sampler, on the host by its
/// agent's watch.
pub(crate) enum Meter {
    Here(Sampler),
    OnHost(Rc<ServerHost>),
    /// The watch could not be set: nothing is sampled.
    Nothing,
}

impl Meter {
    /// Stops it: its samples, and the host's own noise over them when the tree was on a host.
    pub(crate) fn finish(self) -> (Vec<ProcessSample>, Option<TrialNoise>) {
        match self {
            Meter::Here(s) => (s.finish(), None),
            Meter::OnHost(host) => match host.call(|s| s.finish()) {
                Ok(m) => (m.samples, Some(m.noise)),
                Err(_) => (Vec::new(), None),
            },
            Meter::Nothing => (Vec::new(), None),
        }
    }
}
