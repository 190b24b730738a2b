//! Real backing services a scenario needs (PostgreSQL, a MongoDB-protocol document store, nginx),
//! started by the lab on loopback (or in the network namespace a study places them in) in throwaway
//! directories, seeded from the fixtures, and stopped.

pub mod ceiling;
pub(crate) mod docstore;
mod nginx;
pub(crate) mod postgres;

use crate::error::LabError;
use crate::host::process::{Launch, ServerProcess};
use bakeoff_model::scenario::ServiceKind;
use std::collections::BTreeMap;
use std::net::IpAddr;
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
    /// The address they listen on and are reached at: 127.0.0.1, or their namespace's.
    pub ip: IpAddr,
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
