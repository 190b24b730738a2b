//! A run's roles on hosts of their own: the load comes from agents on the client hosts (split,
//! started at one instant, their histograms added exactly) instead of this process, and the servers
//! and the services start inside a network namespace of this machine, or on an ssh host by its
//! agent, bound to its address, so every request crosses a real link. What is not placed runs as
//! before.

use std::cell::RefCell;
use std::net::{IpAddr, SocketAddr};
use std::process::Command;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bakeoff_load::{LoadError, LoadPlan, LoadReport};
use bakeoff_model::plan::place::{Place, Roles};
use bakeoff_model::records::noise::HostNoise;

use crate::error::LabError;
use crate::remote::clients::{ClientSet, MergedRun};
use crate::remote::measured::{PathReport, CEILING_SEND, RTT_CONNECTS};
use crate::remote::protocol::{Hello, Reply, Request};
use crate::remote::servers::RemoteServers;
pub use crate::remote::session::HostAccess;
use crate::remote::session::{ClockOffset, Session};
use crate::remote::HostError;
use crate::run::cell::served::ServerHost;

/// The address a role's processes bind and are reached at (the servers': the load's target), and
/// the namespace they start in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerNet {
    /// `Some` when the servers start in this network namespace.
    pub netns: Option<String>,
    /// The address they bind (`HOST`) and are reached at.
    pub ip: IpAddr,
}

impl ServerNet {
    /// Loopback, as every run without a server placement.
    pub(crate) fn loopback() -> ServerNet {
        ServerNet { netns: None, ip: IpAddr::from([127, 0, 0, 1]) }
    }

    /// Where `place` puts the servers: a namespace's first global IPv4 address, or the address an
    /// ssh host's name resolves to here (the servers there bind it, so it must be the host's own).
    fn of(place: &Place) -> Result<ServerNet, LabError> {
        if let Place::Ssh { host, port, .. } = place {
            return ServerNet::of_ssh(host, *port);
        }
        let Place::Netns(name) = place else { return Ok(ServerNet::loopback()) };
        let bad = |problem: String, hint: &str| LabError::Input { what: format!("netns:{name}"), problem, hint: hint.into() };
        let out = Command::new("ip")
            .args(["-n", name, "-o", "-4", "addr", "show", "scope", "global"])
            .output()
            .map_err(|e| bad(format!("cannot run `ip`: {e}"), "install iproute2"))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(bad(said, "create the namespace first (`ip netns add NAME`); `ip netns list` shows those that exist"));
        }
        // `2: eth0    inet 10.1.2.3/24 brd ...`: the address after `inet`.
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let ip = text
            .split_whitespace()
            .skip_while(|w| *w != "inet")
            .nth(1)
            .and_then(|a| a.split('/').next())
            .and_then(|a| a.parse::<IpAddr>().ok())
            .ok_or_else(|| bad("the namespace has no IPv4 address".into(), "give it a veth link with an address this machine can reach"))?;
        Ok(ServerNet { netns: Some(name.clone()), ip })
    }
}

impl ServerNet {
    fn of_ssh(host: &str, port: u16) -> Result<ServerNet, LabError> {
        use std::net::ToSocketAddrs;
        let bad = |problem: String| LabError::Input {
            what: format!("ssh://{host}"),
            problem,
            hint: "give the server host by an address of its own that the clients reach (the servers there bind it)".into(),
        };
        let mut found = (host, port).to_socket_addrs().map_err(|e| bad(format!("its name does not resolve: {e}")))?;
        let ip = found.next().map(|a| a.ip()).ok_or_else(|| bad("its name resolves to no address".into()))?;
        if ip.is_loopback() {
            return Err(bad(format!("it resolves to {ip}, this machine's loopback")));
        }
        Ok(ServerNet { netns: None, ip })
    }
}

/// One host of the run as it answered: its role, its place, what it is and its clock.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunHost {
    /// `client`, `server` or `services`.
    pub role: &'static str,
    /// As placed.
    pub place: String,
    /// The agent runs on this machine's kernel (in a namespace of it, or over ssh into one).
    pub this_machine: bool,
    /// The agent's hello: its build, host name and what the machine is.
    pub hello: Hello,
    /// Its clock against the controller's.
    pub clock: ClockOffset,
}

impl RunHost {
    fn of(role: &'static str, s: &Session) -> RunHost {
        RunHost { role, place: s.place().to_string(), this_machine: s.on_this_machine(), hello: s.hello().clone(), clock: s.clock() }
    }
}

