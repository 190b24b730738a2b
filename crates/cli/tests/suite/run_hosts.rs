//! `bakeoff run` with its roles placed across network namespaces of this machine, each with an
//! sshd of its own: two load clients and the servers on a host of their own (its agent starting and
//! metering them in the project's workspace there); and the services (PostgreSQL; nginx and the
//! document store) on a host of their own, reached by the servers on theirs: machines placed as a
//! study on real hosts places them. The quick study's cells, shortened, must pass verification and
//! judge the study's claims as a local run does; a client agent (`netns:`) or a server host's agent
//! killed mid-run ends the run with the cell, the host and the cause stored and every trial
//! measured before kept; nothing is left running and every namespace goes. Namespaces need root:
//! without it the tests print SKIPPED and pass.

#[allow(dead_code)]
use crate::hosts_lab;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use bakeoff_lab::remote::netns::Topology;
use bakeoff_lab::remote::servers::RemoteServers;
use bakeoff_lab::remote::session::SessionOptions;
use bakeoff_lab::remote::sshd::Sshd;
use hosts_lab::{bin, gone, no_root};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bakeoff-run-hosts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The quick study's stacks, scenarios and claims with six 1 s blocks and no precision rounds, no
/// latency-under-load steps and no A/A cell: the same cells and verdicts, in about two minutes.
fn short_quick_study(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("studies/quick.toml")).unwrap();
    let mut study: toml::Table = toml::from_str(&text).unwrap();
    for key in ["precision", "budget", "aa", "latency_under_load"] {
        study.remove(key);
    }
    study.insert("name".into(), "quick-placed".into());
    study.insert("trials".into(), 6.into());
    study.insert("duration".into(), "1s".into());
    study.insert("warmup".into(), "500ms".into());
    let path = dir.join("quick-placed.toml");
    std::fs::write(&path, toml::to_string(&study).unwrap()).unwrap();
    path
}

fn run(args: &[String]) -> Output {
    Command::new(bin()).arg("run").args(args).current_dir(root()).stdin(Stdio::null()).output().expect("bakeoff runs")
}

fn report(db: &Path) -> Value {
    let out = Command::new(bin()).args(["report", "--format", "json", "--db"]).arg(db).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each claim's statement and verdict.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    let claims = report["claims"].as_array().expect("claims");
    claims.iter().map(|c| (c["claim"]["statement"].as_str().unwrap().to_string(), c["verdict"].as_str().unwrap().to_string())).collect()
}

/// The `what` of every check that passed.
fn passed_checks(report: &Value) -> Vec<String> {
    let checks = report["verifications"].as_array().unwrap().iter().flat_map(|v| v["checks"].as_array().unwrap());
    checks.filter(|c| c["verdict"] == "pass").map(|c| c["what"].as_str().unwrap_or_default().to_string()).collect()
}

fn failed_checks(report: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for v in report["verifications"].as_array().unwrap() {
        for c in v["checks"].as_array().unwrap().iter().filter(|c| c["verdict"] == "fail") {
            out.push(format!("{} {}: {} {}", v["stack"], c["scenario"], c["what"], c["reason"]));
        }
    }
    out
}

/// Sets `stacks` up in the project's workspace on the server host `place` from this namespace.
/// The test's namespaces reach this machine but no package registry (pip would find no index
/// there), so the workspace's stacks are built here, where a real host's registries are; the run's
/// own setup on the host then finds each one current (its inputs' stamp), as it would after a
/// `bakeoff setup --host` on a host of its own.
fn set_up_in_the_hosts_workspace(place: &str, sshd: &Sshd, stacks: &[&str]) {
    let mut opts = SessionOptions::new(bin());
    opts.ssh_identity = Some(sshd.identity());
    opts.ssh_known_hosts = Some(sshd.known_hosts());
    let servers =
        RemoteServers::open(&place.parse().unwrap(), &opts, &bakeoff_cli::identity(), &root()).expect("the server host's session opens");
    let workspace = servers.root().to_string();
    servers.close();
    let out = Command::new(bin()).args(["setup", "--quiet", "--root", &workspace]).args(stacks).output().unwrap();
    assert!(out.status.success(), "the workspace's stacks set up: {}", String::from_utf8_lossy(&out.stderr));
}

