//! Load clients on hosts of their own, on this one machine: network namespaces for two clients and a
//! server, an sshd inside one client namespace (`ssh://`) and `ip netns exec` for the other
//! (`netns:`). Checks the merged histogram is exactly the sum of the clients' own, that a client
//! killed mid-run is an error naming it with nothing left behind, and that a host without the
//! binary, with another build or unreachable is refused with the fix; and, through `bakeoff load`,
//! that the server's host measures the server (CPU, memory), every host says what it is, the path is
//! measured before the load, and a wrong server pid is refused before it. Namespaces need root:
//! without it the namespace tests print SKIPPED and pass.

use crate::hosts_lab;

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use bakeoff_lab::remote::clients::ClientSet;
use bakeoff_lab::remote::measured::{run_measured, ServerPlacement};
use bakeoff_lab::remote::netns::Topology;
use bakeoff_lab::remote::protocol::Identity;
use bakeoff_lab::remote::session::{Session, SessionOptions};
use bakeoff_lab::remote::HostError;
use bakeoff_load::{decode_histogram, Histogram, LoadPlan};
use bakeoff_model::plan::place::Place;
use hosts_lab::{bin, gone, no_root, Lab, Nginx};

fn every_value(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
}

#[test]
fn two_clients_merge_to_exactly_the_union_of_their_values() {
    if no_root("two_clients_merge_to_exactly_the_union_of_their_values") {
        return;
    }
    let lab = Lab::new();
    let mut set = ClientSet::open(&lab.places(), &lab.options(), &bakeoff_cli::identity()).expect("both sessions open");
    let pids: Vec<u32> = set.sessions().iter().map(|s| s.hello().pid).collect();
    for s in set.sessions() {
        assert!(s.clock().bound_ns < 5_000_000, "{}: clock bound {} ns", s.host(), s.clock().bound_ns);
    }
    let plan = LoadPlan::builder(&lab.url()).connections(4).duration(Duration::from_secs(2)).build().unwrap();
    let run = set.run(&plan, &AtomicBool::new(false)).expect("the load runs from both clients");

    let merged_step = &run.merged.report.steps[0];
    let merged = decode_histogram(&merged_step.histogram).unwrap();
    // The union of what each client recorded, from the histograms each one sent.
    let mut union: Option<Histogram<u64>> = None;
    for c in &run.clients {
        let step = &c.output.report.steps[0];
        assert!(step.requests > 100, "{} measured only {} responses", c.host, step.requests);
        assert_eq!(step.connections, 2, "{} ran its half of the connections", c.host);
        let h = decode_histogram(&step.histogram).unwrap();
        match &mut union {
            Some(u) => u.add(&h).unwrap(),
            None => union = Some(h),
        }
    }
    let union = union.unwrap();
    assert_eq!(every_value(&merged), every_value(&union), "the merged histogram differs from the union value by value");
    for v in union.iter_recorded() {
        assert_eq!(merged.count_at(v.value_iterated_to()), v.count_at_value());
    }
    for q in [0.5, 0.99, 0.999] {
        assert_eq!(merged.value_at_quantile(q), union.value_at_quantile(q), "quantile {q}");
    }
    assert_eq!(merged_step.latency.p50_us, union.value_at_quantile(0.5) as f64);
    assert_eq!(merged_step.latency.p99_us, union.value_at_quantile(0.99) as f64);
    assert_eq!(merged_step.latency.p999_us, union.value_at_quantile(0.999) as f64);
    assert_eq!(merged_step.requests, run.clients.iter().map(|c| c.output.report.steps[0].requests).sum::<u64>());
    assert_eq!(merged_step.latency.count, merged_step.requests, "every response is a sample");
    assert_eq!(merged_step.errors.total(), 0);

    // The open model: the rate is split, and service times add up as exactly as latencies.
    let open = LoadPlan::builder(&lab.url()).connections(4).rate(400.0).duration(Duration::from_secs(2)).build().unwrap();
    let run = set.run(&open, &AtomicBool::new(false)).expect("the open-model load runs from both clients");
    let step = &run.merged.report.steps[0];
    assert_eq!(step.target_rate, Some(400.0));
    assert!(run.clients.iter().all(|c| c.output.report.steps[0].target_rate == Some(200.0)));
    let service = |o: &bakeoff_load::RunOutput| o.details[0].service.clone().expect("an open model records service times");
    let mut union = service(&run.clients[0].output);
    union.add(service(&run.clients[1].output)).unwrap();
    assert_eq!(every_value(&service(&run.merged)), every_value(&union), "merged service times differ from the union");
    assert_eq!(step.service_time.as_ref().unwrap().p99_us, union.value_at_quantile(0.99) as f64);
    assert!(step.requests > 600, "{} responses at 400/s for 2 s", step.requests);

    // A rate ramp and a connection ladder: each client runs its share of every step, and each
    // merged step is named as the whole load's and holds exactly the union of that step's values.
    let ramp = bakeoff_load::Ramp::parse("200:200:1s:400").unwrap();
    let ramp = LoadPlan::builder(&lab.url()).connections(4).ramp(ramp).build().unwrap();
    let run = set.run(&ramp, &AtomicBool::new(false)).expect("the ramp runs from both clients");
    steps_merge_exactly(&run, &["rate 200/s", "rate 400/s"]);
    for (step, whole) in run.merged.report.steps.iter().zip([200.0, 400.0]) {
        assert_eq!(step.target_rate, Some(whole), "{}", step.label);
    }
    assert!(run.clients.iter().all(|c| c.output.report.steps[1].target_rate == Some(200.0)), "each client ran half the rate");
    let ladder = LoadPlan::builder(&lab.url()).connections(2).threads(1).conn_ladder(vec![2, 6]).duration(Duration::from_secs(1));
    let run = set.run(&ladder.build().unwrap(), &AtomicBool::new(false)).expect("the ladder runs from both clients");
    steps_merge_exactly(&run, &["2 connections", "6 connections"]);
    let connections: Vec<u32> = run.merged.report.steps.iter().map(|s| s.connections).collect();
    assert_eq!(connections, [2, 6]);
    assert!(run.clients.iter().all(|c| c.output.report.steps[1].connections == 3), "each client ran half the connections");

    let run = set.run(&deck_plan(&lab.url()), &AtomicBool::new(false)).expect("the deck runs from both clients");
    set.close();
    kinds_merge_exactly(&run);
    lab.finish(&pids);
}