/// The run's placed roles, opened before anything is measured.
pub struct RunHosts {
    clients: Option<RefCell<ClientSet>>,
    /// The servers' host of its own, when they are placed on an ssh host.
    pub(crate) server_host: Option<Rc<ServerHost>>,
    /// The services' host of its own, when they are placed on an ssh host (the servers' one when
    /// both are placed on the same).
    pub(crate) services_host: Option<Rc<ServerHost>>,
    pub(crate) server: ServerNet,
    /// Where the services start and listen.
    pub(crate) services: ServerNet,
    /// The client hosts as they answered, for the run's record.
    pub hosts: Vec<RunHost>,
    /// Each client host's path to the servers' address, measured before anything runs.
    pub paths: Vec<PathReport>,
    /// Why the client hosts can no longer load: the first loss ends the run.
    lost: RefCell<Option<String>>,
    /// The noise on each client host of its own since the trial began (the noisiest load's).
    noise: RefCell<Vec<HostNoise>>,
}

impl RunHosts {
    /// Nothing placed.
    pub(crate) fn local() -> RunHosts {
        RunHosts {
            clients: None,
            server_host: None,
            services_host: None,
            server: ServerNet::loopback(),
            services: ServerNet::loopback(),
            hosts: Vec::new(),
            paths: Vec::new(),
            lost: RefCell::new(None),
            noise: RefCell::default(),
        }
    }

    /// Opens a session to the server host and to every client host (checking each agent's build;
    /// the server host gets `project_root`'s files) and finds the servers' address; an unreachable
    /// host, a refused key or another build is an error naming the host.
    pub fn open(roles: &Roles, access: Option<&HostAccess>, project_root: &std::path::Path) -> Result<RunHosts, LabError> {
        let server = ServerNet::of(&roles.server)?;
        let services = ServerNet::of(&roles.services)?;
        let mut hosts = RunHosts { server, services, ..RunHosts::local() };
        let reach = |role: &str| {
            access.ok_or_else(|| LabError::Input {
                what: format!("[hosts] {role}"),
                problem: format!("this front end cannot reach {role} hosts"),
                hint: "run the study with `bakeoff run`".into(),
            })
        };
        if let Place::Ssh { .. } = roles.server {
            let access = reach("server")?;
            let servers = RemoteServers::open(&roles.server, &access.options, &access.identity, project_root).map_err(host_error)?;
            hosts.hosts.push(RunHost::of("server", servers.session()));
            hosts.server_host = Some(Rc::new(ServerHost::new(servers, project_root.to_path_buf(), access.clone())));
        }
        if let Place::Ssh { .. } = roles.services {
            hosts.services_host = match &hosts.server_host {
                Some(same) if roles.services == roles.server => Some(same.clone()),
                _ => {
                    let access = reach("services")?;
                    let services =
                        RemoteServers::open(&roles.services, &access.options, &access.identity, project_root).map_err(host_error)?;
                    hosts.hosts.push(RunHost::of("services", services.session()));
                    Some(Rc::new(ServerHost::new(services, project_root.to_path_buf(), access.clone())))
                }
            };
        }
        if roles.client.is_empty() {
            if let Some(host) = &hosts.server_host {
                hosts.paths = vec![measure_path_here(&hosts.server, host)?];
            }
            hosts.paths.extend(measure_services_path(&hosts)?);
            return Ok(hosts);
        }
        let access = reach("client")?;
        if let (true, Some(far)) = (hosts.server.ip.is_loopback(), roles.client.iter().find(|p| **p != Place::Local)) {
            return Err(LabError::Input {
                what: "[hosts] client".into(),
                problem: format!("the servers listen on 127.0.0.1 of this machine, out of reach of the client {far}"),
                hint: "place the servers where the clients reach them (`--server-host netns:NAME`), or the clients `local`".into(),
            });
        }
        let mut set = ClientSet::open(&roles.client, &access.options, &access.identity).map_err(host_error)?;
        hosts.paths = measure_paths(&mut set, &hosts.server, hosts.server_host.as_deref())?;
        hosts.paths.extend(measure_services_path(&hosts)?);
        hosts.hosts.extend(set.sessions().iter().map(|s| RunHost::of("client", s)));
        hosts.clients = Some(RefCell::new(set));
        Ok(hosts)
    }

    /// Starts a trial's account of the client hosts' noise.
    pub(crate) fn clear_noise(&self) {
        self.noise.borrow_mut().clear();
    }