/// The flags that make the run's ssh sessions use the test sshd's throwaway key and known hosts.
fn ssh_flags(sshd: &Sshd) -> [String; 4] {
    let (identity, known) = (sshd.identity().display().to_string(), sshd.known_hosts().display().to_string());
    ["--ssh-identity".into(), identity, "--ssh-known-hosts".into(), known]
}

/// Nothing runs in any namespace of the topology: asserted before it is torn down.
fn nothing_inside(topo: &Topology, except: &[u32]) {
    for ns in topo.namespaces() {
        let out = Command::new("ip").args(["netns", "pids", &ns]).output().unwrap();
        let pids: Vec<u32> = String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse().ok()).collect();
        let left: Vec<u32> = pids.into_iter().filter(|p| !except.contains(p) && !gone(*p, Duration::from_secs(5))).collect();
        assert!(left.is_empty(), "processes left in {ns}: {left:?}");
    }
}

fn teardown(topo: Topology, sshd: Option<Sshd>) {
    let names = topo.namespaces();
    drop(sshd);
    drop(topo);
    let listed = String::from_utf8(Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).unwrap();
    for n in &names {
        assert!(!listed.lines().any(|l| l.split_whitespace().next() == Some(n)), "namespace {n} is left: {listed}");
    }
}

#[test]
fn the_quick_study_across_namespaces_judges_its_claims_as_a_local_run_does() {
    if no_root("the_quick_study_across_namespaces_judges_its_claims_as_a_local_run_does") {
        return;
    }
    let dir = scratch("quick");
    let study = short_quick_study(&dir);
    let common = |db: &str| -> Vec<String> {
        let s = |x: &str| x.to_string();
        vec![s("--study"), study.display().to_string(), s("--no-ceiling"), s("--quiet"), s("--db"), dir.join(db).display().to_string()]
    };
    let local = run(&common("local.db"));
    assert!(local.status.success(), "the local run: {}", String::from_utf8_lossy(&local.stdout));

    let topo = Topology::build(&["client-a", "client-b", "server"]).expect("the topology builds");
    let sshd = Sshd::start(topo.ns("client-a"), topo.addr("client-a")).expect("sshd starts");
    let server_sshd = Sshd::start_beside(&sshd, topo.ns("server"), topo.addr("server")).expect("the server's sshd starts");
    let b_sshd = Sshd::start_beside(&sshd, topo.ns("client-b"), topo.addr("client-b")).expect("client b's sshd starts");
    set_up_in_the_hosts_workspace(
        &format!("ssh://root@{}", topo.addr("server")),
        &sshd,
        &["rust/actix", "go/fasthttp", "python/werkzeug-uwsgi"],
    );
    let mut placed_args = common("placed.db");
    placed_args.extend([
        "--client".into(),
        format!("ssh://root@{}", topo.addr("client-a")),
        "--client".into(),
        format!("ssh://root@{}", topo.addr("client-b")),
        "--server-host".into(),
        format!("ssh://root@{}", topo.addr("server")),
        // A precision target makes the run measure its noise floor first; the budget of a second
        // leaves no room for precision rounds: the run's outlook, not more rounds, is wanted.
        "--precision".into(),
        "5%".into(),
        "--budget".into(),
        "1s".into(),
    ]);
    placed_args.extend(ssh_flags(&sshd));
    let placed = run(&placed_args);
    let said = String::from_utf8_lossy(&placed.stdout).to_string() + &String::from_utf8_lossy(&placed.stderr);
    let site = format!(
        "servers on ssh://root@{}:22, load from ssh://root@{}:22, ssh://root@{}:22",
        topo.addr("server"),
        topo.addr("client-a"),
        topo.addr("client-b")
    );
    nothing_inside(&topo, &[sshd.pid(), server_sshd.pid(), b_sshd.pid()]);
    drop(server_sshd);
    drop(b_sshd);
    teardown(topo, Some(sshd));
    assert!(placed.status.success(), "the placed run: {said}");
    // The precision outlook's A/A probe measured where the run measures, not this machine.
    assert!(said.contains(&format!("noise floor ({site}):")), "the probe ran on the placed hosts: {said}");

    let (local, placed) = (report(&dir.join("local.db")), report(&dir.join("placed.db")));
    assert_eq!(failed_checks(&placed), Vec::<String>::new(), "every stack verifies on its namespace's address");
    // The checks that read the server's tree ran on the host, through its agent: the listen check
    // (its sockets) and the CPU-cost pairs (its precise CPU).
    let passed = passed_checks(&placed);
    for what in ["listens on its address only", "CPU cost scales with the work", "live-data probe: a changed row shows at once"] {
        assert!(passed.iter().any(|p| p.starts_with(what)), "{what} passed on the server host: {passed:?}");
    }
    let hosts = placed["run"]["settings"]["hosts"].as_array().expect("the run records its hosts");
    let roles_of: Vec<&str> = hosts.iter().map(|h| h["role"].as_str().unwrap()).collect();
    assert_eq!(roles_of, ["server", "client", "client"], "the server host and two client hosts: {hosts:?}");
    assert!(hosts.iter().all(|h| h["hello"]["facts"]["machine"]["cores"].as_u64() > Some(0)), "each host says what it is: {hosts:?}");
    let paths = placed["run"]["settings"]["paths"].as_array().expect("the run records each client's path");
    assert_eq!(paths.len(), 2, "{paths:?}");
    for p in paths {
        let m = &p["measure"];
        assert!(m["connects"].as_u64() > Some(0) && m["rtt_median_us"].as_f64() < Some(10_000.0), "the round trip: {p}");
        assert!(m["ceiling_bytes_per_s"].as_f64() > Some(10e6), "the link ceiling: {p}");
        assert!(m["ceiling_back_bytes_per_s"].as_f64() > Some(10e6), "the link ceiling back: {p}");
    }
    let roles = &placed["run"]["settings"]["load"]["roles"];
    assert!(roles["server"].as_str().unwrap().starts_with("ssh://root@"), "the server's place is recorded: {roles}");
    // The server host metered its servers: every cell has its server's CPU and memory.
    for c in placed["cells"].as_array().unwrap() {
        assert!(c["metrics"]["cpu_us_per_request"]["median"].as_f64() > Some(0.0), "the server host's CPU meter: {c}");
        assert!(c["metrics"]["peak_rss_mib"]["median"].as_f64() > Some(0.0), "the server host's memory sampler: {c}");
    }
    assert_eq!(placed["cells"].as_array().unwrap().len(), local["cells"].as_array().unwrap().len(), "the same cells");
    let expected = verdicts(&local);
    assert!(!expected.is_empty() && expected.iter().all(|(_, v)| v == "held"), "the local run holds the quick claims: {expected:?}");
    assert_eq!(verdicts(&placed), expected, "the placed run judges the claims as the local one");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_shop_on_postgres_on_a_services_host_of_its_own_is_verified_on_the_server_host_and_loaded_from_a_client_host() {
    if no_root("the_shop_on_postgres_on_a_services_host_of_its_own_is_verified_on_the_server_host_and_loaded_from_a_client_host") {
        return;
    }
    let dir = scratch("services");
    let topo = Topology::build(&["client", "server", "services"]).expect("the topology builds");
    let sshd = Sshd::start(topo.ns("services"), topo.addr("services")).expect("the services' sshd starts");
    let server_sshd = Sshd::start_beside(&sshd, topo.ns("server"), topo.addr("server")).expect("the server's sshd starts");
    let server = format!("ssh://root@{}", topo.addr("server"));
    let topo_services_ip = topo.addr("services").to_string();
    set_up_in_the_hosts_workspace(&server, &sshd, &["go/nethttp"]);
    let db = dir.join("shop.db");
    let mut args: Vec<String> = [
        "--stacks",
        "go/nethttp",
        "--variants",
        "postgres",
        "--scenarios",
        "products",
        "--scenario",
        "scenarios/shop.toml",
        "--trials",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "500ms",
        "--quiet",
        "--db",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend([
        db.display().to_string(),
        "--server-host".into(),
        server,
        "--services-host".into(),
        format!("ssh://root@{}", topo.addr("services")),
        // The scenario file's deck (its login, captures and checks) travels to a client host.
        "--client".into(),
        format!("netns:{}", topo.ns("client")),
    ]);
    args.extend(ssh_flags(&sshd));
    let out = run(&args);
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    nothing_inside(&topo, &[sshd.pid(), server_sshd.pid()]);
    drop(server_sshd);
    teardown(topo, Some(sshd));
    assert!(out.status.success(), "{said}");
    let report = report(&db);
    assert_eq!(failed_checks(&report), Vec::<String>::new(), "verified against PostgreSQL on the services host: {said}");
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "products and the shop: {said}");
    for c in cells {
        assert!(c["metrics"]["requests_per_sec"]["median"].as_f64() > Some(0.0), "{c}");
        assert_eq!(c["metrics"]["error_percent"]["median"].as_f64(), Some(0.0), "{c}");
    }
    // The shop's deck ran whole on the client host: each kind sent, answered, checked, in its mix.
    let shop = cells.iter().find(|c| c["scenario"] == "file:shop").unwrap_or_else(|| panic!("the shop's cell: {cells:?}"));
    let kinds = shop["kinds"].as_array().unwrap_or_else(|| panic!("the shop's kinds: {shop}"));
    let names: Vec<&str> = kinds.iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["item", "search", "cart"], "{shop}");
    for k in kinds {
        assert!(k["requests"].as_f64().unwrap() > 0.0 && k["errors"] == 0.0, "{k}");
        assert!((k["share_percent"].as_f64().unwrap() - k["asked_percent"].as_f64().unwrap()).abs() < 5.0, "the deck's mix: {k}");
    }
    // The services host answered for itself.
    let hosts = report["run"]["settings"]["hosts"].as_array().expect("the run records its hosts");
    let roles_of: Vec<&str> = hosts.iter().map(|h| h["role"].as_str().unwrap()).collect();
    assert_eq!(roles_of, ["server", "services", "client"], "{hosts:?}");
    // The path every query crosses, from the server host to the services host, was measured.
    let paths = report["run"]["settings"]["paths"].as_array().expect("the run records its paths");
    let to_services = paths.iter().find(|p| p["from"] == "the servers").expect("the servers' path to the services host");
    let m = &to_services["measure"];
    assert!(m["connects"].as_u64() > Some(0) && m["rtt_median_us"].as_f64() < Some(10_000.0), "{to_services}");
    assert!(m["ceiling_bytes_per_s"].as_f64() > Some(10e6), "{to_services}");
    assert!(m["ceiling_back_bytes_per_s"].as_f64() > Some(10e6), "the ceiling back from the services host: {to_services}");
    assert!(m["target"].as_str().unwrap().starts_with(&topo_services_ip), "measured to the services host: {to_services}");
    // The lab reached that PostgreSQL over the link too: its live-data probe changed a row there
    // and read its statement counts.
    let passed = passed_checks(&report);
    for what in ["live-data probe: a changed row shows at once", "the database answers at least one read per request", "statements `item`"]
    {
        assert!(passed.iter().any(|p| p.starts_with(what)), "{what} passed against the services host: {passed:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nginx_and_the_document_store_on_a_services_host_of_their_own_serve_the_proxy_and_the_documents() {
    if no_root("nginx_and_the_document_store_on_a_services_host_of_their_own_serve_the_proxy_and_the_documents") {
        return;
    }
    let dir = scratch("services-nginx-docstore");
    let topo = Topology::build(&["server", "services"]).expect("the topology builds");
    let sshd = Sshd::start(topo.ns("services"), topo.addr("services")).expect("the services' sshd starts");
    let server_sshd = Sshd::start_beside(&sshd, topo.ns("server"), topo.addr("server")).expect("the server's sshd starts");
    let server = format!("ssh://root@{}", topo.addr("server"));
    let services_ip = topo.addr("services").to_string();
    set_up_in_the_hosts_workspace(&server, &sshd, &["go/iocopy", "python/werkzeug-uwsgi"]);
    let db = dir.join("services.db");
    let mut args: Vec<String> =
        ["--stacks", "go/iocopy,python/werkzeug-uwsgi", "--scenarios", "proxy,document", "--trials", "2", "--duration", "1s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    args.extend(["--warmup".into(), "500ms".into(), "--no-ceiling".into(), "--quiet".into(), "--db".into(), db.display().to_string()]);
    args.extend(["--server-host".into(), server, "--services-host".into(), format!("ssh://root@{services_ip}")]);
    args.extend(ssh_flags(&sshd));
    let watch = ProgramsIn::watch(topo.ns("services"));
    let out = run(&args);
    let seen = watch.stop();
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    nothing_inside(&topo, &[sshd.pid(), server_sshd.pid()]);
    drop(server_sshd);
    teardown(topo, Some(sshd));
    assert!(out.status.success(), "{said}");
    // Both services ran inside the services host's namespace, started there by its agent.
    for program in ["nginx", "java"] {
        assert!(seen.contains(program), "{program} ran on the services host: {seen:?}\n{said}");
    }
    let report = report(&db);
    assert_eq!(failed_checks(&report), Vec::<String>::new(), "verified against the services host's nginx and store: {said}");
    let cells = report["cells"].as_array().unwrap();
    let scenarios: Vec<&str> = cells.iter().map(|c| c["scenario"].as_str().unwrap()).collect();
    assert!(scenarios.contains(&"proxy") && scenarios.contains(&"document"), "the proxy and the documents: {scenarios:?}");
    for c in cells {
        assert!(c["metrics"]["requests_per_sec"]["median"].as_f64() > Some(0.0), "{c}");
        assert_eq!(c["metrics"]["error_percent"]["median"].as_f64(), Some(0.0), "{c}");
    }
    // The servers' path to the services host (every proxied request and query crosses it).
    let paths = report["run"]["settings"]["paths"].as_array().expect("the run records its paths");
    let to_services = paths.iter().find(|p| p["from"] == "the servers").expect("the servers' path to the services host");
    assert!(to_services["measure"]["target"].as_str().unwrap().starts_with(&services_ip), "{to_services}");
    // The store's live-data probe changed a document there, over the link, and saw it served.
    let passed = passed_checks(&report);
    assert!(passed.iter().any(|p| p.starts_with("live-data probe")), "the store's probe ran against the services host: {passed:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The programs seen running inside a namespace while a run goes on: `ip netns pids` every
/// 200 ms, each pid's `comm` kept.
struct ProgramsIn {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<std::collections::BTreeSet<String>>,
}

impl ProgramsIn {
    fn watch(ns: &str) -> ProgramsIn {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, ns) = (stop.clone(), ns.to_string());
        let thread = std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let out = Command::new("ip").args(["netns", "pids", &ns]).output().unwrap();
                for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
                        seen.insert(comm.trim().to_string());
                    }
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            seen
        });
        ProgramsIn { stop, thread }
    }

    fn stop(self) -> std::collections::BTreeSet<String> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

#[test]
fn clients_elsewhere_with_the_servers_on_loopback_are_refused_before_anything_runs() {
    let dir = scratch("unreachable");
    let out = run(&[
        "--stacks".into(),
        "go/fasthttp".into(),
        "--scenarios".into(),
        "hello".into(),
        "--client".into(),
        "netns:bo-no-such-client".into(),
        "--db".into(),
        dir.join("r.db").display().to_string(),
    ]);
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("out of reach of the client netns:bo-no-such-client") && said.contains("--server-host netns:NAME"), "{said}");
    assert!(!said.contains("verified") && !said.contains("setup go/fasthttp"), "nothing was set up, verified or measured: {said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs go/fasthttp hello for 8 slices with `args` into `db`; once the third slice starts (the
/// first two are stored) kills the agent `agent` finds, by its pid, with SIGKILL. The run's exit
/// status, everything it printed, and the pid killed.
fn run_killing_at_third_slice(args: &[String], db: &Path, agent: impl FnOnce() -> u32) -> (std::process::ExitStatus, String, Option<u32>) {
    let mut child = Command::new(bin())
        .args(["run", "--stacks", "go/fasthttp", "--scenarios", "hello", "--trials", "8", "--duration", "1s", "--warmup", "500ms"])
        .args(["--no-ceiling", "--quiet"])
        .args(args)
        .arg("--db")
        .arg(db)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = channel::<String>();
    let readers: Vec<_> = [Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>, Box::new(child.stderr.take().unwrap())]
        .into_iter()
        .map(|r| {
            let tx = tx.clone();
            std::thread::spawn(move || BufReader::new(r).lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))))
        })
        .collect();
    drop(tx);
    let (mut lines, mut killed, mut agent) = (Vec::new(), None, Some(agent));
    let deadline = Instant::now() + Duration::from_secs(600);
    for line in rx.iter() {
        lines.push(line.clone());
        if let Some(find) = agent.take_if(|_| line.contains("(trial 3/8)")) {
            let pid = find();
            // SAFETY: kill(2) on the agent this test's run started, found in the test's namespace.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            killed = Some(pid);
        }
        assert!(Instant::now() < deadline, "the run did not end: {}", lines.join("\n"));
    }
    let status = child.wait().unwrap();
    readers.into_iter().for_each(|r| r.join().unwrap());
    (status, lines.join("\n"), killed)
}

