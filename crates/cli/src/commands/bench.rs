//! `bakeoff bench`: a user's own server measured as an ad-hoc stack beside the stacks named with
//! it, through the same plan, lifecycle and report as `bakeoff run`: a start command (`--cmd`) the
//! lab runs like any stack, or a server already running on loopback (`--url`, `--pid`). Two start
//! commands, or one at two git revisions (`--rev`), are an A/B: measured side by side in one run,
//! B judged against A, and the gate (`--fail-if-slower`) sets the exit code a CI step acts on.

use crate::args::{BenchArgs, GateSpec, QuickArgs};
use crate::commands::run::{request, run_and_report};
use crate::context;
use anyhow::{bail, Context, Result};
use bakeoff_lab::run::ScenarioFile;
use bakeoff_lab::stacks::adhoc::{AdHocServer, AdHocSpec};
use bakeoff_lab::stacks::manifest::Unmanaged;
use bakeoff_model::protocol::WireProtocol;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::statistics::comparison::{Gate, GATED_BY_DEFAULT};
use bakeoff_model::workload::quick::{QuickRequest, QuickScenario};
use bakeoff_model::workload::Workload;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::ExitCode;

/// Exit codes beyond a run's own (0 done, 1 a cell failed): B worse than A beyond a gate, and a
/// gated metric without an interval to judge (too few blocks, or no cell of B to compare).
const EXIT_SLOWER: u8 = 3;
const EXIT_NO_VERDICT: u8 = 4;

pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let root = context::project_root(&args.run.common)?;
    let cwd = std::env::current_dir()?;
    // Held to the end of the run: dropping it removes the revisions' worktrees.
    let revisions = revisions(args, &cwd)?;
    let servers: Vec<(Option<String>, AdHocServer, std::path::PathBuf)> = match &revisions {
        Some(r) => {
            let command = named_command(&args.cmd[0]).1;
            let server = || AdHocServer::Command { command: command.clone(), setup: args.setup.clone() };
            r.servers.iter().map(|(name, dir)| (Some(name.clone()), server(), dir.clone())).collect()
        }
        None => servers(args)?.into_iter().map(|(name, server)| (name, server, cwd.clone())).collect(),
    };
    if !args.fail_if_slower.is_empty() && servers.len() != 2 {
        bail!("--fail-if-slower judges B against A\n  hint: give two servers, e.g. --cmd base='./old-server' --cmd head='./server'");
    }
    if args.junit.is_some() && servers.len() != 2 {
        bail!("--junit writes the A/B of two servers\n  hint: give two servers, e.g. --cmd base='./old-server' --cmd head='./server'");
    }
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
    let protocol = protocol(args, &req.scenario_files)?;
    for (name, server, dir) in servers {
        req.adhoc.push(AdHocSpec {
            server,
            name,
            dir,
            scenarios: req.selection.scenarios.clone(),
            ready_timeout: args.ready_timeout,
            protocol,
        });
    }
    let names: Vec<String> = req.adhoc.iter().map(AdHocSpec::stack_name).collect();
    if names.len() == 2 && names[0] == names[1] {
        bail!("both servers would be reported as {}\n  hint: name them, e.g. --cmd base='…' --cmd head='…'", names[0]);
    }
    let ran = run_and_report(&args.run, &root, req)?;
    if let Some(path) = &args.markdown {
        let md = bakeoff_report::render(&ran.data, bakeoff_report::Format::Markdown);
        std::fs::write(path, md).with_context(|| format!("--markdown {}: cannot write it", path.display()))?;
        println!("Markdown report: {}", path.display());
    }
    let view = bakeoff_report::ReportView::new(&ran.data);
    if let Some(path) = &args.junit {
        let xml = bakeoff_report::junit(&view.side_by_side, &gates(&args.fail_if_slower));
        std::fs::write(path, xml).with_context(|| format!("--junit {}: cannot write it", path.display()))?;
        println!("JUnit XML: {}", path.display());
    }
    if ran.failed {
        return Ok(ExitCode::from(1));
    }
    Ok(gate(&args.fail_if_slower, &view))
}

/// `--rev` twice: the one `--cmd` checked out at each revision (None without `--rev`).
fn revisions(args: &BenchArgs, cwd: &Path) -> Result<Option<crate::commands::revisions::Revisions>> {
    if args.rev.is_empty() {
        return Ok(None);
    }
    if args.cmd.len() != 1 || args.name.is_some() {
        bail!(
            "--rev starts the one --cmd in each revision, named after it\n  hint: give one --cmd and no --name, e.g. --cmd './server' --rev base=main --rev head=HEAD"
        );
    }
    crate::commands::revisions::check_out(&args.rev, cwd).map(Some)
}

/// The servers `--cmd` (each `[name=]command`) or `--url` give, each with its name if given.
fn servers(args: &BenchArgs) -> Result<Vec<(Option<String>, AdHocServer)>> {
    if let Some(url) = &args.url {
        let running = Unmanaged { addr: loopback_addr(url)?, pid: args.pid.map(live_pid).transpose()? };
        return Ok(vec![(args.name.clone(), AdHocServer::Running(running))]);
    }
    match args.cmd.len() {
        0 => bail!(
            "bench needs your server\n  hint: pass --cmd 'COMMAND using $PORT and $WORKERS', or --url http://127.0.0.1:PORT for one already running"
        ),
        1 | 2 => {}
        n => bail!("--cmd given {n} times: bench measures one server, or two side by side\n  hint: compare more with a study (bakeoff new, then bakeoff run)"),
    }
    if args.cmd.len() == 2 && args.name.is_some() {
        bail!("--name names one server\n  hint: with two, name each: --cmd base='…' --cmd head='…'");
    }
    let server = |command: String| AdHocServer::Command { command, setup: args.setup.clone() };
    Ok(args
        .cmd
        .iter()
        .map(|arg| {
            let (name, command) = named_command(arg);
            (name.or_else(|| args.name.clone()), server(command))
        })
        .collect())
}

