//! The services on a host of their own: started by its agent in the run's folder there, reached
//! here (and by the servers) at the host's address, and metered through the agent like a server on
//! a host. What each needs of this machine afterwards (psql, the document store's client) reaches
//! them over the link.

use std::net::IpAddr;

use bakeoff_model::scenario::ServiceKind;

use crate::error::LabError;
use crate::remote::protocol::ServiceLaunch;
use crate::run::cell::served::ServerHost;
use crate::run::runner::Lab;

impl Lab<'_> {
    /// Starts on `host` each of `kinds` not running yet, and takes each in as the run's service.
    pub(crate) fn start_services_on_host(&mut self, host: &ServerHost, kinds: &[ServiceKind]) -> Result<(), LabError> {
        let cancel = self.cancel;
        let failed = |kind: ServiceKind, reason: String| {
            // A lost host stops the run: what was measured is kept, nothing more starts there.
            if host.lost().is_some() {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            LabError::Service {
                service: format!("{} on {}", kind.id(), host.host()),
                reason,
                hint: format!("see its log in the run's folder there; `bakeoff doctor` on {} says what it lacks", host.place),
            }
        };
        let missing: Vec<ServiceKind> = kinds.iter().copied().filter(|k| !self.services.running(*k)).collect();
        for kind in missing {
            let run_folder = host.run_folder.borrow().clone().ok_or_else(|| failed(kind, "the run's folder there was not made".into()))?;
            let root = host.call(|s| Ok(s.root().to_string())).map_err(|e| failed(kind, e))?;
            let (cpus, ip, trust) = (self.hosted_service_cpus(host, kind), self.hosts.services.ip, self.service_peers());
            let launch = ServiceLaunch { kind, root, run_folder, cpus, ip, trust };
            let started = host.call(|s| s.start_service(launch)).map_err(|e| failed(kind, e))?;
            self.services.adopt(started, &self.project_root)?;
        }
        Ok(())
    }

    /// The CPUs a service is held on there: the lab's own sets when the host runs on this
    /// machine's kernel (as a service started here), else the host agent's.
    fn hosted_service_cpus(&self, host: &ServerHost, kind: ServiceKind) -> Vec<usize> {
        match (host.this_machine, kind) {
            (false, _) => host.cpus.clone(),
            (true, ServiceKind::Nginx) => self.upstream_cpus().to_vec(),
            (true, _) => self.settings.server_cpus.clone(),
        }
    }

    /// The servers' address, when the servers reach the services from another address than this
    /// machine's: PostgreSQL there trusts it besides its own subnet and the controller.
    fn service_peers(&self) -> Vec<IpAddr> {
        Some(self.hosts.server.ip).filter(|ip| !ip.is_loopback()).into_iter().collect()
    }
}