/// A request deck of two kinds, `b`'s check one the server fails (it answers 200, not 201), so
/// that a check that did not reach the clients shows.
fn deck_plan(url: &str) -> LoadPlan {
    let mut b = bakeoff_load::DeckEntry::get(1, "/b?x=1");
    b.checks.expect_status = Some(201);
    let mut a = bakeoff_load::DeckEntry::get(0, "/a");
    a.checks.expect_length = Some(12);
    let entries = vec![a.clone(), b, a];
    let deck = bakeoff_load::Deck { kinds: vec!["a".into(), "b".into()], entries, login: None };
    LoadPlan::builder(url).connections(4).deck(deck).duration(Duration::from_secs(1)).build().unwrap()
}

/// Every kind of the merged step holds the clients' responses and errors summed and exactly the
/// union of their values; each client ran the deck's checks and mix.
fn kinds_merge_exactly(run: &bakeoff_lab::remote::clients::MergedRun) {
    let merged = &run.merged.report.steps[0].kinds;
    assert_eq!(merged.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    for (i, kind) in merged.iter().enumerate() {
        let of_clients: Vec<&bakeoff_load::KindReport> = run.clients.iter().map(|c| &c.output.report.steps[0].kinds[i]).collect();
        assert!(of_clients.iter().all(|k| k.name == kind.name && k.requests > 20), "{of_clients:?}");
        assert_eq!(kind.requests, of_clients.iter().map(|k| k.requests).sum::<u64>(), "kind {}", kind.name);
        assert_eq!(kind.errors.total(), of_clients.iter().map(|k| k.errors.total()).sum::<u64>(), "kind {}", kind.name);
        let mut union = decode_histogram(&of_clients[0].histogram).unwrap();
        union.add(decode_histogram(&of_clients[1].histogram).unwrap()).unwrap();
        assert_eq!(every_value(&decode_histogram(&kind.histogram).unwrap()), every_value(&union), "kind {}", kind.name);
    }
    let (a, b) = (&merged[0], &merged[1]);
    assert_eq!(a.errors.total(), 0, "{:?}", a.errors);
    assert_eq!(b.errors.total(), b.requests, "every `b` failed the check the clients were sent: {:?}", b.errors);
    assert!(a.requests > b.requests, "the deck's mix, two `a` to one `b`: {} and {}", a.requests, b.requests);
}

/// Every merged step of `run` is labelled as `labels` says and holds exactly the union of what the
/// clients recorded in that step, with their requests summed.
fn steps_merge_exactly(run: &bakeoff_lab::remote::clients::MergedRun, labels: &[&str]) {
    let merged = &run.merged.report.steps;
    assert_eq!(merged.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), labels);
    for (i, step) in merged.iter().enumerate() {
        let mut union = decode_histogram(&run.clients[0].output.report.steps[i].histogram).unwrap();
        for c in &run.clients[1..] {
            union.add(decode_histogram(&c.output.report.steps[i].histogram).unwrap()).unwrap();
        }
        assert_eq!(every_value(&decode_histogram(&step.histogram).unwrap()), every_value(&union), "step {}", step.label);
        assert_eq!(step.requests, run.clients.iter().map(|c| c.output.report.steps[i].requests).sum::<u64>(), "step {}", step.label);
        assert!(step.requests > 0 && step.errors.total() == 0, "step {}: {:?}", step.label, step.errors);
    }
}

