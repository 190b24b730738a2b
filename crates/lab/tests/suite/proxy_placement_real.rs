//! Proxy placement on real servers: with `own-cpu` the upstream nginx runs on the client's CPUs and
//! the proxy alone on the server's; with `shared` both on the server's. Read back from the kernel
//! (each process's allowed CPUs), after a real trial of the baseline and a proxy.

use crate::common;

use bakeoff_lab::run::cells::{plan, WorkerCounts};
use bakeoff_model::records::results::MemorySink;
use bakeoff_model::scenario::Scenario;
use bakeoff_model::study::ProxyPlacement;
use common::*;

/// The CPUs the kernel lets `pid` run on (`Cpus_allowed_list`, e.g. "0" or "0-1").
fn allowed(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string()
}

fn list(cpus: &[usize]) -> String {
    cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}

/// Runs one short trial of the baseline and go/iocopy; returns (nginx's CPUs, server CPUs, client CPUs).
fn nginx_cpus(placement: ProxyPlacement) -> (String, String, String) {
    let root = project_root();
    let catalog = bakeoff_lab::stacks::catalog::discover(&root.join("stacks"));
    let stacks: Vec<_> = ["c/baseline", "go/iocopy"].iter().map(|n| catalog.stacks.iter().find(|s| s.name == *n).unwrap()).collect();
    for s in &stacks {
        if let Some(job) = bakeoff_lab::stacks::setup::SetupJob::for_stack(s) {
            bakeoff_lab::stacks::setup::run(&job, &root, false).unwrap();
        }
    }
    let scratch = Scratch::new(&format!("placement-{placement}"));
    let mut sink = MemorySink::default();
    let mut events = ignore;
    let mut lab = lab(&scratch, &mut sink, &mut events);
    lab.bench.settings_mut().proxy_placement = placement;
    lab.bench.settings_mut().duration = std::time::Duration::from_secs(1);
    let cells = plan(&stacks, Some(&[Scenario::Proxy]), None, &WorkerCounts::same(&[1])).unwrap();
    let run = common::run_info(&format!("placement-{placement}"));
    let outcome = lab.run(&run, &cells).unwrap();
    assert!(outcome.failed_cells.is_empty(), "{:?}", outcome.failed_cells);
    let nginx = lab.bench.services().nginx.as_ref().expect("nginx ran for the proxy cells").pid();
    let got = (allowed(nginx), list(&lab.bench.settings().server_cpus), list(&lab.bench.settings().client_cpus));
    drop(lab);
    assert!(sink.trials.iter().all(|t| t.load.steps.iter().all(|s| s.requests > 0)), "every cell was measured");
    got
}

#[test]
fn own_cpu_puts_nginx_beside_the_load_generator_and_shared_beside_the_proxy() {
    let (server, client) = bakeoff_lab::machine::provenance::default_cpu_split();
    if server == client || server.is_empty() || client.is_empty() {
        eprintln!("one CPU set only: placement cannot differ here");
        return;
    }
    let (nginx, _, client_list) = nginx_cpus(ProxyPlacement::OwnCpu);
    assert_eq!(nginx, normalise(&client_list), "own-cpu: nginx on the client's CPUs");
    let (nginx, server_list, _) = nginx_cpus(ProxyPlacement::Shared);
    assert_eq!(nginx, normalise(&server_list), "shared: nginx on the server's CPUs");
}

/// The kernel prints ranges ("0-1"); a comma list of consecutive CPUs is the same set.
fn normalise(list: &str) -> String {
    let cpus: Vec<usize> = list.split(',').map(|c| c.parse().unwrap()).collect();
    match cpus.as_slice() {
        [one] => one.to_string(),
        [first, .., last] if last - first + 1 == cpus.len() => format!("{first}-{last}"),
        _ => list.to_string(),
    }
}
