//! `bakeoff bench`: a user's own server measured as an ad-hoc stack beside the stacks named with
//! it, through the same plan, lifecycle and report as `bakeoff run`: a start command (`--cmd`) the
//! lab runs like any stack, or a server already running on loopback (`--url`, `--pid`).

use crate::args::{BenchArgs, QuickArgs};
use crate::commands::run::{request, run_request};
use crate::context;
use anyhow::{bail, Context, Result};
use bakeoff_lab::run::ScenarioFile;
use bakeoff_lab::stacks::adhoc::{AdHocServer, AdHocSpec};
use bakeoff_lab::stacks::manifest::Unmanaged;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::workload::quick::{QuickRequest, QuickScenario};
use bakeoff_model::workload::Workload;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::ExitCode;

pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.run.common)?;
    let server = match (&args.cmd, &args.url) {
        (Some(command), _) => AdHocServer::Command { command: command.clone(), setup: args.setup.clone() },
        (None, Some(url)) => AdHocServer::Running(Unmanaged { addr: loopback_addr(url)?, pid: args.pid.map(live_pid).transpose()? }),
        (None, None) => bail!(
            "bench needs your server\n  hint: pass --cmd 'COMMAND using $PORT and $WORKERS', or --url http://127.0.0.1:PORT for one already running"
        ),
    };
    let mut req = request(&args.run, &root)?;
    if !args.quick.get.is_empty() {
        let file = ScenarioFile::new(quick_workload(&args.quick)?).map_err(anyhow::Error::msg)?;
        req.selection.scenarios.push(file.scenario());
        req.scenario_files.push(file);
    }
    // The hello scenario unless another is asked for: every server can implement it in minutes.
    if req.selection.scenarios.is_empty() {
        req.selection.scenarios = vec![Scenario::Hello];
    }
    req.adhoc.push(AdHocSpec {
        server,
        name: args.name.clone(),
        dir: std::env::current_dir()?,
        scenarios: req.selection.scenarios.clone(),
        ready_timeout: args.ready_timeout,
    });
    run_request(&args.run, &root, req)
}

/// `--get PATH…` and its checks as a scenario file's workload, written to `--save-scenario` first
/// (so the file exists even when the run then fails) and named after that file.
fn quick_workload(quick: &QuickArgs) -> Result<Workload> {
    for path in &quick.get {
        if !path.starts_with('/') {
            bail!("--get {path}: a path starts with /\n  hint: give the path and query only, e.g. --get /items/1 (the address comes from --url or $PORT)");
        }
    }
    let saved = quick.save_scenario.as_deref();
    let name = saved.and_then(|p| p.file_stem()).map_or("quick".to_string(), |s| s.to_string_lossy().into_owned());
    let headers = bakeoff_cli::load::header_pairs(&quick.headers);
    let text = QuickScenario {
        name,
        written_by: "bakeoff bench --get --save-scenario".into(),
        requests: quick
            .get
            .iter()
            .map(|p| QuickRequest { method: "GET".into(), path: p.clone(), headers: headers.clone(), body: None })
            .collect(),
        expect_status: Some(quick.expect_status),
        expect_body: quick.expect_body.clone(),
        unsaid: None,
    }
    .to_toml();
    let origin = saved.unwrap_or(Path::new("--get"));
    let workload = Workload::parse(origin, &text)?;
    if let Some(path) = saved {
        std::fs::write(path, &text).with_context(|| format!("--save-scenario {}: cannot write it", path.display()))?;
        eprintln!("wrote {} (rerun it with --scenario {}; check a server with `bakeoff scenario check`)", path.display(), path.display());
    }
    Ok(workload)
}

/// The address of `http://HOST:PORT[/...]`, which must be loopback: load goes nowhere else.
pub fn loopback_addr(url: &str) -> Result<SocketAddr> {
    let hint = "  hint: give a loopback URL with its port, e.g. --url http://127.0.0.1:8080 (bakeoff loads loopback only)";
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--url {url}: only http:// URLs can be measured\n{hint}");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = authority.replace("localhost:", "127.0.0.1:");
    let addr: SocketAddr = match authority.parse() {
        Ok(a) => a,
        Err(_) => bail!("--url {url}: `{authority}` is not an IP address with a port\n{hint}"),
    };
    let loopback = match addr.ip() {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4: Ipv4Addr| v4.is_loopback()),
    };
    if !loopback {
        bail!("--url {url}: {} is not a loopback address\n{hint}", addr.ip());
    }
    Ok(addr)
}

/// `--pid`, checked to name a running process.
fn live_pid(pid: u32) -> Result<u32> {
    if !std::path::Path::new(&format!("/proc/{pid}")).is_dir() {
        bail!("--pid {pid}: no such process\n  hint: give the pid of your server's main process (e.g. from `pgrep -f NAME`)");
    }
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_urls_with_a_port_are_taken() {
        assert_eq!(loopback_addr("http://127.0.0.1:8080/x").unwrap(), "127.0.0.1:8080".parse().unwrap());
        assert_eq!(loopback_addr("http://localhost:80").unwrap(), "127.0.0.1:80".parse().unwrap());
        assert_eq!(loopback_addr("http://[::1]:9000").unwrap(), "[::1]:9000".parse().unwrap());
        for bad in ["http://10.0.0.1:80", "https://127.0.0.1:443", "http://example.com:80", "http://127.0.0.1"] {
            let e = loopback_addr(bad).unwrap_err().to_string();
            assert!(e.contains("hint: give a loopback URL"), "{bad}: {e}");
        }
    }
}
