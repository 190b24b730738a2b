//! A load from client hosts with everything measured kept measured: the server's tree metered by its
//! own host's agent, what each host is and how noisy it was, the path from each client to the server
//! (round trip and link ceiling) before the load, and every host's clock offset. The sessions open
//! and the server's process is found before anything runs.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bakeoff_load::LoadPlan;
use bakeoff_model::plan::place::Place;
use bakeoff_model::records::noise::TrialNoise;
use serde::Serialize;

use super::clients::{split, ClientSet, MergedRun};
use super::error::HostError;
use super::protocol::{Identity, MachineFacts, PathMeasure, Reply, Request, ServerMeasure};
use super::server_host::ServerHost;
use super::session::{ClockOffset, Session, SessionOptions};

/// Connects the round trip is the median of.
pub const RTT_CONNECTS: u32 = 20;
/// How long each client sends to the server host's sink for the link ceiling.
pub const CEILING_SEND: Duration = Duration::from_secs(1);

/// How long a sink stays open for `probes` ceiling probes one after another: each sends for
/// [`CEILING_SEND`] and is sent as long back, with room for its connects and the count's wait.
pub(crate) fn sink_window(probes: u32) -> Duration {
    (CEILING_SEND * 2 + Duration::from_secs(2)) * probes + Duration::from_secs(2)
}

/// Where the server runs and which process is it, as its host numbers it.
#[derive(Debug, Clone)]
pub struct ServerPlacement {
    /// The server's host.
    pub place: Place,
    /// The pid of the server's main process there; its whole tree is measured.
    pub pid: u32,
}

/// A host's part in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// It sent load.
    Client,
    /// It served.
    Server,
}

/// What ran where: one host, what it is and how noisy it was during the load.
#[derive(Debug, Clone, Serialize)]
pub struct HostReport {
    /// The host as placed.
    pub host: String,
    /// Its part.
    pub role: Role,
    /// Its own name.
    pub hostname: String,
    /// CPU model, cores, kernel, governor, the agent's CPUs.
    pub facts: Option<MachineFacts>,
    /// Its clock against the controller's, with its bound.
    pub clock: ClockOffset,
    /// Steal and other processes' CPU over the load (the server's: over the measurement).
    pub noise: Option<TrialNoise>,
}

/// The server's tree over the measurement and what it cost per request.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    /// The server's host as placed.
    pub host: String,
    /// What its agent measured.
    pub measure: ServerMeasure,
    /// Responses the clients measured in the same window.
    pub requests: u64,
    /// Server CPU per response, µs.
    pub cpu_us_per_request: f64,
    /// Percent of one core over the measurement.
    pub cpu_percent: f64,
}

/// The path from one client host to the server.
#[derive(Debug, Clone, Serialize)]
pub struct PathReport {
    /// The client host as placed.
    pub from: String,
    /// Its round trip and ceiling.
    pub measure: PathMeasure,
}

/// Everything beside the load's own report: hosts, server, paths.
#[derive(Debug, Clone, Serialize)]
pub struct HostsReport {
    /// The server's tree, when the server's host was given and answered to the end.
    pub server: Option<ServerReport>,
    /// Why the server's host measured nothing, when its session was lost during the load (the
    /// load's own results stand).
    pub server_lost: Option<String>,
    /// Every host, clients first in placement order, then the server.
    pub hosts: Vec<HostReport>,
    /// One per client, measured before the load.
    pub paths: Vec<PathReport>,
}

/// A measured run: the merged load and the hosts' measurements.
#[derive(Debug, Clone)]
pub struct MeasuredRun {
    /// The clients' runs, merged exactly.
    pub run: MergedRun,
    /// What the hosts measured.
    pub hosts: HostsReport,
}