/// `base=./server --fast` → (base, `./server --fast`): a name is lowercase letters, digits, `-` and
/// `_`, a letter first, so an environment assignment (`GOGC=off ./server`) stays part of the command.
fn named_command(arg: &str) -> (Option<String>, String) {
    let named = arg.split_once('=').filter(|(name, command)| {
        let mut chars = name.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
            && !command.trim().is_empty()
    });
    match named {
        Some((name, command)) => (Some(name.to_string()), command.to_string()),
        None => (None, arg.to_string()),
    }
}

/// The gates `--fail-if-slower` sets: one per metric named, or requests/s and CPU per request.
fn gates(specs: &[GateSpec]) -> Vec<Gate> {
    specs
        .iter()
        .flat_map(|g| match g.metric {
            Some(metric) => vec![Gate { metric, fraction: g.fraction }],
            None => GATED_BY_DEFAULT.iter().map(|&metric| Gate { metric, fraction: g.fraction }).collect(),
        })
        .collect()
}

/// The exit code `--fail-if-slower` says: 0 without gates or when B passes every one; 3 when B is
/// worse than A beyond one on some scenario; else 4 when a gated metric had no interval.
fn gate(specs: &[GateSpec], view: &bakeoff_report::ReportView) -> ExitCode {
    if specs.is_empty() {
        return ExitCode::SUCCESS;
    }
    let gates = gates(specs);
    if view.side_by_side.is_empty() {
        eprintln!("gate: no verdict: no scenario has a measured cell of both servers (see the report above)");
        return ExitCode::from(EXIT_NO_VERDICT);
    }
    let (mut slower, mut unjudged) = (false, false);
    for pair in &view.side_by_side {
        for (g, c) in pair.failed(&gates) {
            slower = true;
            let (low, high) = (c.low.unwrap_or(f64::NAN), c.high.unwrap_or(f64::NAN));
            println!(
                "gate: {} {} worse than {} beyond {:.1}% on {}: {:.3}x ({low:.3}–{high:.3})",
                pair.a.scenario,
                pair.b.stack,
                pair.a.stack,
                100.0 * g.fraction,
                g.metric.id(),
                c.ratio
            );
        }
        for g in &gates {
            if pair.change(g.metric).is_none_or(|c| c.low.is_none()) {
                unjudged = true;
                println!("gate: {}: no 95% interval of {} to judge (too few blocks: raise --trials)", pair.a.scenario, g.metric.id());
            }
        }
    }
    match (slower, unjudged) {
        (true, _) => ExitCode::from(EXIT_SLOWER),
        (false, true) => ExitCode::from(EXIT_NO_VERDICT),
        (false, false) => {
            println!("gate: passed: B is not worse than A beyond the thresholds on any scenario");
            ExitCode::SUCCESS
        }
    }
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
    let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
        bail!("--url {url}: only http:// and https:// URLs can be measured\n{hint}");
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

/// The protocol `--protocol` names, else the one of the scenario file (`--scenario`) that sets
/// one, else the one an `https://` --url implies; a protocol that contradicts the URL's scheme is
/// refused (a file's that contradicts `--protocol` is refused when the run plans its cells).
fn protocol(args: &BenchArgs, files: &[ScenarioFile]) -> Result<WireProtocol> {
    let https = args.url.as_deref().is_some_and(|u| u.starts_with("https://"));
    let from_file = files.iter().map(|f| f.workload.protocol).find(|&p| p != WireProtocol::H1);
    match args.protocol.or(from_file) {
        None if https => Ok(WireProtocol::H1Tls),
        None => Ok(WireProtocol::H1),
        Some(p) if args.url.is_some() && p.tls() != https => bail!(
            "--protocol {p} {} TLS but --url is {}\n  hint: use https:// with h1-tls or h2, http:// with h1 or h2c",
            if p.tls() { "speaks" } else { "does not speak" },
            if https { "https://" } else { "http://" }
        ),
        Some(p) => Ok(p),
    }
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
    fn a_lowercase_name_before_the_first_equals_names_a_command_and_an_assignment_does_not() {
        assert_eq!(named_command("base=./server --fast"), (Some("base".into()), "./server --fast".into()));
        assert_eq!(named_command("head-2=exec go run ."), (Some("head-2".into()), "exec go run .".into()));
        assert_eq!(named_command("GOGC=off ./server"), (None, "GOGC=off ./server".into()));
        assert_eq!(named_command("./server --mode=fast"), (None, "./server --mode=fast".into()));
        assert_eq!(named_command("base="), (None, "base=".into()));
    }

    #[test]
    fn only_loopback_urls_with_a_port_are_taken() {
        assert_eq!(loopback_addr("http://127.0.0.1:8080/x").unwrap(), "127.0.0.1:8080".parse().unwrap());
        assert_eq!(loopback_addr("http://localhost:80").unwrap(), "127.0.0.1:80".parse().unwrap());
        assert_eq!(loopback_addr("http://[::1]:9000").unwrap(), "[::1]:9000".parse().unwrap());
        assert_eq!(loopback_addr("https://127.0.0.1:8443/").unwrap(), "127.0.0.1:8443".parse().unwrap());
        for bad in ["http://10.0.0.1:80", "https://10.0.0.1:443", "ftp://127.0.0.1:21", "http://example.com:80", "http://127.0.0.1"] {
            let e = loopback_addr(bad).unwrap_err().to_string();
            assert!(e.contains("hint: give a loopback URL"), "{bad}: {e}");
        }
    }
}
