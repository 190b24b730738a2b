//! A server host reached over ssh, on this one machine: an sshd inside a network namespace of its
//! own. The controller makes the project's workspace there (sent once, found again by the next
//! session), sets a stack up there with `bakeoff setup --host` and refuses an unknown one naming it, starts a server there that answers
//! over the link, meters its tree while it is loaded, stops it with nothing left, and a session
//! that ends with a server still running stops it too. Namespaces need root: without it the test
//! prints SKIPPED and passes.

#[allow(dead_code)]
use crate::hosts_lab;

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bakeoff_lab::remote::netns::Topology;
use bakeoff_lab::remote::servers::RemoteServers;
use bakeoff_lab::remote::session::SessionOptions;
use bakeoff_lab::remote::sshd::Sshd;
use bakeoff_lab::remote::started::RemoteLaunch;
use bakeoff_lab::remote::HostError;
use bakeoff_load::LoadPlan;
use bakeoff_model::plan::place::Place;
use hosts_lab::{bin, gone, no_root};

const PORT: u16 = 8090;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The hosts' keep-alive test server, started in the workspace's scenarios folder on the host; its
/// log in `logs` (a folder the agent makes).
fn http_server(servers: &RemoteServers, ip: &str, logs: &Path) -> RemoteLaunch {
    let env = BTreeMap::from([
        ("HOST".to_string(), ip.to_string()),
        ("PORT".to_string(), PORT.to_string()),
        ("SERVER_PY".to_string(), hosts_lab::SERVER.to_string()),
    ]);
    RemoteLaunch {
        name: "test/http-server".into(),
        command: "exec python3 -c \"$SERVER_PY\" \"$HOST\" \"$PORT\"".into(),
        dir: servers.path_of(&root(), &root().join("scenarios")).unwrap(),
        env,
        cpus: Vec::new(),
        log: logs.join("server.log").display().to_string(),
        copies: Vec::new(),
        port_var: None,
    }
}

fn wait_answering(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
        assert!(Instant::now() < deadline, "the server started on the host did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_server_host_gets_the_workspace_once_and_starts_meters_and_stops_servers_there() {
    if no_root("a_server_host_gets_the_workspace_once_and_starts_meters_and_stops_servers_there") {
        return;
    }
    let topo = Topology::build(&["server"]).expect("the topology builds");
    let sshd = Sshd::start(topo.ns("server"), topo.addr("server")).expect("sshd starts");
    let ip = topo.addr("server").to_string();
    let place = Place::Ssh { user: "root".into(), host: ip.clone(), port: 22 };
    let mut opts = SessionOptions::new(bin());
    opts.ssh_identity = Some(sshd.identity());
    opts.ssh_known_hosts = Some(sshd.known_hosts());
    let identity = bakeoff_cli::identity();

    let mut servers = RemoteServers::open(&place, &opts, &identity, &root()).expect("the session opens and the workspace is made");
    assert!(Path::new(servers.root()).join("stacks/rust/actix/stack.toml").is_file(), "the stacks are in {}", servers.root());
    let again = RemoteServers::open(&place, &opts, &identity, &root()).expect("a second session opens");
    assert_eq!(again.root(), servers.root(), "the same files, the same workspace");
    assert!(!again.sent_files(), "the host had the files: nothing was sent again");
    again.close();
    // `bakeoff setup --host`: the files are there already; a stack with nothing to build is set up,
    // an unknown one refused naming the host and the stack.
    let setup = |stack: &str| {
        let mut cmd = std::process::Command::new(bin());
        cmd.args(["setup", "--quiet", "--host", &format!("ssh://root@{ip}:22"), "--agent-bin", bin()]);
        cmd.arg("--ssh-identity").arg(sshd.identity()).arg("--ssh-known-hosts").arg(sshd.known_hosts()).arg(stack);
        cmd.current_dir(root()).output().expect("bakeoff setup runs")
    };
    let ok = setup("c/baseline");
    let said = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success() && said.contains("already there") && said.contains("set up: c/baseline"), "{said}");
    let refused = setup("nosuch/stack");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(said.contains(&ip) && said.contains("nosuch/stack"), "{said}");
    match servers.setup(&["nosuch/stack".to_string()], &std::sync::atomic::AtomicBool::new(false)) {
        Err(HostError::Agent { host, message, .. }) => {
            assert!(host.contains(&ip) && message.contains("nosuch/stack"), "{host}: {message}")
        }
        other => panic!("an unknown stack's setup must be refused naming it: {other:?}"),
    }

    let logs = std::env::temp_dir().join(format!("bakeoff-server-host-{}", std::process::id()));
    let addr = SocketAddr::new(topo.addr("server").into(), PORT);
    let (pid, _) = servers.start(http_server(&servers, &ip, &logs.join("first"))).expect("the server starts on the host");
    wait_answering(addr);
    let before = servers.tree(pid).unwrap();
    let plan = LoadPlan::builder(&format!("http://{addr}/")).connections(2).duration(Duration::from_secs(1)).build().unwrap();
    let load = bakeoff_load::run(&plan).expect("the load runs over the link");
    assert!(load.steps[0].requests > 50, "{} answers", load.steps[0].requests);
    let after = servers.tree(pid).unwrap();
    assert!(after.cpu_s > before.cpu_s + 0.05 && after.exited.is_none(), "its tree's CPU grew under load: {before:?} -> {after:?}");
    assert_eq!(servers.quiet(pid, Duration::from_millis(200), Duration::from_secs(10)).unwrap(), None, "it goes quiet after the load");
    assert_eq!(servers.stop(pid).unwrap(), Vec::<String>::new(), "nothing of it runs outside its group");
    assert!(gone(pid, Duration::from_secs(3)), "the stopped server is gone");
    assert!(servers.tree(pid).is_err(), "a stopped server is no longer the session's");

    let (orphan, _) = servers.start(http_server(&servers, &ip, &logs.join("second"))).expect("a second server starts");
    wait_answering(addr);
    servers.close();
    assert!(gone(orphan, Duration::from_secs(5)), "the session's end stops the server it left running");
    let names = topo.namespaces();
    drop(sshd);
    drop(topo);
    let listed = String::from_utf8(std::process::Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).unwrap();
    assert!(names.iter().all(|n| !listed.contains(n.as_str())), "a namespace is left: {listed}");
    assert!(logs.join("first/server.log").is_file(), "the server's log is where it was asked to be");
    std::fs::remove_dir_all(&logs).unwrap();
}
