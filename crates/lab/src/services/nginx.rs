//! nginx as the proxy study's upstream: the project's config template rendered into a throwaway
//! prefix, bodies of every verified size written as static files, the server in the foreground.

use super::{service_dir, service_error, ServiceContext, ServiceProcess, StartedService};
use crate::error::LabError;
use crate::install::apt_install;
use crate::machine::process::{free_port, Launch, ServerProcess};
use bakeoff_model::scenario::ServiceKind;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// Body sizes nginx serves under `/bytes/SIZE`.
pub(crate) const SIZES: [usize; 5] = [1, 10_240, 102_400, 1_048_576, 12];

/// nginx on loopback, serving the proxy scenario's bodies.
pub struct Nginx {
    /// Where it listens.
    pub addr: SocketAddr,
    pub(crate) version: String,
    process: ServiceProcess,
}

impl Nginx {
    pub(crate) fn start(ctx: &ServiceContext<'_>) -> Result<Nginx, LabError> {
        if !crate::stacks::catalog::on_path("nginx") && !std::path::Path::new("/usr/sbin/nginx").exists() {
            apt_install(&["nginx".into()]).map_err(|e| service_error("nginx", e, "apt-get install nginx"))?;
        }
        let template_path = ctx.project_root.join("services/nginx/nginx.conf.template");
        let template = std::fs::read_to_string(&template_path).map_err(|e| {
            service_error("nginx", format!("cannot read {}: {e}", template_path.display()), "restore services/nginx from the repository")
        })?;
        let prefix = service_dir(ctx, "nginx")?;
        let bytes = prefix.join("html").join("bytes");
        std::fs::create_dir_all(&bytes).map_err(|e| service_error("nginx", e.to_string(), "check the run directory"))?;
        for size in SIZES {
            let body: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
            std::fs::write(bytes.join(size.to_string()), body).map_err(|e| service_error("nginx", e.to_string(), "check disk space"))?;
        }
        for sub in ["logs", "tmp"] {
            std::fs::create_dir_all(prefix.join(sub)).ok();
        }
        let port = free_port();
        let conf = template
            .replace("{{HOST}}", &ctx.ip.to_string())
            .replace("{{PORT}}", &port.to_string())
            .replace("{{PREFIX}}", &prefix.to_string_lossy())
            .replace("{{WORKERS}}", "1");
        std::fs::write(prefix.join("nginx.conf"), conf).map_err(|e| service_error("nginx", e.to_string(), "check the run directory"))?;
        let command = format!("exec nginx -p '{0}' -c '{0}/nginx.conf' -e '{0}/logs/error.log'", prefix.display());
        let env: BTreeMap<String, String> =
            [("PATH".to_string(), format!("/usr/sbin:{}", std::env::var("PATH").unwrap_or_default()))].into();
        let mut process = ServerProcess::start(Launch {
            name: "nginx",
            command: &command,
            dir: &prefix,
            env: &env,
            cpus: ctx.cpus,
            log: prefix.join("logs/stdout.log"),
            netns: ctx.netns,
        })?;
        let addr = SocketAddr::new(ctx.ip, port);
        process.wait_ready(addr, Duration::from_secs(20))?;
        let version = std::process::Command::new("sh")
            .args(["-c", "PATH=/usr/sbin:$PATH nginx -v 2>&1"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().replace("nginx version: ", ""))
            .unwrap_or_else(|_| "nginx".into());
        Ok(Nginx { addr, version, process: ServiceProcess::Here(process) })
    }

    /// nginx's master process id, as its host numbers it.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The nginx the services host's agent started, reached at its address from here.
    pub(crate) fn on_host(s: &StartedService) -> Nginx {
        Nginx { addr: s.address, version: s.version.clone(), process: ServiceProcess::OnHost(s.pid) }
    }

    /// Its process and what the controller needs of it.
    pub(crate) fn into_started(self) -> (Option<ServiceProcess>, StartedService) {
        let url = format!("http://{}", self.addr);
        let started = StartedService { kind: ServiceKind::Nginx, pid: self.pid(), address: self.addr, url, version: self.version };
        (Some(self.process), started)
    }
}
