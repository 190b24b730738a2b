//! Real backing services a scenario needs (PostgreSQL, a MongoDB-protocol document store, nginx),
//! started by the lab on loopback (or in the network namespace a study places them in) in throwaway
//! directories, seeded from the fixtures, and stopped; or started by the agent of the services'
//! own ssh host, and reached here by their address.

pub mod ceiling;
pub(crate) mod docstore;
mod nginx;
pub(crate) mod postgres;

use crate::error::LabError;
use crate::machine::process::{Launch, ServerProcess};
use bakeoff_model::scenario::ServiceKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

/// Where services run and what they may use.
pub struct ServiceContext<'a> {
    /// The project folder, whose services/ holds the services' own programs and configuration.
    pub project_root: &'a Path,
    /// The run's scratch folder: each service gets a fresh folder in it.
    pub run_dir: &'a Path,
    /// Where the run's fixtures were written, to seed the stores from.
    pub data_dir: &'a Path,
    /// The CPUs the services are held on.
    pub cpus: &'a [usize],
    /// `--docstore mongodb://...`: use this store instead of starting one.
    pub external_docstore: Option<&'a str>,
    /// The network namespace the services start in (`[hosts] services`), or this process's own.
    pub netns: Option<&'a str>,
    /// The address they listen on and are reached at: 127.0.0.1, or their namespace's or host's.
    pub ip: IpAddr,
    /// Addresses outside the services' own subnet that must reach them too (the controller and
    /// the servers' host, when the services have a host of their own): PostgreSQL trusts them.
    pub trust: &'a [IpAddr],
}

/// A service's server: started by this process (stopped when dropped), or by the agent of the
/// services' host (stopped by that agent, with its session at the latest).
pub(crate) enum ServiceProcess {
    /// Started here.
    Here(ServerProcess),
    /// Started by the services host's agent: its pid there.
    OnHost(u32),
}

impl ServiceProcess {
    /// Its pid, as its host numbers it.
    pub(crate) fn pid(&self) -> u32 {
        match self {
            ServiceProcess::Here(p) => p.pid(),
            ServiceProcess::OnHost(pid) => *pid,
        }
    }

    /// The process this one owns, when it was started here.
    fn into_here(self) -> Option<ServerProcess> {
        match self {
            ServiceProcess::Here(p) => Some(p),
            ServiceProcess::OnHost(_) => None,
        }
    }
}

/// A service the services host's agent started, as it tells the controller: enough to reach it,
/// name it and meter it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartedService {
    /// Which service.
    pub kind: ServiceKind,
    /// Its server's pid on that host.
    pub pid: u32,
    /// Where it listens.
    pub address: SocketAddr,
    /// The URL a stack reaches it by (`postgres://…`, `mongodb://…`, `http://…`).
    pub url: String,
    /// What it is, for the run's provenance (`PostgreSQL 15.8`).
    pub version: String,
}

/// The services running for a run, started on first need and stopped on drop.
#[derive(Default)]
pub struct Services {
    /// PostgreSQL seeded with the products fixture.
    pub postgres: Option<postgres::Postgres>,
    /// The MongoDB-protocol document store seeded with the documents fixture (or an external one).
    pub docstore: Option<docstore::Docstore>,
    /// nginx serving the proxy scenario's upstream bodies.
    pub nginx: Option<nginx::Nginx>,
}

impl Services {
    /// The process ids of the running services (their trees are part of a cell's work).
    pub(crate) fn pids(&self) -> Vec<u32> {
        let mut out = Vec::new();
        out.extend(self.postgres.as_ref().map(|p| p.pid()));
        out.extend(self.docstore.as_ref().and_then(|d| d.pid()));
        out.extend(self.nginx.as_ref().map(|n| n.pid()));
        out
    }

