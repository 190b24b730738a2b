//! The run's backing services as a cell needs them: started once per run, on this machine, in the
//! services' namespace or by the agent of their host of their own, each on the CPUs its role says
//! (an upstream nginx on the client's with `own-cpu` placement), and refused where the servers
//! could not reach them.

use crate::error::LabError;
use crate::remote::protocol::ServiceLaunch;
use crate::run::cell::dirs::LabDirs;
use crate::run::cell::served::ServerHost;
use crate::run::events::Event;
use crate::run::planning::settings::LoadSettings;
use crate::run::roles::RunHosts;
use crate::services::{ServiceContext, Services};
use bakeoff_model::scenario::ServiceKind;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the run's services start and what they are given: the run's folders and settings, its
/// hosts, and an external document store to reach instead of starting one.
pub(crate) struct ServiceSite<'b> {
    pub(crate) dirs: &'b LabDirs,
    pub(crate) settings: &'b LoadSettings,
    pub(crate) hosts: &'b RunHosts,
    pub(crate) external_docstore: Option<&'b str>,
    /// Set when the services host is lost: the run stops after the step at hand.
    pub(crate) cancel: &'b AtomicBool,
}

impl ServiceSite<'_> {
    /// Starts each of `kinds` that `services` does not run yet, for `who` (a stack variant, as
    /// errors name it), saying so to `events` first.
    pub(crate) fn ensure(
        &self,
        services: &mut Services,
        mut kinds: Vec<ServiceKind>,
        who: &str,
        events: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), LabError> {
        kinds.sort();
        kinds.dedup();
        // Services on loopback are out of reach of a server in a namespace or on a host of its own.
        if let (false, true, Some(k)) = (self.hosts.server.ip.is_loopback(), self.hosts.services.ip.is_loopback(), kinds.first()) {
            let placed = self.settings.roles.server.to_string();
            return Err(LabError::Input {
                what: who.to_string(),
                problem: format!("it needs {}, which runs on this machine's loopback, out of reach of a server placed at {placed}", k.id()),
                hint: "place the services where the servers reach them (`[hosts] services = \"ssh://user@host\"` or `\"netns:NAME\"`)"
                    .into(),
            });
        }
        for k in kinds.iter().filter(|k| !services.running(**k)) {
            events(Event::ServiceStarting(k.id()));
        }
        // On a services host of their own (an external document store is only reached).
        if let Some(host) = self.hosts.services_host.clone() {
            let external = |k: &ServiceKind| *k == ServiceKind::Docstore && self.external_docstore.is_some();
            let (here, there): (Vec<ServiceKind>, Vec<ServiceKind>) = kinds.into_iter().partition(external);
            self.start_on_host(services, &host, &there)?;
            kinds = here;
        }
        let (upstream, others): (Vec<_>, Vec<_>) = kinds.into_iter().partition(|k| *k == ServiceKind::Nginx);
        services.ensure(&others, &self.context_on(&self.settings.server_cpus))?;
        services.ensure(&upstream, &self.context_on(self.upstream_cpus()))
    }

    /// What a service started here is given, held on `cpus`.
    fn context_on<'c>(&'c self, cpus: &'c [usize]) -> ServiceContext<'c> {
        ServiceContext {
            project_root: &self.dirs.project_root,
            run_dir: &self.dirs.run_dir,
            data_dir: &self.dirs.data_dir,
            cpus,
            external_docstore: self.external_docstore,
            netns: self.hosts.services.netns.as_deref(),
            ip: self.hosts.services.ip,
            trust: &[],
        }
    }

    /// The CPUs of the upstream nginx: the server's, or with `own-cpu` placement the client's.
    fn upstream_cpus(&self) -> &[usize] {
        if self.settings.proxy_placement.upstream_on_client() {
            &self.settings.client_cpus
        } else {
            &self.settings.server_cpus
        }
    }

    /// Starts on `host` each of `kinds` not running yet, and takes each in as the run's service:
    /// started by its agent in the run's folder there, reached here (and by the servers) at the
    /// host's address, and metered through the agent like a server on a host.
    fn start_on_host(&self, services: &mut Services, host: &ServerHost, kinds: &[ServiceKind]) -> Result<(), LabError> {
        let failed = |kind: ServiceKind, reason: String| {
            // A lost host stops the run: what was measured is kept, nothing more starts there.
            if host.lost().is_some() {
                self.cancel.store(true, Ordering::Relaxed);
            }
            LabError::Service {
                service: format!("{} on {}", kind.id(), host.host()),
                reason,
                hint: format!("see its log in the run's folder there; `bakeoff doctor` on {} says what it lacks", host.place),
            }
        };
        let missing: Vec<ServiceKind> = kinds.iter().copied().filter(|k| !services.running(*k)).collect();
        for kind in missing {
            let run_folder = host.run_folder.borrow().clone().ok_or_else(|| failed(kind, "the run's folder there was not made".into()))?;
            let root = host.call(|s| Ok(s.root().to_string())).map_err(|e| failed(kind, e))?;
            let (cpus, ip, trust) = (self.hosted_cpus(host, kind), self.hosts.services.ip, self.peers());
            let launch = ServiceLaunch { kind, root, run_folder, cpus, ip, trust };
            let started = host.call(|s| s.start_service(launch)).map_err(|e| failed(kind, e))?;
            services.adopt(started, &self.dirs.project_root)?;
        }
        Ok(())
    }

    /// The CPUs a service is held on there: the lab's own sets when the host runs on this
    /// machine's kernel (as a service started here), else the host agent's.
    fn hosted_cpus(&self, host: &ServerHost, kind: ServiceKind) -> Vec<usize> {
        match (host.this_machine, kind) {
            (false, _) => host.cpus.clone(),
            (true, ServiceKind::Nginx) => self.upstream_cpus().to_vec(),
            (true, _) => self.settings.server_cpus.clone(),
        }
    }

    /// The servers' address, when the servers reach the services from another address than this
    /// machine's: PostgreSQL there trusts it besides its own subnet and the controller.
    fn peers(&self) -> Vec<IpAddr> {
        Some(self.hosts.server.ip).filter(|ip| !ip.is_loopback()).into_iter().collect()
    }
}