/// Runs `plan` from `clients` against the server, measured on every host. Fails before any load
/// for a host that cannot be used or a server process that is not there; a server host lost
/// during the load is `server_lost`, the load's results kept.
pub fn run_measured(
    clients: &[Place],
    server: Option<&ServerPlacement>,
    plan: &LoadPlan,
    opts: &SessionOptions,
    expect: &Identity,
    cancel: &AtomicBool,
) -> Result<MeasuredRun, HostError> {
    split(plan, clients.len())?;
    let mut server = server.map(|s| ServerHost::open(&s.place, opts, expect, s.pid)).transpose()?;
    let mut set = ClientSet::open(clients, opts, expect)?;
    let paths = measure_paths(&mut set, server.as_mut(), plan)?;
    let start = set.next_start(server.as_ref().map_or(0, |s| s.session().clock().bound_ns));
    if let Some(s) = server.as_mut() {
        s.watch(start + plan.warmup.as_nanos() as u64)?;
    }
    let run = set.run_from(plan, cancel, start)?;
    let mut hosts: Vec<HostReport> =
        set.sessions().iter().zip(&run.clients).map(|(s, c)| host_report(s, Role::Client, c.noise.clone())).collect();
    set.close();
    // The load's results stand without the server's: a server host lost now costs its figures only.
    let (measure, server_lost) = match server.as_mut().map(ServerHost::finish) {
        Some(Ok(m)) => (Some(m), None),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, None),
    };
    let requests: u64 = run.merged.report.steps.iter().map(|s| s.requests).sum();
    let mut server_report = None;
    if let Some(host) = server {
        hosts.push(host_report(host.session(), Role::Server, measure.as_ref().map(|m| m.noise.clone())));
        server_report = measure.map(|m| ServerReport {
            host: host.host(),
            cpu_us_per_request: if requests > 0 { m.cpu_s * 1e6 / requests as f64 } else { 0.0 },
            cpu_percent: if m.wall_s > 0.0 { 100.0 * m.cpu_s / m.wall_s } else { 0.0 },
            requests,
            measure: m,
        });
        host.close();
    }
    Ok(MeasuredRun { run, hosts: HostsReport { server: server_report, server_lost, hosts, paths } })
}

fn host_report(s: &Session, role: Role, noise: Option<TrialNoise>) -> HostReport {
    HostReport { host: s.host(), role, hostname: s.hello().hostname.clone(), facts: s.hello().facts.clone(), clock: s.clock(), noise }
}

/// Each client's path to the load's address, one client at a time so the ceilings do not share the
/// link; the ceiling needs the server's host (its sink).
fn measure_paths(set: &mut ClientSet, server: Option<&mut ServerHost>, plan: &LoadPlan) -> Result<Vec<PathReport>, HostError> {
    let target = plan.targets[0].addr;
    let clients = set.sessions().len() as u32;
    let open = sink_window(clients);
    // A sink the server's host cannot open (the load's address is not one of its own: a NAT, a
    // balancer) costs the ceiling, not the run.
    let (sink, sink_problem) = match server.map(|s| s.open_sink(target.ip(), open)) {
        Some(Ok(addr)) => (Some(addr), None),
        Some(Err(HostError::Agent { message, .. })) => (None, Some(format!("no link ceiling: {message}"))),
        Some(Err(e)) => return Err(e),
        None => (None, None),
    };
    let mut paths = Vec::new();
    for s in set.sessions_mut() {
        let request = Request::Probe {
            target: target.to_string(),
            connects: RTT_CONNECTS,
            sink: sink.map(|a| a.to_string()),
            send_ms: CEILING_SEND.as_millis() as u64,
        };
        let wait = CEILING_SEND + Duration::from_secs(15);
        let mut measure = match s.ask(&request, wait, "install the controller's build there")? {
            Reply::Probed { path } => path,
            other => return Err(s.unexpected("probe", &other)),
        };
        if measure.problem.is_none() {
            measure.problem.clone_from(&sink_problem);
        }
        paths.push(PathReport { from: s.host(), measure });
    }
    Ok(paths)
}
