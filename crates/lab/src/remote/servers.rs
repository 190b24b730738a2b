//! The controller's side of a host that runs the lab's servers or services: one session to its
//! agent, the project's workspace made there (sent only when the host lacks those files), stacks
//! set up there, and servers and services started, metered and stopped there by their pid on that
//! host.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bakeoff_model::plan::place::Place;

use super::error::HostError;
use super::protocol::{Identity, PathMeasure, Reply, Request, ServerMeasure, ServiceLaunch, StartedService};
use super::session::{Session, SessionOptions};
use super::started::{RemoteLaunch, TreeState};
use super::workspace;
use crate::machine::cpu_meter::CpuReading;

/// How long the agent may take to answer a request that waits on nothing.
const ANSWER: Duration = Duration::from_secs(10);
/// How long a host may take to set stacks up (each setup command is bounded by its own timeout).
const SETUP: Duration = Duration::from_secs(4 * 3600);
/// How long a host may take to unpack a run's fixtures.
const UNPACK: Duration = Duration::from_secs(60);
/// How long a host may take to start a service: PostgreSQL's initdb and seeding, or the document
/// store's first build there.
const SERVICE: Duration = Duration::from_secs(20 * 60);
/// How often a waiting setup looks for its answer and for a cancel.
const POLL: Duration = Duration::from_millis(50);

/// An open session to a server host, with the project's workspace there.
pub struct RemoteServers {
    session: Session,
    root: String,
    sent: bool,
}

impl RemoteServers {
    /// Opens the session and makes the workspace of `project_root`'s files there.
    pub fn open(place: &Place, opts: &SessionOptions, expect: &Identity, project_root: &Path) -> Result<RemoteServers, HostError> {
        let mut session = Session::open(place, opts, expect)?;
        let packed = workspace::pack(project_root)?;
        let (root, sent) = workspace::ship(&mut session, &packed)?;
        Ok(RemoteServers { session, root, sent })
    }

    /// The host as messages name it.
    pub fn host(&self) -> String {
        self.session.host()
    }

    /// The session (its hello says what the host is; its clock, the offset).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The workspace's folder on the host.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Whether opening sent the project's files (false: the host had them from an earlier run).
    pub fn sent_files(&self) -> bool {
        self.sent
    }

    /// Where `local` (a path under `project_root`, such as a stack's folder) is on the host.
    pub fn path_of(&self, project_root: &Path, local: &Path) -> Result<String, HostError> {
        let relative = local.strip_prefix(project_root).map_err(|_| HostError::Agent {
            host: self.host(),
            message: format!("{} is outside the project, so it was not sent to the host", local.display()),
            hint: format!("keep what the server needs under {}", project_root.display()),
        })?;
        Ok(Path::new(&self.root).join(relative).display().to_string())
    }

    /// Sets `stacks` up on the host (names, languages or `all`), cached there as `bakeoff setup`
    /// caches them; what each recorded of its versions there (`name version` lines), by stack.
    /// `cancel` stops the setup there: the build that runs and the stacks after it.
    pub fn setup(&mut self, stacks: &[String], cancel: &AtomicBool) -> Result<BTreeMap<String, String>, HostError> {
        self.session.send(&Request::Setup { root: self.root.clone(), stacks: stacks.to_vec() })?;
        let hint = format!("run `bakeoff setup STACK` on {} to see the whole output", self.host());
        let (deadline, mut cancelled) = (Instant::now() + SETUP, false);
        let reply = loop {
            if let Some(reply) = self.session.try_recv()? {
                break reply;
            }
            if cancel.load(Ordering::Relaxed) && !cancelled {
                self.session.send(&Request::Cancel)?;
                cancelled = true;
            }
            if Instant::now() > deadline {
                return Err(self.session.lost(&format!("the setup took over {SETUP:?}")));
            }
            std::thread::sleep(POLL);
        };
        let refused = |message: String| HostError::Agent { host: self.host(), message, hint: hint.clone() };
        match reply {
            Reply::SetUp { .. } if cancelled => Err(refused("the setup was stopped".into())),
            Reply::SetUp { failed, versions } if failed.is_empty() => Ok(versions),
            Reply::SetUp { failed, .. } => Err(refused(format!("setup failed: {}", failed.join("; ")))),
            Reply::Error { message } => Err(refused(message)),
            other => Err(self.session.unexpected("setup", &other)),
        }
    }

    /// Starts a server on the host; its pid there, and the port chosen for it when the launch
    /// asked for one.
    pub fn start(&mut self, launch: RemoteLaunch) -> Result<(u32, Option<u16>), HostError> {
        let hint = format!("its log on {} is {}", self.host(), launch.log);
        match self.session.ask(&Request::Start { launch: Box::new(launch) }, ANSWER, &hint)? {
            Reply::Started { pid, port } => Ok((pid, port)),
            other => Err(self.session.unexpected("start", &other)),
        }
    }

    /// Starts a backing service on the host (for a run folder this session made); what it is and
    /// where it listens.
    pub fn start_service(&mut self, service: ServiceLaunch) -> Result<StartedService, HostError> {
        let hint =
            format!("its log is in the run's folder on {}; `apt-get install postgresql nginx maven` there if it lacks them", self.host());
        match self.session.ask(&Request::StartService { service: Box::new(service) }, SERVICE, &hint)? {
            Reply::ServiceStarted(started) => Ok(started),
            other => Err(self.session.unexpected("start_service", &other)),
        }
    }

