//! The document store: by default mongo-java-server (MongoDB wire protocol, memory backend) run from
//! the project's `services/docstore` jar; with `--docstore URL` a real MongoDB the user runs. Seeded
//! with the 100 fixture documents; the same jar's client role changes a document for the probe and
//! reads the find operations served (serverStatus.opcounters.query, as a real mongod reports it).

use super::{launch, service_dir, service_error, ServiceContext, ServiceProcess, StartedService};
use crate::contract::verify::LiveData;
use crate::error::LabError;
use crate::install::run_bounded;
use crate::machine::process::free_port;
use crate::stacks::setup::{self, SetupJob};
use bakeoff_model::scenario::ServiceKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The MongoDB-protocol document store with the documents fixture: started by the lab, or the one `--docstore` names.
pub struct Docstore {
    /// `mongodb://127.0.0.1:PORT/bakeoff` (the services' address in place of 127.0.0.1)
    pub url: String,
    pub(crate) description: String,
    jar: PathBuf,
    /// Where it listens; None for an external store.
    address: Option<std::net::SocketAddr>,
    process: Option<ServiceProcess>,
}

/// Builds (cached) and finds the docstore jar under `<root>/services/docstore`.
pub(crate) fn jar(project_root: &Path) -> Result<PathBuf, LabError> {
    let dir = project_root.join("services").join("docstore");
    let commands = vec!["mvn -q -B -o package -DskipTests || mvn -q -B package -DskipTests".to_string()];
    let inputs = vec!["pom.xml".to_string(), "src".to_string()];
    let apt = vec!["maven".to_string()];
    let job = SetupJob {
        name: "services/docstore",
        dir: &dir,
        apt: &apt,
        commands: &commands,
        inputs: &inputs,
        timeout: Duration::from_secs(900),
    };
    setup::run(&job, project_root, false)?;
    let mut jars: Vec<PathBuf> =
        glob::glob(&dir.join("target").join("*.jar").to_string_lossy()).map(|g| g.filter_map(Result::ok).collect()).unwrap_or_default();
    jars.retain(|j| !j.file_name().map(|n| n.to_string_lossy().starts_with("original-")).unwrap_or(true));
    jars.sort_by_key(|j| std::fs::metadata(j).map(|m| m.len()).unwrap_or(0));
    jars.pop().ok_or_else(|| {
        service_error(
            "docstore",
            format!("no jar in {}/target after the build", dir.display()),
            "run `mvn package` in services/docstore and read its output",
        )
    })
}

impl Docstore {
    pub(crate) fn start(ctx: &ServiceContext<'_>) -> Result<Docstore, LabError> {
        let jar = jar(ctx.project_root)?;
        let (url, description, address, process) = match ctx.external_docstore {
            Some(url) => (url.to_string(), format!("MongoDB at {url} (external)"), None, None),
            None => {
                let dir = service_dir(ctx, "docstore")?;
                let port = free_port();
                let command = format!("exec java -Xmx512m -jar '{}' serve {port} {}", jar.display(), ctx.ip);
                let p = launch(ctx, "docstore", &dir, &command, port)?;
                let address = std::net::SocketAddr::new(ctx.ip, port);
                (
                    format!("mongodb://{address}/bakeoff"),
                    "mongo-java-server (MongoDB wire protocol, memory backend)".to_string(),
                    Some(address),
                    Some(ServiceProcess::Here(p)),
                )
            }
        };
        let store = Docstore { url, description, jar, address, process };
        store
            .client(&["seed", &store.url, &ctx.data_dir.join("documents.json").to_string_lossy()])
            .map_err(|e| service_error("docstore", format!("seeding failed: {e}"), "check the store's log in the run directory"))?;
        Ok(store)
    }

    fn client(&self, args: &[&str]) -> Result<String, String> {
        let mut c = Command::new("java");
        c.arg("-jar").arg(&self.jar).args(args);
        run_bounded(&mut c, Duration::from_secs(60))
    }

    /// The docstore jar this store runs from (its `bench` role measures the store ceiling).
    pub(crate) fn jar_path(&self) -> &Path {
        &self.jar
    }

    /// The server's process id, as its host numbers it; None for an external store, which is not
    /// the lab's.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ServiceProcess::pid)
    }

    /// The store the services host's agent started, reached at its address from here; the client
    /// role runs from this machine's `jar`.
    pub(crate) fn on_host(s: &StartedService, jar: PathBuf) -> Docstore {
        let process = Some(ServiceProcess::OnHost(s.pid));
        Docstore { url: s.url.clone(), description: s.version.clone(), jar, address: Some(s.address), process }
    }

    /// Its process and what the controller needs of it (an external store has neither process nor
    /// address of the lab's: it is refused by the caller).
    pub(crate) fn into_started(self) -> (Option<ServiceProcess>, StartedService) {
        let pid = self.pid().unwrap_or_default();
        let address = self.address.unwrap_or_else(|| std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
        let started = StartedService { kind: ServiceKind::Docstore, pid, address, url: self.url, version: self.description };
        (self.process, started)
    }
}

impl LiveData for Docstore {
    fn set_text(&self, id: i64, field: &str, value: &str) -> Result<(), String> {
        self.client(&["set", &self.url, &id.to_string(), field, value]).map(|_| ())
    }

    fn reads(&self) -> Option<Result<u64, String>> {
        let out = self.client(&["finds", &self.url]);
        Some(out.and_then(|o| o.trim().parse().map_err(|e| format!("serverStatus.opcounters.query is not a count (`{}`): {e}", o.trim()))))
    }
}