#[test]
fn a_client_killed_mid_run_is_an_error_naming_it_and_nothing_is_left() {
    if no_root("a_client_killed_mid_run_is_an_error_naming_it_and_nothing_is_left") {
        return;
    }
    let lab = Lab::new();
    let places = lab.places();
    let mut set = ClientSet::open(&places, &lab.options(), &bakeoff_cli::identity()).expect("both sessions open");
    let pids: Vec<u32> = set.sessions().iter().map(|s| s.hello().pid).collect();
    let victim = pids[1];
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1200));
        // The netns agent this test started, by the pid its hello gave.
        let _ = Command::new("kill").args(["-KILL", &victim.to_string()]).status();
    });
    let plan = LoadPlan::builder(&lab.url()).connections(4).duration(Duration::from_secs(4)).build().unwrap();
    let started = Instant::now();
    let err = set.run(&plan, &AtomicBool::new(false)).expect_err("a killed client fails the run");
    killer.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "the loss was noticed only after {:?}", started.elapsed());
    let text = err.to_string();
    assert!(matches!(err, HostError::SessionLost { .. }), "{text}");
    assert!(text.contains(&places[1].host_name()) && text.contains("signal 9"), "{text}");
    // The other client's session was closed: its agent over ssh has exited.
    assert!(gone(pids[0], Duration::from_secs(3)), "the ssh client's agent {} still runs", pids[0]);
    drop(set);
    lab.finish(&pids);
}

/// `bakeoff load` from both clients of `lab`, the server's host given with `server_pid`.
fn load_measured(lab: &Lab, server_pid: u32, extra: &[&str]) -> std::process::Output {
    let places: Vec<String> = lab.places().iter().map(|p| p.to_string()).collect();
    let server = format!("netns:{}", lab.topo.ns("server"));
    let mut cmd = Command::new(bin());
    cmd.arg("load");
    for p in &places {
        cmd.args(["--client", p]);
    }
    cmd.arg("--ssh-identity").arg(lab.sshd.identity()).arg("--ssh-known-hosts").arg(lab.sshd.known_hosts());
    cmd.args(["--server-host", &server, "--server-pid", &server_pid.to_string(), "-c", "4"]);
    cmd.args(extra).arg(lab.url()).stdin(Stdio::null()).output().expect("bakeoff load runs")
}

