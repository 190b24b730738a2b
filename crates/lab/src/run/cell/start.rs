//! Starting what a cell needs: the backing services (once per run), a fresh cell directory, and the
//! stack's server with its environment, pinned to the server CPUs and waited for until it answers.

use crate::contract::verify::Wire;
use crate::error::LabError;
use crate::machine::process::{free_port, Launch, ServerProcess};
use crate::run::cell::bench::CellBench;
use crate::run::cell::services::ServiceSite;
use crate::run::events::Event;
use crate::stacks::manifest::{Database, Stack, StackKind, Variant};
use bakeoff_model::scenario::{Scenario, ServiceKind};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use crate::remote::started::RemoteLaunch;
use crate::run::cell::served::{HostedServer, Served, ServerHost, Tree};

/// A started stack: its server (None for a baseline or an unmanaged server) and its address.
type StartResult = Result<(Option<Served>, SocketAddr), LabError>;

impl CellBench<'_> {
    pub(crate) fn ensure_services(&mut self, stack: &Stack, scenarios: &[Scenario], variant: &Variant) -> Result<(), LabError> {
        let mut kinds: Vec<_> = scenarios.iter().flat_map(|&s| stack.services_for(s, variant)).collect();
        // A scenario file's own database is made in PostgreSQL for a variant that asks for it.
        if variant.database == Some(Database::Postgres) && self.file_dbs().file_of(scenarios).is_some() {
            kinds.push(ServiceKind::Postgres);
        }
        let site = ServiceSite {
            dirs: &self.dirs,
            settings: &self.settings,
            hosts: &self.place.hosts,
            external_docstore: self.external_docstore.as_deref(),
            cancel: self.cancel,
        };
        site.ensure(&mut self.services, kinds, &format!("{} {}", stack.name, variant.name), &mut *self.events)
    }

    /// The environment a stack starts with; `file_db` is the URL of a scenario file's own database,
    /// made for this start.
    /// `(data_dir, cell_dir)` are the fixtures' and the start's folders as the server's host
    /// names them. A host's build caches (`CARGO_TARGET_DIR`) are the host's own: added there.
    pub(crate) fn stack_env(
        &self,
        variant: &Variant,
        port: u16,
        workers: u32,
        (data_dir, cell_dir): (&Path, &Path),
        file_db: Option<&str>,
    ) -> BTreeMap<String, String> {
        let mut env = self.services.env();
        env.insert("HOST".into(), self.place.hosts.server.ip.to_string());
        env.insert("PORT".into(), port.to_string());
        env.insert("WORKERS".into(), workers.to_string());
        env.insert("POOL_SIZE".into(), self.settings.pool_size.to_string());
        env.insert("DATA_DIR".into(), data_dir.display().to_string());
        env.insert("RUN_DIR".into(), cell_dir.display().to_string());
        let db = match (file_db, variant.database, &self.services.postgres) {
            (Some(url), _, _) => url.to_string(),
            (None, Some(Database::Postgres), Some(pg)) => pg.url.clone(),
            _ => format!("sqlite://{}", cell_dir.join("products.sqlite").display()),
        };
        env.insert("DATABASE_URL".into(), db);
        env.extend(variant.env.clone());
        env.insert("PROTOCOL".into(), variant.protocol.id().into());
        if variant.protocol.tls() {
            let tls = self.dirs.certificate_paths();
            env.insert("TLS_CERT".into(), tls.cert.display().to_string());
            env.insert("TLS_KEY".into(), tls.key.display().to_string());
        }
        env
    }

    /// How `stack`'s `variant` is spoken to: its protocol, and over TLS the run's CA, which the
    /// certificate of a server the lab started must chain to (a server already running, `bench
    /// --url https://`, serves its own: any is accepted, its handshake's signature still checked).
    pub(crate) fn wire(&self, stack: &Stack, variant: &Variant) -> Wire {
        let ours = variant.protocol.tls() && stack.unmanaged.is_none();
        Wire { protocol: variant.protocol, ca: ours.then(|| self.dirs.certificate_paths().ca) }
    }

    /// Records what the start `label` was for in the run's index of cell directories once its
    /// server has stopped ([`LabDirs::note`](crate::run::LabDirs::note)); a scenario file's PostgreSQL database of the start
    /// is dropped then.
    pub(crate) fn note_cell(&self, label: &str, what: &str) {
        self.file_dbs().drop(label);
        self.dirs.note(label, what);
    }

    /// Starts `stack`'s `variant` with `workers` in a start directory of its own and waits until it
    /// answers: for a caller that sends requests of its own (a scenario file's verification and
    /// deck). No service is started and no scenario file's database is made: a caller that needs one
    /// verifies through the lab ([`CellBench::verify_variant`]). Its address, and its server
    /// (None for a baseline or an unmanaged server), stopped with [`ServerProcess::stop`] or when
    /// dropped. The start is not entered in the run's index of cells, which lists what the lab's
    /// own starts were for.
    pub fn serve(&mut self, stack: &Stack, variant: &Variant, workers: u32) -> Result<(Option<ServerProcess>, SocketAddr), LabError> {
        let label = self.dirs.new_cell(stack, variant);
        match self.start_stack(stack, variant, workers, &label, &[])? {
            (Some(Served::Here(p)), addr) => Ok((Some(p), addr)),
            (None, addr) => Ok((None, addr)),
            (Some(Served::OnHost(h)), _) => Err(LabError::Input {
                what: format!("{} on {}", stack.name, h.host.host()),
                problem: "this command starts its server on this machine only".into(),
                hint: "run it without a server host".into(),
            }),
        }
    }

    /// Starts the stack for `scenarios` (a baseline has no process: its address is the upstream's;
    /// an unmanaged server is already running); a scenario file among them that has a database
    /// gets it made afresh for this start.
    pub(crate) fn start_stack(
        &mut self,
        stack: &Stack,
        variant: &Variant,
        workers: u32,
        label: &str,
        scenarios: &[Scenario],
    ) -> StartResult {
        if stack.kind == StackKind::Baseline {
            let nginx = self
                .services
                .nginx
                .as_ref()
                .ok_or_else(|| LabError::Selection(format!("{} is a baseline but no upstream runs", stack.name)))?;
            return Ok((None, nginx.addr));
        }
        if let Some(u) = stack.unmanaged {
            // Not started by the lab: it must answer already, and it is never stopped.
            if std::net::TcpStream::connect_timeout(&u.addr, std::time::Duration::from_secs(2)).is_err() {
                return Err(LabError::Input {
                    what: format!("http://{}/", u.addr),
                    problem: "nothing accepts connections there".into(),
                    hint: "start your server first (or let bakeoff start it with --cmd)".into(),
                });
            }
            return Ok((None, u.addr));
        }
        if variant.protocol.tls() {
            self.dirs.certificate(self.place.hosts.server.ip)?;
        }
        if let Some(host) = self.place.server_host() {
            if variant.protocol.tls() {
                return Err(LabError::Input {
                    what: format!("{} {} on {}", stack.name, variant.name, host.host()),
                    problem: format!("a {} cell serves the run's certificate, which is made on this machine", variant.protocol),
                    hint: "measure TLS cells with the servers on this machine or in a namespace of it".into(),
                });
            }
            // A scenario file's database in PostgreSQL is reached over the link; a SQLite one is a
            // file made here.
            if self.file_dbs().file_of(scenarios).is_some() && variant.database != Some(Database::Postgres) {
                return Err(LabError::Input {
                    what: format!("{} {} on {}", stack.name, variant.name, host.host()),
                    problem: "a scenario file's own SQLite database is made on this machine, out of the server host's reach".into(),
                    hint: "run the file's PostgreSQL variant there, or this cell with the servers on this machine or in a namespace of it"
                        .into(),
                });
            }
            let file_db = self.file_dbs().make(scenarios, variant, label)?;
            return self.start_on_host(host, (stack, variant, workers), label, file_db.as_deref());
        }
        let cell_dir = self.dirs.cell_dir(label);
        // Each cell gets its own copy of the SQLite database, so a variant that changes the file
        // (WAL mode) or a crashed probe cannot leak into the next cell.
        let db = cell_dir.join("products.sqlite");
        std::fs::copy(self.dirs.data_dir.join("products.sqlite"), &db).map_err(|e| LabError::Input {
            what: db.display().to_string(),
            problem: format!("cannot copy the SQLite fixture: {e}"),
            hint: "check free space in the temporary directory".into(),
        })?;
        let file_db = self.file_dbs().make(scenarios, variant, label)?;
        let port = free_port();
        let mut env = self.stack_env(variant, port, workers, (&self.dirs.data_dir, &cell_dir), file_db.as_deref());
        for (k, v) in crate::stacks::setup::build_env(&stack.name) {
            env.entry(k).or_insert(v);
        }
        let server = ServerProcess::start(Launch {
            name: &stack.name,
            command: &stack.start_command,
            dir: &stack.dir,
            env: &env,
            cpus: &self.settings.server_cpus,
            log: cell_dir.join("server.log"),
            netns: self.place.hosts.server.netns.as_deref(),
        })?;
        let addr = SocketAddr::new(self.place.hosts.server.ip, port);
        self.until_ready(Served::Here(server), stack, variant, addr)
    }

    /// Waits for a started server to answer, then to go quiet (see [`ServerProcess::wait_quiet`]).
    fn until_ready(&mut self, mut server: Served, stack: &Stack, variant: &Variant, addr: SocketAddr) -> StartResult {
        // Ready means answering: an HTTP stack's `/` (a 404 counts), or nginx's smallest body
        // through a proxy, so a proxy that listens but cannot reach its upstream is not ready.
        let probe = if stack.kind == StackKind::Proxy { "/bytes/12" } else { "/" };
        let answered = server.wait_answering(addr, probe, &self.wire(stack, variant), stack.ready_timeout)?;
        let quiet = match &mut server {
            Served::Here(p) => p.wait_quiet(stack.ready_timeout.saturating_sub(answered)),
            Served::OnHost(_) => {
                self.place.wait_tree_quiet(server.tree(), Duration::from_millis(250), stack.ready_timeout.saturating_sub(answered))
            }
        };
        if let Some(cores) = quiet {
            (self.events)(Event::StillBusyAfterStart { stack: &stack.name, cores });
        }
        Ok((Some(server), addr))
    }

    /// Starts the stack on the server host, in a cell folder of the run's folder there, with its own
    /// copy of the SQLite fixture, a port the host's agent chose and the scenario file's
    /// PostgreSQL database (`file_db`) when it has one.
    fn start_on_host(
        &mut self,
        host: Rc<ServerHost>,
        (stack, variant, workers): (&Stack, &Variant, u32),
        label: &str,
        file_db: Option<&str>,
    ) -> StartResult {
        let refuse = |problem: String| {
            // A lost host stops the run: what was measured is kept, nothing more starts there.
            let lost = host.lost().is_some();
            if lost {
                self.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            LabError::Input {
                what: format!("{} {} on {}", stack.name, variant.name, host.host()),
                problem,
                hint: if lost {
                    "the run stops here; every trial measured before is kept".into()
                } else {
                    format!("check the stack is set up there (`bakeoff setup --host {} {}`)", host.place, stack.name)
                },
            }
        };
        let run_folder = host.run_folder.borrow().clone().ok_or_else(|| refuse("the run's folder on the host was not made".into()))?;
        let (data, cell) = (Path::new(&run_folder).join("data"), Path::new(&run_folder).join("cells").join(label));
        let dir = host.call(|s| s.path_of(&host.project_root, &stack.dir)).map_err(refuse)?;
        // The host's own port takes the place of this one (the agent sets PORT).
        let mut env = self.stack_env(variant, 0, workers, (&data, &cell), file_db);
        env.remove("PORT");
        let log = cell.join("server.log").display().to_string();
        let launch = RemoteLaunch {
            name: stack.name.clone(),
            command: stack.start_command.clone(),
            dir,
            env,
            cpus: if host.this_machine { self.settings.server_cpus.clone() } else { host.cpus.clone() },
            log: log.clone(),
            copies: vec![[data.join("products.sqlite").display().to_string(), cell.join("products.sqlite").display().to_string()]],
            port_var: Some("PORT".into()),
        };
        let (pid, port) = host.call(|s| s.start(launch)).map_err(refuse)?;
        let server = Served::OnHost(HostedServer::new(&stack.name, pid, host.clone(), log));
        let port = port.ok_or_else(|| refuse("the host's agent chose no port".into()))?;
        self.until_ready(server, stack, variant, SocketAddr::new(self.place.hosts.server.ip, port))
    }
}

/// The pid the sampler is given for a server with no process to measure (an unmanaged server
/// without `--pid`): no process has it, so its tree is empty and its CPU and memory read zero.
pub(crate) const NO_PROCESS: u32 = u32::MAX;

/// The tree a cell measures: the server the lab started (here or on the server host), an unmanaged server's
/// `--pid` (or [`NO_PROCESS`]), else a baseline's upstream.
pub(crate) fn measured_tree(stack: &Stack, server: Option<&Served>, upstream: Option<Tree>) -> Tree {
    match (server, stack.unmanaged) {
        (Some(s), _) => s.tree(),
        (None, Some(u)) => Tree::Here(u.pid.unwrap_or(NO_PROCESS)),
        (None, None) => upstream.unwrap_or(Tree::Here(NO_PROCESS)),
    }
}
