//! `bakeoff load --client PLACE ...`: the same load from agents on other hosts (or namespaces), split
//! across them, started at one instant, and printed as one report whose histograms are their sum,
//! followed by a line per client (its share, its clock offset, how late it started), and what the
//! hosts measured: the server's tree (with `--server-host` and `--server-pid`), what ran on each host
//! and how noisy it was, and the path from each client to the server.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use bakeoff_lab::remote::clients::MergedRun;
use bakeoff_lab::remote::measured::{run_measured, ServerPlacement};
use bakeoff_lab::remote::session::SessionOptions;
use bakeoff_load::write_hdr_log;
use bakeoff_model::plan::place::Place;
use clap::Args;

use super::hosts_output::{hosts_block, with_hosts};
use super::output::human_summary;
use super::LoadArgs;

/// Where the load runs: its client hosts and how to reach them.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// Run the load from this host instead of from here; repeat for several clients, whose results
    /// are added exactly: `local`, `ssh://user@host[:port]` or `netns:NAME`.
    #[arg(long = "client")]
    pub clients: Vec<Place>,
    /// The bakeoff binary on the client hosts, an absolute path (default: this binary's own path).
    #[arg(long, requires = "clients")]
    pub agent_bin: Option<PathBuf>,
    /// The ssh key for the clients (default: the user's ssh config).
    #[arg(long, requires = "clients")]
    pub ssh_identity: Option<PathBuf>,
    /// A known_hosts file that must hold the clients' host keys (default: the user's own, a new
    /// host's key accepted on first contact).
    #[arg(long, requires = "clients")]
    pub ssh_known_hosts: Option<PathBuf>,
    /// The server's host, whose agent measures the server's process tree (CPU, memory) and the
    /// host's noise during the load: `local`, `ssh://user@host[:port]` or `netns:NAME`.
    #[arg(long, requires_all = ["clients", "server_pid"])]
    pub server_host: Option<Place>,
    /// The pid of the server's main process, as its host numbers it; its whole tree is measured.
    #[arg(long, requires = "server_host")]
    pub server_pid: Option<u32>,
}

/// Runs `args` from the clients of `hosts`, prints the merged report. Exit code as `bakeoff load`:
/// 0 if responses were measured, 1 if none were or a host failed (the server's host during the
/// load: the load is still printed), 2 for unusable flags.
pub fn run_clients(args: &LoadArgs, hosts: &ClientArgs, identity: &bakeoff_lab::remote::protocol::Identity) -> anyhow::Result<ExitCode> {
    let plan = match args.to_plan() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}\nhint: {}", e.hint());
            return Ok(ExitCode::from(2));
        }
    };
    // A load that cannot be split is refused before any host is contacted.
    if let Err(e) = bakeoff_lab::remote::clients::split(&plan, hosts.clients.len()) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(2));
    }
    let bin = match &hosts.agent_bin {
        Some(b) => b.clone(),
        None => std::env::current_exe()?,
    };
    let mut opts = SessionOptions::new(bin);
    opts.ssh_identity = hosts.ssh_identity.clone();
    opts.ssh_known_hosts = hosts.ssh_known_hosts.clone();
    let interrupted = crate::cancel_on_ctrl_c();
    let start = SystemTime::now();
    let server = match (&hosts.server_host, hosts.server_pid) {
        (Some(place), Some(pid)) => Some(ServerPlacement { place: place.clone(), pid }),
        _ => None,
    };
    let measured = match run_measured(&hosts.clients, server.as_ref(), &plan, &opts, identity, interrupted) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let run = &measured.run;
    if let Some(path) = &args.hdr_log {
        write_hdr_log(path, &run.merged.details, start).map_err(|e| anyhow::anyhow!("cannot write HDR log {}: {e}", path.display()))?;
    }
    let r = &run.merged.report;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", with_hosts(&r.to_json(), &measured.hosts)?)?;
        eprint!("{}{}", client_lines(run), hosts_block(&measured.hosts));
    } else {
        write!(stdout, "{}{}{}", human_summary(r), client_lines(run), hosts_block(&measured.hosts))?;
    }
    stdout.flush()?;
    // A server host lost during the load leaves the load's figures but not the server's: a failure.
    let any = r.steps.iter().any(|s| s.requests > 0) && measured.hosts.server_lost.is_none();
    Ok(if any { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// One line per client: its share and how well it kept the common start.
fn client_lines(run: &MergedRun) -> String {
    let mut out = format!("Clients ({}, histograms added):\n", run.clients.len());
    for c in &run.clients {
        let r = &c.output.report;
        let (requests, rps): (u64, f64) = r.steps.iter().fold((0, 0.0), |(n, x), s| (n + s.requests, x + s.requests_per_sec));
        out.push_str(&format!(
            "  {:<28} {:>4} conns  {requests:>9} requests  {rps:>10.1} req/s  CPU {:>4.0}%  clock {:+.3} ms ± {:.3} ms  started {:.3} ms late\n",
            c.host,
            r.plan.connections,
            r.client.cpu_percent,
            c.clock.offset_ns as f64 / 1e6,
            c.clock.bound_ns as f64 / 1e6,
            c.started_late_ns as f64 / 1e6
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::ClientArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        hosts: ClientArgs,
    }

    #[test]
    fn the_server_host_comes_with_its_pid_and_clients() {
        let ok = Cli::try_parse_from(["x", "--client", "netns:a", "--server-host", "netns:srv", "--server-pid", "42"]).unwrap();
        assert_eq!(ok.hosts.server_host.map(|p| p.to_string()).as_deref(), Some("netns:srv"));
        assert_eq!(ok.hosts.server_pid, Some(42));
        assert!(Cli::try_parse_from(["x", "--client", "netns:a", "--server-host", "netns:srv"]).is_err(), "no pid");
        assert!(Cli::try_parse_from(["x", "--server-host", "netns:srv", "--server-pid", "42"]).is_err(), "no client");
        assert!(Cli::try_parse_from(["x", "--client", "netns:a", "--server-pid", "42"]).is_err(), "no host");
    }
}