    /// Opens a sink on `ip` (the servers' address there) for `open`; its port, for a link-ceiling
    /// probe.
    pub fn open_sink(&mut self, ip: std::net::IpAddr, open: Duration) -> Result<u16, HostError> {
        let request = Request::Sink { bind: ip.to_string(), open_ms: open.as_millis() as u64 };
        match self.session.ask(&request, ANSWER, "the servers' address must be one of the host's own")? {
            Reply::Sink { port } => Ok(port),
            other => Err(self.session.unexpected("sink", &other)),
        }
    }

    /// Measures the path from the host to `target` (a sink elsewhere): round trips by `connects`
    /// TCP connects, and the link's ceiling by sending to it for `send`.
    pub fn probe(&mut self, target: &str, connects: u32, send: Duration) -> Result<PathMeasure, HostError> {
        let request = Request::Probe { target: target.into(), connects, sink: Some(target.into()), send_ms: send.as_millis() as u64 };
        match self.session.ask(&request, send + Duration::from_secs(15), "the other host's address must be reachable from this one")? {
            Reply::Probed { path } => Ok(path),
            other => Err(self.session.unexpected("probe", &other)),
        }
    }

    /// Makes run `run`'s folder on the host with the fixtures of the folder `data` in its `data`;
    /// its path there.
    pub fn run_folder(&mut self, run: &str, data: &Path) -> Result<String, HostError> {
        let tar = workspace::pack_folder(data).map_err(|cause| HostError::Packing {
            step: format!("tar of {}", data.display()),
            cause,
            hint: "check the run's scratch folder is readable and GNU tar is installed".into(),
        })?;
        let request = Request::RunFolder { run: run.to_string(), data_tar_b64: base64::engine::general_purpose::STANDARD.encode(tar) };
        match self.session.ask(&request, UNPACK, "the host's temporary folder must be writable and have room for the fixtures")? {
            Reply::RunFolder { path } => Ok(path),
            other => Err(self.session.unexpected("run_folder", &other)),
        }
    }

    /// Sets a text column of a `product` row in the SQLite file `path` there (a cell's, under the
    /// run's folder).
    pub fn set_product_text(&mut self, path: &str, key: &str, (id, field, value): (i64, &str, &str)) -> Result<(), HostError> {
        let request = Request::SetProductText { path: path.into(), key: key.into(), id, field: field.into(), value: value.into() };
        match self.session.ask(&request, ANSWER, "the cell's SQLite file must be in the run's folder there")? {
            Reply::ProductTextSet => Ok(()),
            other => Err(self.session.unexpected("set_product_text", &other)),
        }
    }

    /// Removes a run folder this session made on the host.
    pub fn discard(&mut self, path: &str) -> Result<(), HostError> {
        match self.session.ask(&Request::Discard { path: path.to_string() }, ANSWER, "remove it by hand")? {
            Reply::Discarded => Ok(()),
            other => Err(self.session.unexpected("discard", &other)),
        }
    }

    /// The CPU time of server `pid`'s tree so far, and whether it exited.
    pub fn tree(&mut self, pid: u32) -> Result<TreeState, HostError> {
        match self.session.ask(&Request::Tree { pid }, ANSWER, "start the server through this session first")? {
            Reply::Tree(state) => Ok(state),
            other => Err(self.session.unexpected("tree", &other)),
        }
    }

    /// The precise CPU reading of server `pid`'s tree, read there now.
    pub fn cpu(&mut self, pid: u32) -> Result<CpuReading, HostError> {
        match self.session.ask(&Request::Cpu { pid }, ANSWER, "start the server through this session first")? {
            Reply::Cpu(reading) => Ok(reading),
            other => Err(self.session.unexpected("cpu", &other)),
        }
    }

    /// The addresses listening on `port` in server `pid`'s network namespace there.
    pub fn listening(&mut self, pid: u32, port: u16) -> Result<Vec<std::net::IpAddr>, HostError> {
        match self.session.ask(&Request::Listening { pid, port }, ANSWER, "start the server through this session first")? {
            Reply::Listening { addrs } => Ok(addrs),
            other => Err(self.session.unexpected("listening", &other)),
        }
    }

    /// Waits at most `limit` for server `pid`'s tree to go quiet over `window`; None when it did,
    /// else the cores it used over the last window.
    pub fn quiet(&mut self, pid: u32, window: Duration, limit: Duration) -> Result<Option<f64>, HostError> {
        let request = Request::Quiet { pid, window_ms: window.as_millis() as u64, limit_ms: limit.as_millis() as u64 };
        match self.session.ask(&request, limit + window + ANSWER, "start the server through this session first")? {
            Reply::Quiet { busy_cores } => Ok(busy_cores),
            other => Err(self.session.unexpected("quiet", &other)),
        }
    }

    /// Watches server `pid`'s tree from `zero_ns` (the controller's clock) until [`Self::finish`].
    pub fn watch(&mut self, pid: u32, zero_ns: u64) -> Result<(), HostError> {
        super::server_host::watch_on(&mut self.session, pid, zero_ns)
    }

    /// Stops the watch and answers what it measured.
    pub fn finish(&mut self) -> Result<ServerMeasure, HostError> {
        super::server_host::finish_on(&mut self.session)
    }

    /// Stops server `pid` with its group; what of it still ran outside the group (killed then).
    pub fn stop(&mut self, pid: u32) -> Result<Vec<String>, HostError> {
        match self.session.ask(&Request::Stop { pid }, ANSWER, "start the server through this session first")? {
            Reply::Stopped { leftovers } => Ok(leftovers),
            other => Err(self.session.unexpected("stop", &other)),
        }
    }

    /// Says bye to the agent and ends the session; the agent stops every server still running.
    pub fn close(self) {
        self.session.close();
    }
}