    /// The client hosts' noise since `clear_noise`: on other machines only (this machine's client
    /// CPUs are the lab's own probe's).
    pub(crate) fn take_noise(&self) -> Vec<HostNoise> {
        std::mem::take(&mut *self.noise.borrow_mut())
    }

    /// Keeps each other machine's noise over a load, the noisiest load's per host.
    fn note_noise(&self, run: &MergedRun, sessions: &[Session]) {
        let mut kept = self.noise.borrow_mut();
        for (c, _) in run.clients.iter().zip(sessions).filter(|(_, s)| !s.on_this_machine()) {
            if let Some(n) = &c.noise {
                keep_noisiest(&mut kept, HostNoise { host: c.host.clone(), noise: n.client.clone() });
            }
        }
    }

    /// Why a placed host stopped the run, naming the host and how its session ended: the client
    /// hosts' loss first, then the servers' host's, then the services'. None while all answer.
    pub(crate) fn lost(&self) -> Option<String> {
        let hosts = [&self.server_host, &self.services_host];
        self.lost.borrow().clone().or_else(|| hosts.into_iter().flatten().find_map(|h| h.lost()))
    }

    /// The pids of client agents on this machine's kernel: their CPU is the load's, not noise.
    pub(crate) fn local_agents(&self) -> Vec<u32> {
        self.hosts.iter().filter(|h| h.this_machine && h.role == "client").map(|h| h.hello.pid).collect()
    }

    /// The server and services hosts' agents on this machine's kernel: their CPU is the lab's,
    /// not noise.
    pub(crate) fn server_agents_here(&self) -> Vec<u32> {
        self.hosts.iter().filter(|h| h.this_machine && h.role != "client").map(|h| h.hello.pid).collect()
    }
}

/// Each client host's path to the servers' address, one host at a time so the ceilings do not
/// share the link: the round trip (median of TCP connects) and the ceiling (1 s of writes), both to
/// a sink opened on that address: in the servers' namespace, or by the server host's agent.
fn measure_paths(set: &mut ClientSet, server: &ServerNet, server_host: Option<&ServerHost>) -> Result<Vec<PathReport>, LabError> {
    let hosts = set.sessions().len() as u32;
    let open = crate::remote::measured::sink_window(hosts);
    let sink = open_sink(server, server_host, open)?.to_string();
    let mut paths = Vec::new();
    for s in set.sessions_mut() {
        let request = Request::Probe {
            target: sink.clone(),
            connects: RTT_CONNECTS,
            sink: Some(sink.clone()),
            send_ms: CEILING_SEND.as_millis() as u64,
        };
        let measure =
            match s.ask(&request, CEILING_SEND + Duration::from_secs(15), "install the controller's build there").map_err(host_error)? {
                Reply::Probed { path } => path,
                other => return Err(host_error(s.unexpected("probe", &other))),
            };
        paths.push(PathReport { from: s.host(), measure });
    }
    Ok(paths)
}

/// This machine's path to a server host of its own, when the load comes from here.
fn measure_path_here(server: &ServerNet, server_host: &ServerHost) -> Result<PathReport, LabError> {
    let sink = open_sink(server, Some(server_host), crate::remote::measured::sink_window(1))?.to_string();
    let measure = crate::remote::path::probe(&sink, RTT_CONNECTS, Some(&sink), CEILING_SEND);
    Ok(PathReport { from: bakeoff_model::plan::place::PATH_FROM_THIS_MACHINE.into(), measure })
}

/// The path from where the servers run (their host, their namespace, this machine) to a
/// services host of its own, which every query of theirs crosses; none when there is no such host
/// or the servers share it.
fn measure_services_path(hosts: &RunHosts) -> Result<Option<PathReport>, LabError> {
    let Some(services) = &hosts.services_host else { return Ok(None) };
    if hosts.server_host.as_ref().is_some_and(|s| Rc::ptr_eq(s, services)) {
        return Ok(None);
    }
    let sink = open_sink(&hosts.services, Some(services), CEILING_SEND + Duration::from_secs(4))?.to_string();
    let measure = match &hosts.server_host {
        Some(server) => server.call(|s| s.probe(&sink, RTT_CONNECTS, CEILING_SEND)),
        None => crate::remote::path::probe_in(hosts.server.netns.as_deref(), &sink, RTT_CONNECTS, Some(&sink), CEILING_SEND),
    }
    .map_err(|problem| LabError::Input {
        what: "the path from the servers to the services host".into(),
        problem,
        hint: "the servers' host must reach the services host's address".into(),
    })?;
    Ok(Some(PathReport { from: bakeoff_model::plan::place::PATH_FROM_THE_SERVERS.into(), measure }))
}