    /// Starts every service in `kinds` that is not running yet.
    pub fn ensure(&mut self, kinds: &[ServiceKind], ctx: &ServiceContext<'_>) -> Result<(), LabError> {
        for kind in kinds {
            match kind {
                ServiceKind::Postgres if self.postgres.is_none() => self.postgres = Some(postgres::Postgres::start(ctx)?),
                ServiceKind::Docstore if self.docstore.is_none() => self.docstore = Some(docstore::Docstore::start(ctx)?),
                ServiceKind::Nginx if self.nginx.is_none() => self.nginx = Some(nginx::Nginx::start(ctx)?),
                _ => {}
            }
        }
        Ok(())
    }

    /// Starts one service of `kind` on its own (the services host's agent does, for the
    /// controller): its process, which the caller then owns, and what the controller needs of it.
    pub fn start_one(kind: ServiceKind, ctx: &ServiceContext<'_>) -> Result<(ServerProcess, StartedService), LabError> {
        let (process, started) = match kind {
            ServiceKind::Postgres => postgres::Postgres::start(ctx)?.into_started(),
            ServiceKind::Docstore => docstore::Docstore::start(ctx)?.into_started(),
            ServiceKind::Nginx => nginx::Nginx::start(ctx)?.into_started(),
        };
        let process = process.and_then(ServiceProcess::into_here).ok_or_else(|| {
            service_error(kind.id(), "it was not started by this process", "start the services host's services without `--docstore`")
        })?;
        Ok((process, started))
    }

    /// Takes in a service the services host's agent started (reached at its address from here);
    /// `project_root` is this machine's project (the document store's client runs from its jar).
    pub(crate) fn adopt(&mut self, s: StartedService, project_root: &std::path::Path) -> Result<(), LabError> {
        match s.kind {
            ServiceKind::Postgres => self.postgres = Some(postgres::Postgres::on_host(&s)),
            ServiceKind::Docstore => self.docstore = Some(docstore::Docstore::on_host(&s, docstore::jar(project_root)?)),
            ServiceKind::Nginx => self.nginx = Some(nginx::Nginx::on_host(&s)),
        }
        Ok(())
    }

    /// Whether `kind` runs.
    pub(crate) fn running(&self, kind: ServiceKind) -> bool {
        match kind {
            ServiceKind::Postgres => self.postgres.is_some(),
            ServiceKind::Docstore => self.docstore.is_some(),
            ServiceKind::Nginx => self.nginx.is_some(),
        }
    }

    /// Environment variables the running services give a stack.
    pub(crate) fn env(&self) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        if let Some(d) = &self.docstore {
            env.insert("DOCSTORE_URL".into(), d.url.clone());
        }
        if let Some(n) = &self.nginx {
            env.insert("UPSTREAM".into(), n.addr.to_string());
        }
        env
    }

    /// One line per running service for the run's provenance.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.postgres.as_ref().map(|p| p.version.clone()));
        out.extend(self.docstore.as_ref().map(|d| d.description.clone()));
        out.extend(self.nginx.as_ref().map(|n| n.version.clone()));
        out
    }
}

/// A fresh directory for a service inside the run directory.
pub(crate) fn service_dir(ctx: &ServiceContext<'_>, name: &str) -> Result<PathBuf, LabError> {
    let dir = ctx.run_dir.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| service_error(name, format!("cannot create {}: {e}", dir.display()), "check the run directory"))?;
    Ok(dir)
}

/// Starts a service's server (`sh -c command`) in `dir` on the services' CPUs, its output in
/// `<name>.log` there (in the services' namespace, if placed in one), and waits up to a minute until
/// it listens on `port` of the services' address.
pub(crate) fn launch(ctx: &ServiceContext<'_>, name: &str, dir: &Path, command: &str, port: u16) -> Result<ServerProcess, LabError> {
    let log = dir.join(format!("{name}.log"));
    let mut process = ServerProcess::start(Launch { name, command, dir, env: &BTreeMap::new(), cpus: ctx.cpus, log, netns: ctx.netns })?;
    process.wait_ready((ctx.ip, port).into(), std::time::Duration::from_secs(60))?;
    Ok(process)
}

pub(crate) fn service_error(service: &str, reason: impl Into<String>, hint: impl Into<String>) -> LabError {
    LabError::Service { service: service.into(), reason: reason.into(), hint: hint.into() }
}