/// After a host was lost at the third slice: its agent is gone, the run failed, its stored
/// status names the host (`place`) and the cell it was measuring, and the two slices measured
/// before are in the store.
fn ended_cleanly_keeping_two_slices(agent: u32, place: &str, status: std::process::ExitStatus, said: &str, db: &Path) {
    assert!(gone(agent, Duration::from_secs(1)));
    assert!(!status.success(), "a lost host fails the run: {said}");
    let report = report(db);
    let stored = report["status"].as_str().unwrap();
    assert!(stored.starts_with("failed: ") && stored.contains(place), "the stored status names the host: {stored}");
    assert!(stored.starts_with("failed: measuring go/fasthttp[sqlite] hello w1 stopped there"), "and the cell: {stored}");
    let trials: u64 =
        report["cells"].as_array().unwrap().iter().map(|c| c["metrics"]["error_percent"]["trials"].as_u64().unwrap_or(0)).sum();
    assert!(trials >= 2, "the trials measured before the loss are kept: {trials}\n{said}");
}

#[test]
fn a_client_host_lost_mid_run_ends_the_run_naming_it_and_keeps_what_was_measured() {
    if no_root("a_client_host_lost_mid_run_ends_the_run_naming_it_and_keeps_what_was_measured") {
        return;
    }
    let dir = scratch("lost");
    let topo = Topology::build(&["client", "server"]).expect("the topology builds");
    let client_ns = topo.ns("client").to_string();
    let db = dir.join("lost.db");
    let args: Vec<String> =
        ["--client".to_string(), format!("netns:{client_ns}"), "--server-host".into(), format!("netns:{}", topo.ns("server"))].into();
    let (status, said, killed) = run_killing_at_third_slice(&args, &db, || {
        let out = Command::new("ip").args(["netns", "pids", &client_ns]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().expect("the agent runs there").parse().unwrap()
    });
    nothing_inside(&topo, &[]);
    teardown(topo, None);
    let agent = killed.unwrap_or_else(|| panic!("no second trial was seen: {said}"));
    assert!(said.contains(&format!("netns:{client_ns}")), "the lost host is named: {said}");
    ended_cleanly_keeping_two_slices(agent, &format!("netns:{client_ns}"), status, &said, &db);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The server host's agent's pid: the bakeoff process of the namespace that runs `agent`.
fn agent_in(ns: &str) -> Option<u32> {
    let out = Command::new("ip").args(["netns", "pids", ns]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse::<u32>().ok()).find(|p| {
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        args.first().is_some_and(|a| a.ends_with(b"bakeoff")) && args.contains(&&b"agent"[..])
    })
}

#[test]
fn a_server_host_lost_mid_run_ends_the_run_naming_it_keeps_what_was_measured_and_leaves_nothing() {
    if no_root("a_server_host_lost_mid_run_ends_the_run_naming_it_keeps_what_was_measured_and_leaves_nothing") {
        return;
    }
    let topo = Topology::build(&["server"]).expect("the topology builds");
    let sshd = Sshd::start(topo.ns("server"), topo.addr("server")).expect("sshd starts");
    let dir = scratch("server-lost");
    let server_ns = topo.ns("server").to_string();
    let place = format!("ssh://root@{}", topo.addr("server"));
    let db = dir.join("lost.db");
    let mut args: Vec<String> = vec!["--server-host".into(), place.clone()];
    args.extend(ssh_flags(&sshd));
    // The server host's agent is killed outright: it cannot stop the server it started.
    let (status, said, killed) =
        run_killing_at_third_slice(&args, &db, || agent_in(&server_ns).expect("the server host's agent runs there"));
    nothing_inside(&topo, &[sshd.pid()]);
    teardown(topo, Some(sshd));
    let agent = killed.unwrap_or_else(|| panic!("no third slice was seen: {said}"));
    assert!(said.contains(&place.replace("ssh://", "")), "the lost host is named: {said}");
    assert!(said.contains("a new session stopped"), "what the lost agent left was stopped by a new session: {said}");
    ended_cleanly_keeping_two_slices(agent, &place.replace("ssh://", ""), status, &said, &db);
    let _ = std::fs::remove_dir_all(&dir);
}