/// A sink on the servers' address for `open`: opened by the server host's agent, else in the
/// servers' namespace here.
fn open_sink(server: &ServerNet, server_host: Option<&ServerHost>, open: Duration) -> Result<SocketAddr, LabError> {
    let failed = |problem: String| LabError::Input {
        what: "the servers' address".into(),
        problem,
        hint: "check the server host has that address".into(),
    };
    let port = match server_host {
        Some(host) => host.call(|s| s.open_sink(server.ip, open)).map_err(failed)?,
        None => crate::remote::path::open_sink_in(server.netns.as_deref(), &server.ip.to_string(), open).map_err(failed)?,
    };
    Ok(SocketAddr::new(server.ip, port))
}

/// Adds `seen` to `kept`, or replaces its host's entry when `seen` is the noisier.
fn keep_noisiest(kept: &mut Vec<HostNoise>, seen: HostNoise) {
    match kept.iter_mut().find(|h| h.host == seen.host) {
        Some(h) if h.noise.other_percent < seen.noise.other_percent => *h = seen,
        Some(_) => {}
        None => kept.push(seen),
    }
}

fn host_error(e: HostError) -> LabError {
    LabError::Input { what: "hosts".into(), problem: e.to_string(), hint: "fix the host named above, then run again".into() }
}

/// A load that could not produce a report: from this process's generator or from a client host.
#[derive(Debug, thiserror::Error)]
pub enum LoadFailure {
    /// The lab's own load generator.
    #[error("{0}")]
    Local(#[from] LoadError),
    /// A client host (its session lost, its agent refusing).
    #[error("{0}")]
    Host(String),
}

impl LoadFailure {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            LoadFailure::Local(_) => "check the load flags",
            LoadFailure::Host(_) => "the run stops here; every trial measured before is kept",
        }
    }
}

impl RunHosts {
    /// Whether the load comes from client hosts rather than this process.
    pub(crate) fn has_client_hosts(&self) -> bool {
        self.clients.is_some()
    }

    /// Runs `plan` from the run's clients: this process, or the client hosts with their reports
    /// merged. A client host lost sets `cancel`, so the run ends after this load (everything
    /// stored is kept); every later load is refused with the same cause.
    pub(crate) fn load(&self, plan: &LoadPlan, cancel: &AtomicBool) -> Result<LoadReport, LoadFailure> {
        let Some(clients) = &self.clients else { return Ok(bakeoff_load::run_with_cancel(plan, cancel)?) };
        if let Some(lost) = self.lost.borrow().as_ref() {
            return Err(LoadFailure::Host(lost.clone()));
        }
        let mut set = clients.borrow_mut();
        let mut plan = plan.clone();
        // The lab's client CPUs are this machine's; another machine's agent is not pinned.
        if set.sessions().iter().any(|s| !s.on_this_machine()) {
            plan.pin_cpus.clear();
        }
        match set.run(&plan, cancel) {
            Ok(run) => {
                self.note_noise(&run, set.sessions());
                Ok(run.merged.report)
            }
            Err(e) => {
                let message = e.to_string();
                *self.lost.borrow_mut() = Some(message.clone());
                cancel.store(true, Ordering::Relaxed);
                Err(LoadFailure::Host(message))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::records::noise::CpuSetNoise;

    fn seen(host: &str, other: f64) -> HostNoise {
        HostNoise { host: host.into(), noise: CpuSetNoise { cpus: vec![0, 1], steal_percent: 0.0, other_percent: other } }
    }

    #[test]
    fn each_host_keeps_its_noisiest_load_of_the_trial() {
        let mut kept = Vec::new();
        for s in [seen("a", 3.0), seen("b", 1.0), seen("a", 9.5), seen("a", 2.0)] {
            keep_noisiest(&mut kept, s);
        }
        assert_eq!(kept, vec![seen("a", 9.5), seen("b", 1.0)]);
    }

    #[test]
    fn a_namespace_that_does_not_exist_is_refused_with_how_to_make_one() {
        let e = ServerNet::of(&Place::Netns("bo-no-such-namespace".into())).unwrap_err().to_string();
        assert!(e.contains("netns:bo-no-such-namespace") && e.contains("ip netns add"), "{e}");
        assert_eq!(ServerNet::of(&Place::Local).unwrap(), ServerNet::loopback());
    }
}