/// Processes left in `ns` besides `except` (the test's own server and sshd), after a moment.
fn left_in(ns: &str, except: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = left_in_now(ns, except);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Processes in `ns` besides `except`, now.
fn left_in_now(ns: &str, except: &[u32]) -> Vec<u32> {
    let out = Command::new("ip").args(["netns", "pids", ns]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse().ok()).filter(|p| !except.contains(p)).collect()
}

fn f64_at(v: &serde_json::Value, path: &str) -> f64 {
    v.pointer(path).and_then(serde_json::Value::as_f64).unwrap_or_else(|| panic!("{path} missing in {v:#}"))
}

#[test]
fn the_server_host_measures_its_server_and_every_host_and_path_is_reported() {
    if no_root("the_server_host_measures_its_server_and_every_host_and_path_is_reported") {
        return;
    }
    let lab = Lab::new();
    let out = load_measured(&lab, lab.server.0.id(), &["-d", "2s", "--json"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let requests = f64_at(&v, "/hosts/server/requests");
    assert!(requests > 100.0 && requests == f64_at(&v, "/steps/0/requests"), "{requests} requests");
    let cpu_s = f64_at(&v, "/hosts/server/measure/cpu_s");
    let per_request = f64_at(&v, "/hosts/server/cpu_us_per_request");
    let peak_rss = f64_at(&v, "/hosts/server/measure/peak_rss_bytes");
    println!("MEASURED server CPU {cpu_s:.3} s, {per_request:.1} us per request, peak RSS {peak_rss} bytes");
    assert!(cpu_s > 0.0, "{cpu_s}");
    assert!((1.0..10_000.0).contains(&per_request), "{per_request} us of server CPU per request");
    assert!(peak_rss > 1024.0 * 1024.0, "{peak_rss}");
    let hosts = v.pointer("/hosts/hosts").and_then(|h| h.as_array()).expect("hosts");
    let roles: Vec<&str> = hosts.iter().map(|h| h["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["client", "client", "server"]);
    for h in hosts {
        let m = &h["facts"]["machine"];
        assert!(!m["cpu_model"].as_str().unwrap().is_empty() && !m["kernel"].as_str().unwrap().is_empty(), "{h:#}");
        assert!(m["cores"].as_u64().unwrap() >= 1 && !h["facts"]["cpuset"].as_array().unwrap().is_empty(), "{h:#}");
        assert!(h["facts"].get("governor").is_some() && h["noise"]["wall_s"].as_f64().unwrap() > 0.0, "{h:#}");
        let bound = f64_at(h, "/clock/bound_ns");
        assert!(h["clock"]["offset_ns"].is_i64() && bound > 0.0 && bound < 5e6, "{h:#}");
    }
    let paths = v.pointer("/hosts/paths").and_then(|p| p.as_array()).expect("paths");
    assert_eq!(paths.len(), 2);
    for p in paths {
        let (rtt, ceiling) = (f64_at(p, "/measure/rtt_median_us"), f64_at(p, "/measure/ceiling_bytes_per_s"));
        println!("MEASURED path from {}: RTT {rtt:.0} us, ceiling {:.0} MB/s", p["from"], ceiling / 1e6);
        assert!(rtt > 0.0 && rtt < 10_000.0, "{p:#}");
        assert!(ceiling > 10e6, "{p:#}");
    }
    println!("{stderr}");
    for block in ["Server on netns:", "What ran:", "Path to ", "us per request"] {
        assert!(stderr.contains(block), "`{block}` missing from:\n{stderr}");
    }
    let keep = [lab.server.0.id(), lab.sshd.pid()];
    for role in ["client-a", "client-b", "server"] {
        assert_eq!(left_in(lab.topo.ns(role), &keep), Vec::<u32>::new(), "left running in {role}");
    }
    lab.finish(&[]);
}

#[test]
fn a_wrong_server_pid_is_refused_before_the_load_with_the_host_and_the_fix() {
    if no_root("a_wrong_server_pid_is_refused_before_the_load_with_the_host_and_the_fix") {
        return;
    }
    let lab = Lab::new();
    let started = Instant::now();
    // No pid this large exists (pid_max is at most 2^22).
    let out = load_measured(&lab, 999_999_999, &["-d", "30s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10), "refused only after {:?}", started.elapsed());
    let host = format!("netns:{}", lab.topo.ns("server"));
    assert!(stderr.contains(&format!("host {host} has no server process 999999999")), "{stderr}");
    assert!(stderr.contains("--server-pid") && stderr.contains(&format!("ip netns pids {}", lab.topo.ns("server"))), "{stderr}");
    let keep = [lab.server.0.id(), lab.sshd.pid()];
    for role in ["client-a", "client-b", "server"] {
        assert_eq!(left_in(lab.topo.ns(role), &keep), Vec::<u32>::new(), "left running in {role}");
    }
    lab.finish(&[]);
}

/// The pid of the agent in `ns` once its watch thread runs (the load has started), within `limit`.
fn watching_agent(ns: &str, except: &[u32], limit: Duration) -> Option<u32> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        for pid in left_in_now(ns, except) {
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
            if tasks.filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok()).any(|c| c.trim() == "bakeoff-watch") {
                return Some(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn a_server_host_lost_during_the_load_keeps_the_load_and_names_the_host() {
    if no_root("a_server_host_lost_during_the_load_keeps_the_load_and_names_the_host") {
        return;
    }
    let lab = Lab::new();
    let ns = lab.topo.ns("server").to_string();
    let keep = [lab.server.0.id(), lab.sshd.pid()];
    let killer = std::thread::spawn(move || {
        let agent = watching_agent(&ns, &keep, Duration::from_secs(20)).expect("the server's agent watches");
        std::thread::sleep(Duration::from_millis(500));
        // The server host's agent this test's load started, found by its pid in the test's namespace.
        let _ = Command::new("kill").args(["-KILL", &agent.to_string()]).status();
    });
    let out = load_measured(&lab, lab.server.0.id(), &["-d", "2s", "--json"]);
    killer.join().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert!(f64_at(&v, "/steps/0/requests") > 100.0, "the load's results are kept");
    assert!(v["hosts"]["server"].is_null(), "{:#}", v["hosts"]);
    let lost = v["hosts"]["server_lost"].as_str().expect("server_lost");
    assert!(lost.contains(&format!("netns:{}", lab.topo.ns("server"))) && lost.contains("signal 9"), "{lost}");
    assert!(stderr.contains("Server not measured: "), "{stderr}");
    for role in ["client-a", "client-b", "server"] {
        assert_eq!(left_in(lab.topo.ns(role), &keep), Vec::<u32>::new(), "left running in {role}");
    }
    lab.finish(&[]);
}

#[test]
fn an_unusable_host_is_refused_before_anything_runs_with_the_fix() {
    if no_root("an_unusable_host_is_refused_before_anything_runs_with_the_fix") {
        return;
    }
    let lab = Lab::new();
    let me = bakeoff_cli::identity();
    let ssh = lab.places()[0].clone();
    let open = |place: &Place, opts: &SessionOptions| Session::open(place, opts, &me).err().expect("the session is refused").to_string();

    let mut missing = lab.options();
    missing.agent_bin = "/nonexistent/bakeoff".into();
    let e = open(&ssh, &missing);
    assert!(e.contains("no bakeoff binary at /nonexistent/bakeoff") && e.contains(&ssh.host_name()) && e.contains("scp -P 22"), "{e}");

    let mut wrong_key = lab.options();
    wrong_key.ssh_identity = Some(lab.sshd.known_hosts().with_file_name("host_key"));
    let e = open(&ssh, &wrong_key);
    assert!(e.contains("refused the login") && e.contains("authorized_keys"), "{e}");

    let no_sshd = Place::Ssh { user: "root".into(), host: lab.topo.addr("server").to_string(), port: 22 };
    let e = open(&no_sshd, &lab.options());
    assert!(e.contains("unreachable") && e.contains(&no_sshd.host_name()), "{e}");

    let e = open(&Place::Netns("bo-no-such-namespace".into()), &lab.options());
    assert!(e.contains("netns:bo-no-such-namespace") && e.contains("ip netns add"), "{e}");
    lab.finish(&[]);
}

#[test]
fn another_build_or_no_binary_is_refused_with_the_command_that_fixes_it() {
    let other = Identity { version: "0.0.9".into(), commit: "0123abc".into() };
    let opts = SessionOptions::new(bin());
    let e = Session::open(&Place::Local, &opts, &other).err().expect("another build is refused");
    let text = e.to_string();
    assert!(matches!(e, HostError::VersionMismatch { .. }), "{text}");
    assert!(text.contains("host local runs bakeoff 0.1.0") && text.contains("0.0.9 (commit 0123abc)") && text.contains("`cp "), "{text}");

    let missing = SessionOptions::new("/nonexistent/bakeoff");
    let e = Session::open(&Place::Local, &missing, &bakeoff_cli::identity()).err().expect("a missing binary is refused");
    assert!(matches!(e, HostError::MissingBinary { .. }) && e.to_string().contains("/nonexistent/bakeoff"), "{e}");
    assert!(Path::new(bin()).exists());
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn figure(name: &str, v: Vec<f64>) {
    let (lo, hi) = (v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(0.0, f64::max));
    println!("BENCH {name} median {:.6} min {lo:.6} max {hi:.6} n {}", median(v.clone()), v.len());
}

/// The controller's overhead and the veth against loopback; bench/hosts.sh runs it and keeps the
/// `BENCH` lines it prints.
#[test]
#[ignore = "a bench, run by bench/hosts.sh"]
fn bench_hosts() {
    if no_root("bench_hosts") {
        return;
    }
    let setups: Vec<f64> = (0..5)
        .map(|_| {
            let t0 = Instant::now();
            let t = Topology::build(&["client-a", "client-b", "server"]).unwrap();
            let s = t0.elapsed().as_secs_f64();
            drop(t);
            s
        })
        .collect();
    figure("topology_setup_s", setups);
    let lab = Lab::new();
    let me = bakeoff_cli::identity();
    let (opts, places) = (lab.options(), lab.places());
    for (name, place) in [("ssh", &places[0]), ("netns", &places[1])] {
        let opens = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                let s = Session::open(place, &opts, &me).unwrap();
                let e = t0.elapsed().as_secs_f64();
                s.close();
                e
            })
            .collect();
        figure(&format!("session_open_s {name}"), opens);
        let mut s = Session::open(place, &opts, &me).unwrap();
        let trips = (0..100)
            .map(|_| {
                let t0 = Instant::now();
                s.clock_call().unwrap();
                t0.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        figure(&format!("agent_round_trip_us {name}"), trips);
        println!("BENCH clock_offset_us {name} {:+.1} bound {:.1}", s.clock().offset_ns as f64 / 1e3, s.clock().bound_ns as f64 / 1e3);
        s.close();
    }
    let port = 18089;
    let nginx = Nginx::start(&[Ipv4Addr::LOCALHOST, lab.topo.controller_addr()], port);
    let netns = Place::Netns(lab.topo.ns("client-b").to_string());
    let ssh = places[0].clone();
    let (mut local_rps, mut veth_rps, mut ssh_rps) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..3 {
        // The ssh client crosses the same kind of veth as the netns one: their ratio is what the
        // ssh session costs the load (nothing on the request path, only the start and the reply).
        for (place, addr, into) in [
            (&Place::Local, Ipv4Addr::LOCALHOST, &mut local_rps),
            (&netns, lab.topo.controller_addr(), &mut veth_rps),
            (&ssh, lab.topo.controller_addr(), &mut ssh_rps),
        ] {
            let plan =
                LoadPlan::builder(&format!("http://{addr}:{port}/")).connections(16).duration(Duration::from_secs(2)).build().unwrap();
            // nginx measured by the controller's own agent (`local`), the path probed before each load.
            let server = ServerPlacement { place: Place::Local, pid: nginx.0.id() };
            let m = run_measured(std::slice::from_ref(place), Some(&server), &plan, &opts, &me, &AtomicBool::new(false)).unwrap();
            let step = &m.run.merged.report.steps[0];
            assert_eq!(step.errors.total(), 0, "{place}: {:?}", step.errors);
            println!("BENCH round {round} {place} {:.0} req/s p50 {} us", step.requests_per_sec, step.latency.p50_us);
            let (path, nginx_cpu) = (&m.hosts.paths[0].measure, m.hosts.server.as_ref().map_or(0.0, |s| s.cpu_us_per_request));
            let (ceiling, back) = (path.ceiling_bytes_per_s.unwrap_or(0.0) / 1e6, path.ceiling_back_bytes_per_s.unwrap_or(0.0) / 1e6);
            println!(
                "BENCH path {place} rtt_us {:.1} ceiling_mb_s {ceiling:.0} back_mb_s {back:.0} server_cpu_us_per_request {nginx_cpu:.2}",
                path.rtt_median_us
            );
            into.push(step.requests_per_sec);
        }
    }
    println!(
        "BENCH load_rps local median {:.0} netns median {:.0} ratio_veth_over_loopback {:.3}",
        median(local_rps.clone()),
        median(veth_rps.clone()),
        median(veth_rps.clone()) / median(local_rps)
    );
    println!(
        "BENCH ssh_rps ssh median {:.0} netns median {:.0} ratio_ssh_over_netns {:.3}",
        median(ssh_rps.clone()),
        median(veth_rps.clone()),
        median(ssh_rps) / median(veth_rps)
    );
    drop(nginx);
    lab.finish(&[]);
}
