//! `bakeoff bench`: a user's own server measured as an ad-hoc stack beside the stacks named with
//! it, through the same plan, lifecycle and report as `bakeoff run`: a start command (`--cmd`) the
//! lab runs like any stack, or a server already running on loopback (`--url`, `--pid`).

use crate::args::BenchArgs;
use crate::commands::run::{request, run_request};
use crate::context;
use anyhow::{bail, Result};
use bakeoff_lab::stacks::adhoc::{AdHocServer, AdHocSpec};
use bakeoff_lab::stacks::manifest::Unmanaged;
use bakeoff_model::scenario::Scenario;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
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
