//! The controller's side of the server's host: a session to its agent, the server's process found
//! there before anything runs (a wrong pid is refused with the host and how to find the right one),
//! the sink a link-ceiling probe sends to, and the watch of the server's tree over the measurement.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bakeoff_model::plan::place::Place;

use super::error::HostError;
use super::protocol::{Identity, ProcessFound, Reply, Request, ServerMeasure};
use super::session::{Session, SessionOptions};

/// How long the agent may take to answer a request that does no load.
const ANSWER: Duration = Duration::from_secs(10);

/// An open session to the server's host, with the server's process found there.
pub struct ServerHost {
    session: Session,
    found: ProcessFound,
}

impl ServerHost {
    /// Opens the session and finds process `pid` there; an unknown pid is refused before any load.
    pub fn open(place: &Place, opts: &SessionOptions, expect: &Identity, pid: u32) -> Result<ServerHost, HostError> {
        let mut session = Session::open(place, opts, expect)?;
        session.send(&Request::Check { pid })?;
        match session.recv(ANSWER)? {
            Reply::Process(found) => Ok(ServerHost { session, found }),
            Reply::Error { message } => {
                Err(HostError::NoServerProcess { host: session.host(), pid, cause: message, hint: pid_hint(place) })
            }
            other => Err(session.unexpected("check", &other)),
        }
    }

    /// The host as messages name it.
    pub fn host(&self) -> String {
        self.session.host()
    }

    /// The session (its hello says what the host is; its clock, the offset).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The server's process as found before the load.
    pub fn found(&self) -> &ProcessFound {
        &self.found
    }

    /// Opens a sink on `ip` (the server's own address) for `open`; its address for the senders.
    pub fn open_sink(&mut self, ip: IpAddr, open: Duration) -> Result<SocketAddr, HostError> {
        let request = Request::Sink { bind: ip.to_string(), open_ms: open.as_millis() as u64 };
        let hint = "the load's address must be one of the server host's own; without it the link ceiling is not measured";
        match self.session.ask(&request, ANSWER, hint)? {
            Reply::Sink { port } => Ok(SocketAddr::new(ip, port)),
            other => Err(self.session.unexpected("sink", &other)),
        }
    }

    /// Watches the server's tree from `zero_ns` (the controller's clock; the host's offset is
    /// added here) until `finish`.
    pub fn watch(&mut self, zero_ns: u64) -> Result<(), HostError> {
        watch_on(&mut self.session, self.found.pid, zero_ns)
    }

    /// Stops the watch and answers what it measured.
    pub fn finish(&mut self) -> Result<ServerMeasure, HostError> {
        finish_on(&mut self.session)
    }

    /// Says bye to the agent and ends the session.
    pub fn close(self) {
        self.session.close();
    }
}

/// Asks the session's agent to watch the tree of `pid` from `zero_ns` (the controller's clock; the
/// host's offset is added here).
pub(crate) fn watch_on(session: &mut Session, pid: u32, zero_ns: u64) -> Result<(), HostError> {
    let zero_at_ns = (zero_ns as i64 + session.clock().offset_ns) as u64;
    let hint = pid_hint(session.place());
    match session.ask(&Request::Watch { pid, zero_at_ns }, ANSWER, &hint)? {
        Reply::Watching => Ok(()),
        other => Err(session.unexpected("watch", &other)),
    }
}

/// Stops the session's watch and answers what it measured.
pub(crate) fn finish_on(session: &mut Session) -> Result<ServerMeasure, HostError> {
    match session.ask(&Request::Unwatch, ANSWER, "install the controller's build there")? {
        Reply::Watched { server } => Ok(*server),
        other => Err(session.unexpected("unwatch", &other)),
    }
}

/// How to find the server's pid as its host numbers it.
fn pid_hint(place: &Place) -> String {
    let how = match place {
        Place::Netns(ns) => format!("`ip netns pids {ns}` lists the processes of that namespace"),
        Place::Ssh { user, host, port } => format!("`ssh -p {port} {user}@{host} pgrep -af SERVER` lists them there"),
        Place::Local => "`pgrep -af SERVER` lists them".to_string(),
    };
    format!("pass --server-pid with the pid of the server's main process as that host numbers it: {how}")
}
